import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  timingSafeEqual,
} from 'node:crypto';
import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { sha256 } from '../../random.js';
import type { Actor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SealedSecret, SealedSecretHolder, SecretVault } from '../vault/vault.module.js';
import type {
  NewSigningKey,
  PublicSigningKeyRow,
  SigningKeyRow,
  SigningRepository,
} from './signing.repository.js';

const SHA384_BYTES = 48;

/** The one algorithm: Ed25519, with the raw 32-byte keys libsodium and node:crypto both take. */
export const ALGORITHM = 'ed25519';

/**
 * The fixed DER framing of an Ed25519 key (RFC 8410): the raw 32 bytes follow it. Keys move in and
 * out of node:crypto in DER so that the private half never becomes a string.
 */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A key as every answer shows it: never any private material. */
export interface PublicSigningKey {
  id: string;
  public_key: string;
  created_at: string;
  retired_at: string | null;
}

export interface Signature {
  /** The signing key's id, to find its public key in the list. */
  keyId: string;
  signature: Buffer;
}

interface ActiveKey {
  id: string;
  privateKey: KeyObject;
}

/** `k1-` and 8 hex characters of the raw public key's SHA-256: short, stable, and names the key. */
export const keyIdOf = (publicKey: Buffer): string => `k1-${sha256(publicKey).slice(0, 8)}`;

const view = (row: PublicSigningKeyRow): PublicSigningKey => ({
  id: row.key_id,
  public_key: row.public_key,
  created_at: row.created_at,
  retired_at: row.retired_at,
});

/**
 * The store's signing keys (docs/administration.md, 'Signing keys'): one active Ed25519 key that
 * signs (offline receipts and releases), and the retired ones that stay listed so what
 * they signed stays verifiable. Keys live in the database, so every server process signs with
 * the same key; the private half is sealed with the vault key.
 *
 * The active key is kept in memory for CACHE_MS, so signing reads no table: a rotation by this
 * process is seen at once, one by another process within CACHE_MS (the old key stays listed, so
 * what it signs meanwhile verifies).
 */
export class SigningService implements SealedSecretHolder {
  static readonly CACHE_MS = 30_000;
  private cached: { at: number; key: ActiveKey } | null = null;
  private loading: Promise<ActiveKey> | null = null;
  /** Counts rotations: a load that a rotation overtook must not refill the cache with what it read. */
  private generation = 0;

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: SigningRepository,
    private readonly vault: SecretVault,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  /** Signs `data` with the active key, creating the first key on first need. */
  async sign(data: Buffer): Promise<Signature> {
    const key = await this.activeKey();
    return { keyId: key.id, signature: sign(null, data, key.privateKey) };
  }

  /**
   * Signs a release's SHA-384 digest (the raw 48 bytes) with the active key: the scheme WordPress
   * core's `verify_file_signature()` checks, `sodium_crypto_sign_verify_detached($signature,
   * hash_file('sha384', $file, true), $public_key)` (docs/releases.md, 'Signatures and
   * Content-MD5'). Anything but 48 bytes is a caller's mistake, never signed.
   */
  signDigest(sha384: Buffer): Promise<Signature> {
    if (sha384.length !== SHA384_BYTES)
      throw new Error('signDigest takes the 48 raw bytes of a SHA-384 digest');
    return this.sign(sha384);
  }

  /** Every key, newest first: the active one (`retired_at` null) and the retired ones. */
  async list(): Promise<PublicSigningKey[]> {
    return (await this.repo.list()).map(view);
  }

  /**
   * A new active key; the previous one is retired (it stays listed, without its private half).
   * Recorded in the audit trail in the same transaction. Two rotations at once both happen, one
   * after the other: the loser of the race on the one-active-key index runs again.
   */
  async rotate(actor: Actor): Promise<PublicSigningKey[]> {
    for (let attempt = 1; ; attempt++) {
      const fresh = await this.generate();
      try {
        await withTransaction(this.database, async (tx) => {
          const now = iso(this.clock.now());
          const current = await this.repo.lockActive(ALGORITHM, tx);
          if (current) await this.repo.retire(current.id, now, tx);
          await this.repo.insert({ ...fresh.row, created_at: now }, tx);
          await this.audit.record(
            actor,
            {
              entity_type: 'signing_key',
              entity_id: 0,
              action: 'rotate',
              changes: { active_key_id: { before: current?.key_id ?? null, after: fresh.row.key_id } },
            },
            tx,
          );
        });
      } catch (e) {
        if (attempt < 3 && isUniqueViolation(e)) continue;
        throw e;
      }
      this.generation++;
      this.cached = { at: Date.now(), key: fresh.key };
      return this.list();
    }
  }

  private activeKey(): Promise<ActiveKey> {
    const cached = this.cached;
    if (cached && Date.now() - cached.at < SigningService.CACHE_MS) return Promise.resolve(cached.key);
    if (!this.loading) {
      const generation = this.generation;
      this.loading = this.load()
        .then((key) => {
          if (generation === this.generation) this.cached = { at: Date.now(), key };
          return key;
        })
        .finally(() => {
          this.loading = null;
        });
    }
    return this.loading;
  }

  /**
   * The active key from the database; none yet, a new one. Two processes creating the first key
   * at once both insert, the unique index on the active key refuses one, and the loser reads the
   * winner's key.
   */
  private async load(): Promise<ActiveKey> {
    for (let attempt = 1; ; attempt++) {
      const row = await this.repo.active(ALGORITHM);
      if (row) return this.unseal(row);
      const fresh = await this.generate();
      try {
        await this.repo.insert({ ...fresh.row, created_at: iso(this.clock.now()) });
        return fresh.key;
      } catch (e) {
        if (attempt < 3 && isUniqueViolation(e)) continue;
        throw e;
      }
    }
  }

  private async generate(): Promise<{ row: Omit<NewSigningKey, 'created_at'>; key: ActiveKey }> {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const publicRaw = publicKey.export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length);
    const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
    const sealed = await this.vault.sealSecret(pkcs8.subarray(PKCS8_PREFIX.length));
    pkcs8.fill(0);
    const id = keyIdOf(publicRaw);
    return {
      row: {
        key_id: id,
        algorithm: ALGORITHM,
        public_key: publicRaw.toString('base64'),
        private_key: sealed.toString('base64'),
        retired_at: null,
      },
      key: { id, privateKey },
    };
  }

  // ---- the sealed private halves, for rotate-key (docs/releases.md, 'Rotating the key') ----

  readonly sealedName = 'signing_key' as const;

  async sealedSecrets(): Promise<SealedSecret[]> {
    const rows = await this.repo.withPrivateHalf();
    return rows.map((r) => ({
      id: r.key_id,
      entityId: r.id,
      field: 'private_key',
      sealed: Buffer.from(r.private_key ?? '', 'base64'),
    }));
  }

  /** The same private half sealed with the current vault key; the key itself does not change. */
  replaceSealed(id: string, before: Buffer, after: Buffer, tx: Tx): Promise<boolean> {
    return this.repo.resealPrivateHalf(id, before.toString('base64'), after.toString('base64'), tx);
  }

  /**
   * The private key of a row. A row whose private half cannot be opened with a configured vault
   * key, or does not belong to the row's public key (a sealed value copied from another row), is
   * 500 `signing_key_unavailable`: nothing is signed with a key the list does not publish.
   */
  private async unseal(row: SigningKeyRow): Promise<ActiveKey> {
    let seed: Buffer;
    try {
      if (!row.private_key) throw new Error('the active key has no private half');
      seed = await this.vault.openSecret(Buffer.from(row.private_key, 'base64'));
    } catch {
      throw new ApiError('signing_key_unavailable');
    }
    const pkcs8 = Buffer.concat([PKCS8_PREFIX, seed]);
    seed.fill(0);
    try {
      const privateKey = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
      const derived = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
      const expected = Buffer.concat([SPKI_PREFIX, Buffer.from(row.public_key, 'base64')]);
      if (derived.length !== expected.length || !timingSafeEqual(derived, expected)) {
        throw new Error('the private half belongs to another key');
      }
      return { id: row.key_id, privateKey };
    } catch {
      throw new ApiError('signing_key_unavailable');
    } finally {
      pkcs8.fill(0);
    }
  }
}
