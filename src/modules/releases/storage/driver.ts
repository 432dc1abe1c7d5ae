import type { Readable, Transform } from 'node:stream';
import type { VerifyFailure } from '../../vault/seal.js';

// Where a stored artifact's bytes fail their checks: the vault's format raises them too.
export { IntegrityError, type VerifyFailure } from '../../vault/seal.js';

/**
 * The one small interface every artifact store implements. A capability a driver lacks is simply
 * absent (an external link cannot be opened, stat'ed or deleted by us); callers check for it and
 * answer the `storage_*_unsupported` errors (docs/releases.md, 'Deleting artifacts').
 */

/** What the service knows about a stored artifact, as the driver needs it. */
export interface ArtifactRef {
  /** Path relative to the vault for managed drivers; the URL for an external link. */
  storageKey: string;
  /** Encryption key id (local_encrypted only). */
  keyId: string | null;
  /** Plaintext size in bytes; null when unknown (external links without a size). */
  fileSize: number | null;
  /** Lowercase hex SHA-256 of the plaintext. */
  sha256: string;
  /** The bucket's ETag of the object when it was written (object stores only). */
  storedEtag?: string | null;
}

/** A file written to private staging, not yet visible anywhere. */
export interface StagedFile {
  /** Bytes the driver wrote (ciphertext for an encrypting driver). */
  storedSize: number;
  keyId: string | null;
  /** What an object store calls the bytes it received (its ETag); absent for the vault. */
  etag?: string | null;
  /** Moves the file to `storageKey` in one atomic rename; the only way it becomes part of the vault. */
  commit(): Promise<void>;
  /** Removes the staged file (idempotent). */
  discard(): Promise<void>;
}

/** A stat snapshot of the stored bytes (not the plaintext): what artifact_changed compares. */
export interface StatSnapshot {
  exists: boolean;
  size: number | null;
  mtimeMs: number | null;
}

export type DeleteOutcome = { outcome: 'deleted' } | { outcome: 'absent' };

export type VerifyResult = { ok: true; snapshot: StatSnapshot } | { ok: false; reason: VerifyFailure };

export interface StorageDriver {
  readonly name: string;
  /** True when the bytes live in our vault (served only through single-use tokens). */
  readonly managed: boolean;
  /**
   * Streams `source` into private staging, through `inspect` first (it sees the plaintext);
   * nothing is visible until `commit()`.
   */
  put?(source: Readable, storageKey: string, inspect?: Transform): Promise<StagedFile>;
  /**
   * The plaintext bytes, chunk by chunk; opening fails when the file is missing. A chunk is valid
   * until the consumer asks for the second chunk after it (a driver may read into the same memory
   * again): a consumer that keeps chunks longer copies them. An encrypting driver yields a chunk
   * only once it is authenticated.
   * Stopping early (`return()` or `throw()`, or `break` in `for await`) releases the file, even
   * before the first chunk was asked for (`closingUnread` in local.ts).
   */
  open?(ref: ArtifactRef): Promise<AsyncGenerator<Buffer, void, undefined>>;
  stat?(ref: ArtifactRef): Promise<StatSnapshot>;
  delete?(ref: ArtifactRef): Promise<DeleteOutcome>;
  /** Reads everything once in bounded memory and checks size and SHA-256 (and authentication). */
  verify?(ref: ArtifactRef): Promise<VerifyResult>;
}

/** A driver answer that breaks the stat contract is a 500 `invalid_driver_stat_contract`. */
export function isValidStat(s: unknown): s is StatSnapshot {
  if (typeof s !== 'object' || s === null) return false;
  const v = s as Record<string, unknown>;
  if (typeof v.exists !== 'boolean') return false;
  const n = (x: unknown) => x === null || (typeof x === 'number' && Number.isFinite(x) && x >= 0);
  if (!n(v.size) || !n(v.mtimeMs)) return false;
  if (v.exists && (v.size === null || !Number.isInteger(v.size))) return false;
  return true;
}

/** A driver answer that breaks the delete contract is a 500 `invalid_driver_delete_contract`. */
export function isValidDeleteOutcome(d: unknown): d is DeleteOutcome {
  if (typeof d !== 'object' || d === null) return false;
  const o = (d as Record<string, unknown>).outcome;
  return o === 'deleted' || o === 'absent';
}
