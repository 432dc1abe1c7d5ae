import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, iso } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import type { ArtifactRow } from './releases.model.js';
import type { ReleasesRepository } from './releases.repository.js';
import { IntegrityError, type VerifyFailure } from './storage/driver.js';
import { type ArtifactStorage, refOf } from './storage/storage.js';

/**
 * What signs releases: the store's active Ed25519 key (the signing module's `signDigest`), over the
 * raw 48-byte SHA-384 digest of the plain bytes, the scheme WordPress core's
 * `verify_file_signature()` checks (docs/releases.md, 'Signatures and Content-MD5').
 */
export interface ReleaseSigner {
  signDigest(sha384: Buffer): Promise<{ keyId: string; signature: Buffer }>;
}

/** The integrity columns of an artifact (migration 2026112590). */
export interface ArtifactIntegrity {
  file_md5: string;
  signature: string;
  signing_key_id: string;
  signed_at: string;
}

/** Signs the digests of an artifact's bytes; `signing_key_unavailable` when the key cannot be opened. */
export async function signArtifact(
  signer: ReleaseSigner,
  clock: Clock,
  digests: { md5: string; sha384: Buffer },
): Promise<ArtifactIntegrity> {
  const { keyId, signature } = await signer.signDigest(digests.sha384);
  return {
    file_md5: digests.md5,
    signature: signature.toString('base64'),
    signing_key_id: keyId,
    signed_at: iso(clock.now()),
  };
}

export interface SigningStepResult {
  /** Artifacts this run signed. */
  signed: number;
  /** Artifacts left unsigned: bytes missing, unreadable, or not matching their size and SHA-256. */
  failed: { artifact_id: number; reason: VerifyFailure | 'io_error' }[];
  /** Signed meanwhile by another server process running the same step. */
  skipped: number;
  /** True when the step stopped early because the signing key could not be opened. */
  stopped: boolean;
}

/** Artifacts read per query: the step holds one batch of rows, never the bytes. */
const BATCH = 50;

/**
 * The data step run right after the schema migrations (the `migrate` command and every server
 * start, src/cli.ts): artifacts stored before migration 2026112590 get their MD5 and signature
 * from their bytes, read from the vault (plain or decrypted) in bounded memory while their size
 * and stored SHA-256 are checked. A schema migration cannot do it: it has neither the vault nor
 * its key.
 *
 * Idempotent and resumable: it reads only artifacts without a signature, and stores each one's
 * columns on its own as soon as it is signed, so a crash loses at most the artifact being read.
 * Several processes starting at once may read the same artifact; the store is conditional
 * (`signature is null`), so the first one wins and the others count it as skipped. An artifact
 * whose bytes do not match is not signed, is logged, and stays unsigned in the administrator's
 * release view (signature null); the next start checks it again. Log lines name artifact ids and
 * reasons only: never a path, a key or a token.
 */
export class ReleaseSignatures {
  constructor(
    private readonly repo: ReleasesRepository,
    private readonly storage: ArtifactStorage,
    private readonly signer: ReleaseSigner,
    private readonly clock: Clock,
  ) {}

  async signUnsigned(log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>): Promise<SigningStepResult> {
    const result: SigningStepResult = { signed: 0, failed: [], skipped: 0, stopped: false };
    let after = 0;
    for (;;) {
      const batch = await this.repo.unsignedArtifacts(after, BATCH);
      if (batch.length === 0) break;
      for (const artifact of batch) {
        after = artifact.id;
        const digests = await this.digestsOf(artifact);
        if ('reason' in digests) {
          result.failed.push({ artifact_id: artifact.id, reason: digests.reason });
          log.warn(
            { artifact_id: artifact.id, driver: artifact.driver, reason: digests.reason },
            'release signatures: artifact left unsigned: its bytes are missing, unreadable, or not its stored size and SHA-256',
          );
          continue;
        }
        let integrity: ArtifactIntegrity;
        try {
          integrity = await signArtifact(this.signer, this.clock, digests);
        } catch (e) {
          if (!(e instanceof ApiError && e.code === 'signing_key_unavailable')) throw e;
          // Every other artifact would fail the same way: stop, and say why once.
          result.stopped = true;
          log.error(
            { code: e.code },
            'release signatures: the signing key cannot be opened (is the vault key that sealed it configured?); unsigned artifacts stay unsigned',
          );
          return this.done(result, log);
        }
        const stored = await this.repo.storeIntegrity(artifact.id, {
          ...integrity,
          updated_at: iso(this.clock.now()),
        });
        if (stored) result.signed += 1;
        else result.skipped += 1;
      }
    }
    return this.done(result, log);
  }

  private done(result: SigningStepResult, log: Pick<FastifyBaseLogger, 'info'>): SigningStepResult {
    if (result.signed + result.failed.length + result.skipped > 0 || result.stopped) {
      log.info(
        {
          signed: result.signed,
          failed: result.failed.length,
          skipped: result.skipped,
          stopped: result.stopped,
        },
        'release signatures: artifacts stored before signing was added',
      );
    }
    return result;
  }

  /**
   * MD5 and SHA-384 of an artifact's plain bytes, read once; the size and SHA-256 read with them
   * must be the stored ones, else the reason it failed.
   */
  private async digestsOf(
    artifact: ArtifactRow,
  ): Promise<{ md5: string; sha384: Buffer } | { reason: VerifyFailure | 'io_error' }> {
    const driver = this.storage.driver(artifact.driver);
    if (!driver.open) return { reason: 'io_error' };
    const sha256 = createHash('sha256');
    const md5 = createHash('md5');
    const sha384 = createHash('sha384');
    let size = 0;
    try {
      for await (const chunk of await driver.open(refOf(artifact))) {
        sha256.update(chunk);
        md5.update(chunk);
        sha384.update(chunk);
        size += chunk.length;
      }
    } catch (e) {
      if (e instanceof IntegrityError) return { reason: e.reason };
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { reason: 'missing' };
      return { reason: 'io_error' };
    }
    if (artifact.file_size !== null && size !== Number(artifact.file_size))
      return { reason: 'size_mismatch' };
    if (sha256.digest('hex') !== artifact.file_sha256) return { reason: 'hash_mismatch' };
    return { md5: md5.digest('base64'), sha384: sha384.digest() };
  }
}
