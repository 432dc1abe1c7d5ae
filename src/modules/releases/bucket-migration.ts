import { createReadStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { systemActor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { ArtifactRow } from './releases.model.js';
import type { ReleasesRepository } from './releases.repository.js';
import { IntegrityError, type VerifyFailure } from './storage/driver.js';
import { type ArtifactStorage, BUCKET_DRIVER_OF, refOf } from './storage/storage.js';

export interface BucketMigrationResult {
  /** Artifacts whose bytes now live in the bucket (their rows switched in this run). */
  moved: { artifact_id: number; from: string; to: string }[];
  /** Artifacts left in the vault, with why; the next run tries them again. */
  failed: { artifact_id: number; reason: VerifyFailure | 'io_error' | 'changed' }[];
  /** Vault files removed because their artifact already lives in the bucket (an earlier run's). */
  removedLeftovers: number;
}

/** Thrown when an artifact's row changed while its bytes were being copied. */
class Changed extends Error {}

/** Who moves the artifacts in the audit trail: Tollgate itself, run by the operator's command. */
export const MIGRATION_ACTOR = systemActor('vault_migration');

/**
 * Moves a vault to the bucket (`tollgate vault:migrate-to-s3`, docs/operations.md): every
 * `local` and `local_encrypted` artifact still available is copied as it is stored (an encrypted
 * file stays sealed under its own key), read back in full from the bucket (size, SHA-256, and
 * authentication for sealed bytes), then its row switches to `s3` / `s3_encrypted` in one
 * transaction with its audit entry (actor Tollgate, `vault_migration`), and only then is the vault
 * file removed. A crash at any point leaves each artifact
 * either in the vault (its row unchanged; an object copied meanwhile is overwritten by the next
 * run) or in the bucket (a vault file left behind is removed by the next run), so running it
 * again is always safe.
 */
export class BucketMigration {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: ReleasesRepository,
    private readonly storage: ArtifactStorage,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async run(): Promise<BucketMigrationResult> {
    const objects = this.storage.objects;
    if (!objects) throw new Error('S3_BUCKET is not set: there is no bucket to move the vault to');
    const result: BucketMigrationResult = { moved: [], failed: [], removedLeftovers: 0 };
    for (const from of ['local', 'local_encrypted'] as const) {
      for (const artifact of await this.repo.listArtifactsByDriver(from)) {
        const to = BUCKET_DRIVER_OF[from];
        try {
          await this.move(artifact, from, to);
          result.moved.push({ artifact_id: artifact.id, from, to });
        } catch (e) {
          const reason =
            e instanceof IntegrityError ? e.reason : e instanceof Changed ? ('changed' as const) : 'io_error';
          result.failed.push({ artifact_id: artifact.id, reason });
        }
      }
    }
    result.removedLeftovers = await this.removeLeftovers();
    return result;
  }

  private async move(artifact: ArtifactRow, from: 'local' | 'local_encrypted', to: 's3' | 's3_encrypted') {
    const objects = this.storage.objects!;
    const path = this.storage.vault.pathOf(artifact.storage_key);
    const type = to === 's3' ? 'application/zip' : 'application/octet-stream';
    const { etag } = await objects.store.upload(createReadStream(path), artifact.storage_key, [], type);
    // Read back from the bucket, in full: only bytes that verify there take the vault's place.
    const check = await this.storage.driver(to).verify!({ ...refOf(artifact), storedEtag: null });
    if (!check.ok) {
      // The row still names the vault: the object is nobody's.
      await objects.store.remove(artifact.storage_key).catch(() => {});
      throw new IntegrityError(check.reason);
    }
    await withTransaction(this.database, async (tx) => {
      const switched = await this.repo.moveArtifact(
        artifact.id,
        { driver: from, storage_key: artifact.storage_key },
        { driver: to, stored_etag: etag, updated_at: iso(this.clock.now()) },
        tx,
      );
      if (!switched) throw new Changed();
      await this.audit.record(
        MIGRATION_ACTOR,
        {
          entity_type: 'artifact',
          entity_id: artifact.id,
          action: 'move_storage',
          changes: { storage_driver: { before: from, after: to } },
        },
        tx,
      );
    });
    await unlink(path).catch(() => {});
  }

  /** Vault files whose artifact lives in the bucket: a run that stopped between switch and removal. */
  private async removeLeftovers(): Promise<number> {
    const files = await this.storage.vault.storedFiles();
    if (files.length === 0) return 0;
    const inBucket = new Set(await this.repo.bucketStorageKeys());
    let removed = 0;
    for (const f of files) {
      if (!inBucket.has(f.key)) continue;
      await unlink(this.storage.vault.pathOf(f.key)).catch(() => {});
      removed += 1;
    }
    return removed;
  }
}
