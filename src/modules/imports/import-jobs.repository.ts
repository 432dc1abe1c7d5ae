import type { Selectable } from 'kysely';
import type { Database } from '../../db/database.js';
import { on, type Tx } from '../../db/transaction.js';
import type { ImportJobsTables } from './imports.tables.js';

export type ImportJobRow = Selectable<ImportJobsTables['import_jobs']>;

/** Import jobs started from the console: their state, progress and report. */
export class ImportJobsRepository {
  constructor(private readonly database: Pick<Database, 'db'>) {}

  /** A queued job; refused by the unique index on `active` while another job is active. */
  async insert(
    job: Pick<ImportJobRow, 'source' | 'dry_run' | 'dir' | 'table_prefix' | 'counts' | 'created_by'> & {
      now: string;
    },
    tx: Tx,
  ): Promise<number> {
    const { now, ...values } = job;
    const row = await on(this.database.db, tx)
      .insertInto('import_jobs')
      .values({ ...values, status: 'queued', active: 1, created_at: now, heartbeat_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  async find(id: number): Promise<ImportJobRow | undefined> {
    return this.database.db.selectFrom('import_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The most recent jobs, newest first, without their reports. */
  async recent(limit: number): Promise<Omit<ImportJobRow, 'report'>[]> {
    return this.database.db
      .selectFrom('import_jobs')
      .select([
        'id',
        'source',
        'dry_run',
        'status',
        'active',
        'dir',
        'table_prefix',
        'counts',
        'total',
        'failure_reason',
        'failure_message',
        'created_by',
        'created_at',
        'started_at',
        'finished_at',
        'heartbeat_at',
      ])
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** Progress of an active job; also its heartbeat. */
  async update(
    id: number,
    values: Partial<Pick<ImportJobRow, 'status' | 'counts' | 'total' | 'started_at'>> & { now: string },
  ): Promise<void> {
    const { now, ...rest } = values;
    await this.database.db
      .updateTable('import_jobs')
      .set({ ...rest, heartbeat_at: now })
      .where('id', '=', id)
      .where('active', '=', 1)
      .execute();
  }

  /** Ends an active job: done with its report, or failed with a reason. */
  async finish(
    id: number,
    values: Pick<ImportJobRow, 'status' | 'counts'> &
      Partial<Pick<ImportJobRow, 'report' | 'failure_reason' | 'failure_message'>> & { now: string },
  ): Promise<void> {
    const { now, ...rest } = values;
    await this.database.db
      .updateTable('import_jobs')
      .set({ ...rest, active: null, finished_at: now, heartbeat_at: now })
      .where('id', '=', id)
      .where('active', '=', 1)
      .execute();
  }

  /** Fails the active jobs whose heartbeat is older than `before` (all of them when null): their process stopped. */
  async failStale(before: string | null, now: string): Promise<void> {
    let q = this.database.db
      .updateTable('import_jobs')
      .set({ status: 'failed', active: null, failure_reason: 'interrupted', finished_at: now })
      .where('active', '=', 1);
    if (before !== null) q = q.where('heartbeat_at', '<', before);
    await q.execute();
  }
}
