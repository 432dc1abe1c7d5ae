import { createHmac } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { AppSecrets } from '../../db/app-secrets.js';
import { ApiError } from '../../http/errors.js';
import { randomHex, safeEqual } from '../../random.js';

/** A signed state is good for 10 minutes (docs/oauth.md, 'Lifetimes'). */
export const STATE_LIFETIME_SECONDS = 10 * 60;
/** A state longer than this was not made here (it is also carried in URLs). */
export const MAX_STATE_LENGTH = 4096;

const SECRET_KEY = 'oauth_state_secret';

/** What a state binds: the license, the requesting identity, where to return, and a nonce. */
export interface StatePayload {
  /** Format version. */
  v: 1;
  /** License id and the SHA-256 of its key: the key itself never travels inside the state. */
  lid: number;
  kh: string;
  /** The identity as supplied, its normalised domain and its installation id. */
  dom: string;
  dn: string;
  iid: string;
  /** The callback URL, checked against the requesting domain when the state was made. */
  ru: string;
  /** Random per approval request; the single-page flow echoes it back (docs/oauth.md). */
  n: string;
  /** Expiry, seconds since the epoch on the injected clock. */
  exp: number;
}

const b64 = (data: Buffer | string) => Buffer.from(data).toString('base64url');
const B64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Signs and verifies approval states: `base64url(JSON payload) "." base64url(HMAC-SHA256)`.
 * The HMAC secret is one of the server's shared secrets (AppSecrets), so every server process
 * sharing the database signs and verifies alike.
 */
export class StateSigner {
  constructor(
    private readonly secrets: AppSecrets,
    private readonly clock: Clock,
  ) {}

  private key(): Promise<Buffer> {
    return this.secrets.get(SECRET_KEY);
  }

  private async mac(encodedPayload: string): Promise<string> {
    return createHmac('sha256', await this.key())
      .update(encodedPayload)
      .digest('base64url');
  }

  async sign(
    fields: Omit<StatePayload, 'v' | 'exp' | 'n'>,
  ): Promise<{ state: string; payload: StatePayload }> {
    const exp = Math.floor(this.clock.now().getTime() / 1000) + STATE_LIFETIME_SECONDS;
    const payload: StatePayload = { v: 1, ...fields, n: randomHex(16), exp };
    const encoded = b64(JSON.stringify(payload));
    return { state: `${encoded}.${await this.mac(encoded)}`, payload };
  }

  /** The payload of a state made here and not yet expired, else 400 `invalid_state`. */
  async verify(state: string): Promise<StatePayload> {
    const parts = state.length <= MAX_STATE_LENGTH ? state.split('.') : [];
    const [encoded, signature] = parts;
    if (parts.length !== 2 || !encoded || !signature || !B64URL.test(encoded) || !B64URL.test(signature)) {
      throw new ApiError('invalid_state');
    }
    if (!safeEqual(signature, await this.mac(encoded))) throw new ApiError('invalid_state');
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
    } catch {
      throw new ApiError('invalid_state');
    }
    if (!isPayload(payload)) throw new ApiError('invalid_state');
    if (Math.floor(this.clock.now().getTime() / 1000) >= payload.exp) throw new ApiError('invalid_state');
    return payload;
  }
}

function isPayload(p: unknown): p is StatePayload {
  if (typeof p !== 'object' || p === null) return false;
  const o = p as Record<string, unknown>;
  return (
    o.v === 1 &&
    Number.isInteger(o.lid) &&
    Number.isInteger(o.exp) &&
    ['kh', 'dom', 'dn', 'iid', 'ru', 'n'].every((k) => typeof o[k] === 'string')
  );
}
