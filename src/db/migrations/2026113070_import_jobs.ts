import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { notNull, ts, withId } from './helpers.js';

/**
 * Imports started from the console (docs/migrating.md, 'From the console'): one row per job, its
 * progress and its report. `active` is 1 while the job is queued or running and null after; its
 * unique index is what keeps a store to one job at a time, under parallel starts and across
 * processes, on both databases (null never collides).
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('import_jobs'), dialect)
    .addColumn('source', 'varchar(20)', notNull)
    .addColumn('dry_run', 'integer', notNull)
    .addColumn('status', 'varchar(10)', notNull)
    .addColumn('active', 'integer')
    .addColumn('dir', 'text')
    .addColumn('table_prefix', 'varchar(64)')
    .addColumn('counts', 'text', notNull)
    .addColumn('total', 'integer')
    .addColumn('report', 'text')
    .addColumn('failure_reason', 'varchar(40)')
    .addColumn('failure_message', 'text')
    .addColumn('created_by', 'integer', notNull)
    .addColumn('created_at', ts, notNull)
    .addColumn('started_at', ts)
    .addColumn('finished_at', ts)
    .addColumn('heartbeat_at', ts, notNull)
    .execute();
  await db.schema.createIndex('import_jobs_active').on('import_jobs').column('active').unique().execute();
}
