import { realpath, stat } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { Actor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { ImportJobRow, ImportJobsRepository } from './import-jobs.repository.js';
import type {
  ImportJob,
  ImportJobSummary,
  ImportReportBody,
  StartImportBody,
} from './import-jobs.schemas.js';
import type { KindCount } from './import-run.js';
import type { ImportReport, ImportService } from './imports.service.js';
import type { ImportKind, ImportSource } from './records.js';

/** How often a running job writes its heartbeat, and how old one may be before the job counts as stopped. */
const HEARTBEAT_MS = 10_000;
const STALE_MS = 60_000;
const RECENT = 20;

/** The kinds a source's totals count: the progress bar's scale. */
const COUNTED = ['customers', 'orders', 'subscriptions', 'licenses', 'activations'] as const;

const zero = (): Record<ImportKind, KindCount> =>
  Object.fromEntries(
    ['customers', 'products', 'releases', 'orders', 'subscriptions', 'licenses', 'activations'].map((k) => [
      k,
      { created: 0, present: 0, skipped: 0 },
    ]),
  ) as Record<ImportKind, KindCount>;

/** Thrown from the progress callback when the server stops: the run ends between two records. */
class Stopping extends Error {}

export type OpenSource = (name: string, args: Record<string, string>) => Promise<ImportSource>;

/**
 * Imports started from the console (docs/migrating.md, 'From the console'): a job runs the same
 * importer as `npm run import` in this process, in the background, and keeps its state in
 * `import_jobs` so that any process can show it. One job at a time per store (the table's unique
 * index on `active`). A job whose process stopped is shown failed with the reason `interrupted`:
 * at a graceful stop at once, after a crash once its heartbeat is a minute old (at once on SQLite,
 * which one process serves, when that process starts again). Running it again is safe: the
 * importer finds what it made before. The MySQL URL of edd and woocommerce lives only in the
 * job's memory: never stored, logged, audited nor answered.
 */
export class ImportJobService {
  private current: { promise: Promise<void>; stopping: boolean } | null = null;

  constructor(
    private readonly database: Pick<Database, 'db' | 'dialect'>,
    private readonly repo: ImportJobsRepository,
    private readonly importer: ImportService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    private readonly opts: { roots: string[]; open: OpenSource },
  ) {}

  async start(body: StartImportBody, actor: Actor): Promise<ImportJob> {
    const wantsDir = body.source === 'csv' || body.source === 'freemius';
    if (
      wantsDir
        ? body.dir === undefined || body.db_url !== undefined || body.table_prefix !== undefined
        : body.db_url === undefined || body.dir !== undefined
    ) {
      throw new ApiError('invalid_import_arguments');
    }
    const dir = wantsDir ? await this.folder(body.dir as string) : null;
    const tablePrefix = wantsDir ? null : (body.table_prefix ?? 'wp_');
    await this.reap();
    const now = iso(this.clock.now());
    let id: number;
    try {
      id = await withTransaction(this.database, async (tx) => {
        const made = await this.repo.insert(
          {
            source: body.source,
            dry_run: body.dry_run ? 1 : 0,
            dir,
            table_prefix: tablePrefix,
            counts: JSON.stringify(zero()),
            created_by: actor.user_id,
            now,
          },
          tx,
        );
        await this.audit.record(
          actor,
          {
            entity_type: 'import',
            entity_id: made,
            action: 'import_started',
            changes: {
              source: { before: null, after: body.source },
              dry_run: { before: null, after: body.dry_run },
              ...(dir !== null ? { dir: { before: null, after: dir } } : {}),
              ...(tablePrefix !== null ? { table_prefix: { before: null, after: tablePrefix } } : {}),
            },
          },
          tx,
        );
        return made;
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw new ApiError('import_running');
      throw e;
    }
    const args: Record<string, string> =
      dir !== null ? { dir } : { db: body.db_url as string, prefix: tablePrefix as string };
    const job = { promise: Promise.resolve(), stopping: false };
    job.promise = this.execute(id, body.source, body.dry_run, args, job).finally(() => {
      if (this.current === job) this.current = null;
    });
    this.current = job;
    return this.get(id);
  }

  async get(id: number): Promise<ImportJob> {
    await this.reap();
    const row = await this.repo.find(id);
    if (!row) throw new ApiError('import_not_found');
    return {
      ...summary(row),
      report: row.report === null ? null : (JSON.parse(row.report) as ImportReportBody),
    };
  }

  async list(): Promise<ImportJobSummary[]> {
    await this.reap();
    return (await this.repo.recent(RECENT)).map(summary);
  }

  /** At start: the jobs a stopped process left active are failed (on SQLite, every one). */
  async recover(): Promise<void> {
    await this.repo.failStale(
      this.database.dialect === 'sqlite' ? null : iso(new Date(this.clock.now().getTime() - STALE_MS)),
      iso(this.clock.now()),
    );
  }

  /** At a graceful stop: the running job ends between two records and is failed as interrupted. */
  async stop(): Promise<void> {
    const job = this.current;
    if (!job) return;
    job.stopping = true;
    await job.promise;
  }

  /** The active job whose heartbeat stopped, failed: the process running it is gone. */
  private reap(): Promise<void> {
    const now = this.clock.now();
    return this.repo.failStale(iso(new Date(now.getTime() - STALE_MS)), iso(now));
  }

  /**
   * The folder of a csv or freemius import, inside an allowed root both as written and once its
   * links are followed (a `..` or a symbolic link cannot lead out).
   */
  private async folder(dir: string): Promise<string> {
    const [home] = this.opts.roots as [string];
    const wanted = resolve(home, dir);
    if (!this.opts.roots.some((root) => within(wanted, root))) throw new ApiError('import_dir_outside_roots');
    let real: string;
    try {
      real = await realpath(wanted);
      if (!(await stat(real)).isDirectory()) throw new Error('not a folder');
    } catch {
      throw new ApiError('import_dir_not_found');
    }
    const roots = await Promise.all(this.opts.roots.map((r) => realpath(r).catch(() => r)));
    if (!roots.some((root) => within(real, root))) throw new ApiError('import_dir_outside_roots');
    return real;
  }

  /** The job's named steps: open the source, count it, run the importer, record the outcome. */
  private async execute(
    id: number,
    name: string,
    dryRun: boolean,
    args: Record<string, string>,
    job: { stopping: boolean },
  ): Promise<void> {
    const now = () => iso(this.clock.now());
    let counts = zero();
    const beat = setInterval(() => {
      this.repo.update(id, { now: now() }).catch(() => {});
    }, HEARTBEAT_MS);
    beat.unref();
    let source: ImportSource | undefined;
    try {
      await this.repo.update(id, { status: 'running', started_at: now(), now: now() });
      try {
        source = await this.opts.open(name, args);
        const totals = await source.totals();
        await this.repo.update(id, { total: COUNTED.reduce((n, k) => n + totals[k], 0), now: now() });
      } catch (e) {
        await this.fail(id, counts, 'source_unavailable', secretless(e, args.db));
        return;
      }
      const report = await this.importer.run(source, {
        dryRun,
        onProgress: async (c) => {
          if (job.stopping) throw new Stopping();
          counts = c;
          await this.repo.update(id, { counts: JSON.stringify(c), now: now() });
        },
      });
      await this.repo.finish(id, {
        status: 'done',
        counts: JSON.stringify(report.counts),
        report: JSON.stringify(reportBody(report)),
        now: now(),
      });
    } catch (e) {
      if (e instanceof Stopping) await this.fail(id, counts, 'interrupted', null);
      else {
        this.log.error({ job: id, err: secretless(e, args.db) }, 'import job failed');
        await this.fail(id, counts, 'import_failed', secretless(e, args.db));
      }
    } finally {
      clearInterval(beat);
      await source?.close().catch(() => {});
    }
  }

  private fail(id: number, counts: Record<ImportKind, KindCount>, reason: string, message: string | null) {
    return this.repo
      .finish(id, {
        status: 'failed',
        counts: JSON.stringify(counts),
        failure_reason: reason,
        failure_message: message,
        now: iso(this.clock.now()),
      })
      .catch((e) => this.log.error({ job: id, err: (e as Error).message }, 'import job not recorded'));
  }
}

const within = (path: string, root: string) =>
  path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** An error's message without the database URL or its password, at most 500 characters. */
function secretless(e: unknown, dbUrl: string | undefined): string {
  let message = e instanceof Error ? e.message : String(e);
  if (dbUrl) {
    message = message.split(dbUrl).join('[db_url]');
    try {
      const password = decodeURIComponent(new URL(dbUrl).password);
      if (password) message = message.split(password).join('[password]');
    } catch {
      // not a URL: nothing more to hide
    }
  }
  return message.slice(0, 500);
}

function summary(row: Omit<ImportJobRow, 'report'>): ImportJobSummary {
  const counts = { ...zero(), ...(JSON.parse(row.counts) as Partial<Record<ImportKind, KindCount>>) };
  return {
    id: Number(row.id),
    source: row.source as ImportJobSummary['source'],
    dry_run: row.dry_run === 1,
    status: row.status as ImportJobSummary['status'],
    dir: row.dir,
    table_prefix: row.table_prefix,
    counts,
    processed: COUNTED.reduce((n, k) => n + counts[k].created + counts[k].present + counts[k].skipped, 0),
    total: row.total === null ? null : Number(row.total),
    failure:
      row.failure_reason === null ? null : { reason: row.failure_reason, message: row.failure_message },
    created_by: Number(row.created_by),
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
}

function reportBody(r: ImportReport): ImportReportBody {
  return {
    ok: r.ok,
    counts: r.counts,
    reconciliation: r.reconciliation,
    problems: r.problems.map((p) => ({
      kind: p.kind,
      source_id: p.sourceId,
      reason: p.reason,
      ...(p.detail !== undefined ? { detail: p.detail } : {}),
    })),
    problem_count: r.problemCount,
    revenue: r.revenue,
    stripe: r.stripe,
    links: {
      orders: r.links.orders,
      subscriptions: r.links.subscriptions,
      kept: r.links.kept.map((k) => ({
        license: k.license,
        kind: k.kind,
        source_id: k.sourceId,
        kept_id: k.keptId,
      })),
    },
    old_gateways: r.oldGateways.map((g) => ({
      subscription: g.subscription,
      gateway: g.gateway,
      gateway_profile_id: g.profile,
      next_payment_at: g.nextPaymentAt,
    })),
    totals: r.totals,
  };
}
