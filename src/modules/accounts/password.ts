import { createHash, createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ApiError } from '../../http/errors.js';

const N = 16384;
const R = 8;
const P = 1;
const KEY_LEN = 32;

/**
 * Bounds the password checks (scrypt derivations) under way at once. Each takes tens of
 * milliseconds of a core and 16 MB, on libuv's four threads: a burst of anonymous sign-ins would
 * otherwise queue there without bound, pin the CPU and starve every other request. One derivation a core runs; a few
 * more wait their turn; past that a caller is answered at once with 503 `server_busy` (and
 * `retry_after`) rather than after a long wait.
 */
export class HashGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly maxRunning: number,
    readonly maxWaiting: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxRunning) {
      if (this.waiting.length >= this.maxWaiting) {
        throw new ApiError('server_busy', { data: { retry_after: 1 } });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await work();
    } finally {
      // The slot passes straight to the next waiter, or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

export const hashGate = new HashGate(Math.max(2, availableParallelism()), 16);

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LEN, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$salt$key`, parameters stored so they can be raised later without breaking old hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  // Not gated: a new password is hashed for an account being made (by an administrator, or by a
  // checkout that the checkout rate limits already bound), never for a guess.
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * A hash that no password matches, for an account made without one (a guest's at checkout, who sets
 * a password through the "set your password" mail). It has the shape of `hashPassword`'s, with a
 * random key that was derived from nothing, so checking a password against it costs the same
 * derivation (no timing oracle for such accounts) and fails; deriving a hash of a random password
 * instead cost a submit tens of milliseconds of a core (76 ms measured) for a password nobody ever knew
 * (docs/performance.md, 'The checkout submit').
 */
export function unusableHash(): string {
  return `scrypt$${N}$${R}$${P}$${randomBytes(16).toString('base64')}$${randomBytes(KEY_LEN).toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (isImportedHash(stored)) return hashGate.run(() => verifyImported(password, stored));
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  // Gated: checking a password is what anyone can ask for, as often as they like.
  const actual = await hashGate.run(() =>
    derive(password, Buffer.from(salt, 'base64'), Number(n), Number(r), Number(p)),
  );
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

// ---- hashes imported from WordPress (docs/migrating.md) ----

/**
 * The hashes a WordPress store kept, which customers moved to Tollgate sign in with: phpass's
 * portable MD5 (`$P$`, `$H$`), bcrypt (`$2a$`, `$2b$`, `$2y$`) and WordPress 6.8's `$wp$2y$`
 * (bcrypt over the base64 of an HMAC-SHA384 of the password). Checked only to sign in; the first
 * sign-in that passes replaces it with Tollgate's own (needsRehash).
 */
const IMPORTED =
  /^(?:\$[PH]\$[./0-9A-Za-z]{31}|\$2[aby]\$\d{2}\$[./0-9A-Za-z]{53}|\$wp\$2[aby]\$\d{2}\$[./0-9A-Za-z]{53})$/;

export const isImportedHash = (stored: string): boolean => IMPORTED.test(stored);

/** A stored hash that is not Tollgate's own scheme: replaced at the next successful sign-in. */
export const needsRehash = (stored: string): boolean => !stored.startsWith('scrypt$');

const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** phpass's own base64 of the final MD5 (its encode64). */
function phpassEncode(input: Buffer): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    let value = input[i++]!;
    out += ITOA64[value & 0x3f];
    if (i < input.length) value |= input[i]! << 8;
    out += ITOA64[(value >> 6) & 0x3f];
    if (i++ >= input.length) break;
    if (i < input.length) value |= input[i]! << 16;
    out += ITOA64[(value >> 12) & 0x3f];
    if (i++ >= input.length) break;
    out += ITOA64[(value >> 18) & 0x3f];
  }
  return out;
}

/** phpass portable hashes: 2^n rounds of MD5 over the salt and the password. */
function phpass(password: string, stored: string): string {
  const rounds = ITOA64.indexOf(stored[3]!);
  // WordPress writes 8 (256 rounds); phpass accepts 7 to 30.
  if (rounds < 7 || rounds > 30) return '*';
  const pw = Buffer.from(password, 'utf8');
  let hash = createHash('md5').update(stored.slice(4, 12)).update(pw).digest();
  for (let n = 1 << rounds; n > 0; n--) hash = createHash('md5').update(hash).update(pw).digest();
  return stored.slice(0, 12) + phpassEncode(hash);
}

async function verifyImported(password: string, stored: string): Promise<boolean> {
  if (stored.startsWith('$P$') || stored.startsWith('$H$')) {
    const actual = Buffer.from(phpass(password, stored));
    const expected = Buffer.from(stored);
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }
  const bcrypt = (await import('bcryptjs')).default;
  if (stored.startsWith('$wp$')) {
    const prehash = createHmac('sha384', 'wp-sha384').update(password).digest('base64');
    return bcrypt.compare(prehash, stored.slice(3));
  }
  return bcrypt.compare(password, stored);
}

/** A hash that costs the same to check, used when the account does not exist (no timing oracle). */
export const DUMMY_HASH = `scrypt$${N}$${R}$${P}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(KEY_LEN).toString('base64')}`;
