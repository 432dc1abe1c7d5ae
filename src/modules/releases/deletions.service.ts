import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { runFlow } from '../../flow.js';
import { ApiError, type ErrorCode, isErrorCode } from '../../http/errors.js';
import { sha256, uuid } from '../../random.js';
import { type Actor, diff } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { ArtifactRow, DeletionRow, ReleaseRow } from './releases.model.js';
import type { ReleasesRepository } from './releases.repository.js';
import type { ArtifactDeleteBody, DeletionExecuteBody, DeletionPreviewBody } from './releases.schemas.js';
import type { ReleasesService } from './releases.service.js';
import { isValidDeleteOutcome, isValidStat, type StatSnapshot } from './storage/driver.js';
import { type ArtifactStorage, refOf } from './storage/storage.js';

export const MAX_TARGETS = 100;
/** A running job untouched this long belongs to a process that died; retry may take it over. */
const STALE_JOB_MS = 5 * 60 * 1000;

interface TargetImpact {
  artifact: ArtifactRow;
  stat: StatSnapshot;
  releases: ReleaseRow[];
  tokens: number;
}

/** What a deletion's steps share: the checked impact, the job's id, and the job once run. */
interface DeletionFlow {
  impact: Impact;
  ids: number[];
  opId: string;
  now: string;
  /** The administrator who asked; the deletion is recorded in the audit trail in its transaction. */
  actor: Actor | undefined;
  job: DeletionRow | null;
}

export interface Impact {
  productId: number;
  targets: TargetImpact[];
  acknowledgement: string;
  fingerprint: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Artifact deletion in two steps. Preview resolves the targets (ids only, at most 100), checks
 * every rule, stats every file and answers the impact with an acknowledgement sentence and a
 * fingerprint of everything it saw. Execute repeats all of it and refuses unless the caller
 * typed the sentence and the fingerprint is unchanged; then, in one transaction, the artifacts
 * go to delete_pending and their published releases are withdrawn (token hooks included), and
 * a job deletes the files, confirming each is gone: deleted, or delete_failed for a retry.
 */
export class DeletionsService {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: ReleasesRepository,
    private readonly storage: ArtifactStorage,
    private readonly releases: ReleasesService,
    private readonly catalogue: CatalogueService,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  private async resolve(
    productId: number,
    body: DeletionPreviewBody,
    crossCode: ErrorCode = 'cross_product_permission_denied',
  ): Promise<ArtifactRow[]> {
    const artifactIds = body.artifact_ids ?? [];
    const releaseIds = body.release_ids ?? [];
    if (artifactIds.length + releaseIds.length === 0) throw new ApiError('missing_targets');
    if (artifactIds.length + releaseIds.length > MAX_TARGETS) {
      throw new ApiError('max_targets_exceeded', { data: { max_targets: MAX_TARGETS } });
    }
    if (!(await this.catalogue.getProduct(productId))) throw new ApiError('product_not_found');
    const wantedReleases = [...new Set(releaseIds)].sort((a, b) => a - b);
    const releases = new Map((await this.repo.findReleases(wantedReleases)).map((r) => [r.id, r]));
    for (const id of wantedReleases) {
      const r = releases.get(id);
      if (!r) throw new ApiError('release_not_found', { data: { release_id: id } });
      if (r.product_id !== productId)
        throw new ApiError(crossCode, { data: { release_id: id, product_id: r.product_id } });
    }
    const ids = [...new Set([...artifactIds, ...[...releases.values()].map((r) => r.artifact_id)])].sort(
      (a, b) => a - b,
    );
    const artifacts = new Map((await this.repo.findArtifacts(ids)).map((a) => [a.id, a]));
    return ids.map((id) => {
      const a = artifacts.get(id);
      if (!a) throw new ApiError('artifact_not_found', { data: { artifact_id: id } });
      if (a.product_id !== productId)
        throw new ApiError(crossCode, { data: { artifact_id: id, product_id: a.product_id } });
      return a;
    });
  }

  /** Every check of the deletion table, the stat of every file, and the impact's fingerprint. */
  private async impact(productId: number, artifacts: ArtifactRow[]): Promise<Impact> {
    const targets: TargetImpact[] = [];
    const bound = await this.repo.releasesOfArtifacts(artifacts.map((a) => a.id));
    const tokens = await this.releases.outstandingTokens(artifacts.map((a) => a.id));
    for (const a of artifacts) {
      if (a.state === 'delete_pending' || a.state === 'delete_failed') {
        throw new ApiError('artifact_delete_in_progress', {
          data: { artifact_id: a.id, op_id: a.deletion_op },
        });
      }
      if (a.state === 'deleted')
        throw new ApiError('artifact_not_available', { data: { artifact_id: a.id } });
      const driver = this.storage.driver(a.driver);
      if (!driver.delete)
        throw new ApiError('storage_delete_unsupported', {
          data: { artifact_id: a.id, storage_driver: a.driver },
        });
      if (!driver.stat)
        throw new ApiError('storage_stat_unsupported', {
          data: { artifact_id: a.id, storage_driver: a.driver },
        });
      const stat = await driver.stat(refOf(a)).catch(() => null);
      if (!isValidStat(stat))
        throw new ApiError('invalid_driver_stat_contract', { data: { artifact_id: a.id } });
      targets.push({
        artifact: a,
        stat,
        releases: bound.filter((r) => r.artifact_id === a.id),
        tokens: tokens.get(a.id) ?? 0,
      });
    }
    const releaseCount = targets.reduce((n, t) => n + t.releases.length, 0);
    const acknowledgement = `delete ${plural(targets.length, 'artifact')} and ${plural(releaseCount, 'release')}`;
    const canonical = {
      product_id: productId,
      targets: targets.map((t) => ({
        id: t.artifact.id,
        state: t.artifact.state,
        driver: t.artifact.driver,
        key: t.artifact.storage_key,
        sha: t.artifact.file_sha256,
        size: t.artifact.file_size === null ? null : Number(t.artifact.file_size),
        stat: [t.stat.exists, t.stat.size, t.stat.mtimeMs],
        releases: t.releases.map((r) => [r.id, r.status, r.is_current, r.artifact_id]),
        tokens: t.tokens,
      })),
    };
    return { productId, targets, acknowledgement, fingerprint: sha256(JSON.stringify(canonical)) };
  }

  async preview(productId: number, body: DeletionPreviewBody) {
    const impact = await this.impact(productId, await this.resolve(productId, body));
    return presentImpact(impact);
  }

  async execute(productId: number, body: DeletionExecuteBody, actor?: Actor, crossCode?: ErrorCode) {
    const { acknowledgement, fingerprint } = body;
    if (!acknowledgement || !fingerprint) {
      // Validate the targets first so a malformed request says what is wrong with it.
      await this.resolve(productId, body, crossCode);
      throw new ApiError('deletion_confirmation_required');
    }
    const impact = await this.impact(productId, await this.resolve(productId, body, crossCode));
    if (impact.fingerprint !== fingerprint) {
      throw new ApiError('deletion_preview_stale', { data: { fingerprint: impact.fingerprint } });
    }
    if (acknowledgement !== impact.acknowledgement) {
      throw new ApiError('deletion_confirmation_required', {
        data: { acknowledgement: impact.acknowledgement },
      });
    }
    const flow: DeletionFlow = {
      impact,
      ids: impact.targets.map((t) => t.artifact.id),
      opId: uuid(),
      now: iso(this.clock.now()),
      actor,
      job: null,
    };
    await runFlow<DeletionFlow>(
      [
        {
          // One transaction: when it fails it rolls itself back, so there is nothing to undo.
          name: 'withdraw the releases and set the artifacts aside',
          run: (f) => withTransaction(this.database, (tx) => this.setAside(f, tx)),
        },
        {
          // After the commit, and without undo: a deleted file cannot come back. A file that could
          // not be deleted is recorded on the job (delete_failed), for a retry.
          name: 'delete the files',
          run: async (f) => {
            f.job = await this.run(f.opId);
          },
        },
      ],
      flow,
    );
    return this.finish(flow.job!);
  }

  /**
   * The deletion's transaction, under the product's lock: the preview still holds, the artifacts go
   * to delete_pending, their releases are withdrawn (with the withdraw hooks), and the job is
   * recorded.
   */
  private async setAside(flow: DeletionFlow, tx: Tx): Promise<void> {
    await this.repo.lockProduct(flow.impact.productId, tx);
    const releases = await this.releasesAsPreviewed(flow, tx);
    const moved = await this.repo.transitionArtifacts(
      flow.ids,
      ['available'],
      { state: 'delete_pending', deletion_op: flow.opId, updated_at: flow.now },
      tx,
    );
    if (moved !== flow.ids.length) throw new ApiError('artifact_delete_in_progress');
    for (const r of releases) {
      if (r.status === 'published') {
        await this.releases.withdrawIn(r, 'artifact_deleted', flow.now, tx);
        await this.recordIn(
          flow,
          'release',
          r.id,
          'withdraw',
          {
            before: { status: r.status, is_current: r.is_current },
            after: { status: 'withdrawn', is_current: 0 },
          },
          tx,
        );
      } else if (r.is_current === 1) {
        // Not published but flagged current: it only loses the flag.
        await this.repo.updateRelease(r.id, { is_current: 0, updated_at: flow.now }, tx);
        await this.recordIn(
          flow,
          'release',
          r.id,
          'update',
          {
            before: { is_current: 1 },
            after: { is_current: 0 },
          },
          tx,
        );
      }
    }
    for (const t of flow.impact.targets) {
      // As a coupon's delete records its code: the file name goes, so the entry says which file.
      await this.recordIn(
        flow,
        'artifact',
        t.artifact.id,
        'delete',
        {
          before: { state: t.artifact.state, deletion_op: null, file_name: t.artifact.file_name },
          after: { state: 'delete_pending', deletion_op: flow.opId, file_name: null },
        },
        tx,
      );
    }
    await this.repo.insertDeletion(
      {
        op_id: flow.opId,
        product_id: flow.impact.productId,
        status: 'running',
        artifact_ids: JSON.stringify(flow.ids),
        fingerprint: flow.impact.fingerprint,
        results: '[]',
        error_code: null,
        attempts: 1,
        requested_by: flow.actor?.user_id ?? null,
        created_at: flow.now,
        updated_at: flow.now,
        completed_at: null,
      },
      tx,
    );
  }

  /** Records one change of the deletion (docs/admin.md, 'Audit trail'); only changed fields are kept. */
  private async recordIn(
    flow: DeletionFlow,
    entity_type: 'artifact' | 'release',
    entity_id: number,
    action: string,
    change: { before: Record<string, unknown>; after: Record<string, unknown> },
    tx: Tx,
  ): Promise<void> {
    const changes = diff(change.before, change.after);
    if (!flow.actor || Object.keys(changes).length === 0) return;
    await this.audit.record(flow.actor, { entity_type, entity_id, action, changes }, tx);
  }

  /** The targets' releases: the same, with the same flags, as the preview saw, else deletion_preview_stale. */
  private async releasesAsPreviewed(flow: DeletionFlow, tx: Tx): Promise<ReleaseRow[]> {
    const seen = JSON.stringify(
      flow.impact.targets.flatMap((t) => t.releases.map((r) => [r.id, r.status, r.is_current])),
    );
    const fresh = await this.repo.releasesOfArtifacts(flow.ids, tx);
    if (JSON.stringify(fresh.map((r) => [r.id, r.status, r.is_current])) !== seen) {
      throw new ApiError('deletion_preview_stale');
    }
    return fresh;
  }

  /** `DELETE /software/products/{id}/artifacts/{artifact_id}`: the same flow for one artifact. */
  async deleteOne(productId: number, artifactId: number, body: ArtifactDeleteBody, actor?: Actor) {
    await this.requireArtifact(productId, artifactId);
    return this.execute(
      productId,
      { ...body, artifact_ids: [artifactId] },
      actor,
      'cross_product_artifact_prohibited',
    );
  }

  async requireArtifact(productId: number, artifactId: number): Promise<ArtifactRow> {
    if (!(await this.catalogue.getProduct(productId))) throw new ApiError('product_not_found');
    const a = await this.repo.findArtifact(artifactId);
    if (!a) throw new ApiError('artifact_not_found', { data: { artifact_id: artifactId } });
    if (a.product_id !== productId) throw new ApiError('cross_product_artifact_prohibited');
    return a;
  }

  async artifactDetail(productId: number, artifactId: number) {
    const a = await this.requireArtifact(productId, artifactId);
    const releases = await this.repo.releasesOfArtifacts([a.id]);
    return {
      artifact_id: a.id,
      product_id: a.product_id,
      artifact_download_id: a.download_id,
      storage_driver: a.driver,
      state: a.state,
      file_name: a.file_name,
      file_size: a.file_size === null ? null : Number(a.file_size),
      file_sha256: a.file_sha256,
      key_id: a.key_id,
      source_download_id: a.source_download_id,
      deletion_op: a.deletion_op,
      releases: releases.map((r) => ({
        version_id: r.id,
        version: r.version,
        status: r.status,
        is_current: r.is_current === 1,
      })),
    };
  }

  async job(opId: string) {
    const row = await this.repo.findDeletion(opId);
    if (!row) throw new ApiError('deletion_job_not_found');
    return presentJob(row);
  }

  /** Runs a failed job again (or one a dead process left running); a completed job is answered as is. */
  async retry(opId: string) {
    const row = await this.repo.findDeletion(opId);
    if (!row) throw new ApiError('deletion_job_not_found');
    if (row.status === 'completed') return presentJob(row);
    const now = this.clock.now();
    const claimed = await this.repo.claimDeletion(
      opId,
      iso(new Date(now.getTime() - STALE_JOB_MS)),
      iso(now),
    );
    if (!claimed) throw new ApiError('artifact_delete_in_progress', { data: { op_id: opId } });
    await this.repo.updateDeletion(opId, { attempts: row.attempts + 1 });
    const ids = JSON.parse(row.artifact_ids) as number[];
    await this.repo.transitionArtifacts(ids, ['delete_failed'], {
      state: 'delete_pending',
      updated_at: iso(now),
    });
    return this.finish(await this.run(opId));
  }

  /** Deletes each file of the job and confirms its absence with a fresh stat. */
  private async run(opId: string): Promise<DeletionRow> {
    const job = (await this.repo.findDeletion(opId))!;
    const ids = JSON.parse(job.artifact_ids) as number[];
    const results: { artifact_id: number; state: string; error_code: string | null }[] = [];
    for (const artifact of await this.repo.findArtifacts(ids)) {
      if (artifact.state === 'deleted') {
        results.push({ artifact_id: artifact.id, state: 'deleted', error_code: null });
        continue;
      }
      let error: ErrorCode | null = null;
      try {
        await this.deleteFile(artifact);
      } catch (e) {
        error = e instanceof ApiError ? e.code : 'storage_delete_failed';
      }
      const now = iso(this.clock.now());
      await this.repo.updateArtifact(artifact.id, {
        state: error ? 'delete_failed' : 'deleted',
        deleted_at: error ? null : now,
        updated_at: now,
      });
      results.push({
        artifact_id: artifact.id,
        state: error ? 'delete_failed' : 'deleted',
        error_code: error,
      });
    }
    const failed = results.find((r) => r.error_code);
    const now = iso(this.clock.now());
    await this.repo.updateDeletion(opId, {
      status: failed ? 'failed' : 'completed',
      results: JSON.stringify(results),
      error_code: failed?.error_code ?? null,
      updated_at: now,
      completed_at: failed ? null : now,
    });
    return (await this.repo.findDeletion(opId))!;
  }

  private async deleteFile(artifact: ArtifactRow): Promise<void> {
    const driver = this.storage.driver(artifact.driver);
    if (!driver.delete) throw new ApiError('storage_delete_unsupported');
    if (!driver.stat) throw new ApiError('storage_stat_unsupported');
    const ref = refOf(artifact);
    const outcome = await driver.delete(ref).catch(() => {
      throw new ApiError('storage_delete_failed');
    });
    if (!isValidDeleteOutcome(outcome)) throw new ApiError('invalid_driver_delete_contract');
    const after = await driver.stat(ref).catch(() => null);
    if (!isValidStat(after)) throw new ApiError('invalid_driver_stat_contract');
    if (after.exists) throw new ApiError('storage_delete_failed', { data: { reason: 'file still present' } });
  }

  /** A finished job is the answer; a failed one is its error, carrying the job for a retry. */
  private finish(row: DeletionRow) {
    const job = presentJob(row);
    if (row.status === 'failed') {
      const code = row.error_code && isErrorCode(row.error_code) ? row.error_code : 'storage_delete_failed';
      throw new ApiError(code, { data: { op_id: row.op_id, job } });
    }
    return job;
  }
}

function presentImpact(impact: Impact) {
  const releases = impact.targets.flatMap((t) => t.releases);
  return {
    product_id: impact.productId,
    targets: impact.targets.map((t) => ({
      artifact_id: t.artifact.id,
      artifact_download_id: t.artifact.download_id,
      storage_driver: t.artifact.driver,
      file_name: t.artifact.file_name,
      file_size: t.artifact.file_size === null ? null : Number(t.artifact.file_size),
      file_sha256: t.artifact.file_sha256,
      stored: { exists: t.stat.exists, size: t.stat.size, mtime_ms: t.stat.mtimeMs },
      releases: t.releases.map((r) => ({
        version_id: r.id,
        version: r.version,
        status: r.status,
        is_current: r.is_current === 1,
      })),
      outstanding_tokens: t.tokens,
    })),
    totals: {
      artifacts: impact.targets.length,
      releases: releases.length,
      published_releases: releases.filter((r) => r.status === 'published').length,
      current_releases: releases.filter((r) => r.is_current === 1).length,
      outstanding_tokens: impact.targets.reduce((n, t) => n + t.tokens, 0),
      bytes: impact.targets.reduce((n, t) => n + (t.stat.size ?? 0), 0),
    },
    acknowledgement: impact.acknowledgement,
    fingerprint: impact.fingerprint,
  };
}

function presentJob(row: DeletionRow) {
  return {
    op_id: row.op_id,
    product_id: row.product_id,
    status: row.status,
    artifact_ids: JSON.parse(row.artifact_ids) as number[],
    results: JSON.parse(row.results) as { artifact_id: number; state: string; error_code: string | null }[],
    error_code: row.error_code,
    attempts: row.attempts,
    created_at: row.created_at,
    updated_at: row.updated_at,
    completed_at: row.completed_at,
  };
}
