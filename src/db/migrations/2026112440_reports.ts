import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { notNull } from './helpers.js';

/**
 * The dashboard's report (docs/admin.md, 'Dashboard'; plans in docs/performance.md, 'The
 * dashboard's report'). `daily_counters` holds the update checks and downloads per UTC day and
 * product, added to by every server process's flush; the indexes let each figure read only the
 * rows of its days: sales by payment time (covering, so the table is never visited), new
 * activations by activation time, active activations and drafts by status, and the failing
 * webhooks by status and time with their last attempt by event.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('daily_counters')
    .addColumn('kind', 'varchar(20)', notNull)
    .addColumn('day', 'varchar(10)', notNull)
    .addColumn('product_id', 'integer', notNull)
    .addColumn('count', 'bigint', notNull)
    .addPrimaryKeyConstraint('daily_counters_pk', ['kind', 'day', 'product_id'])
    .execute();
  await db.schema
    .createIndex('orders_paid')
    .on('orders')
    .columns(['paid_at', 'status', 'currency', 'decimals', 'total'])
    .execute();
  await db.schema.createIndex('activations_activated').on('activations').column('activated_at').execute();
  await db.schema.createIndex('activations_status').on('activations').columns(['status', 'id']).execute();
  await db.schema.createIndex('releases_status').on('releases').columns(['status', 'id']).execute();
  await db.schema
    .createIndex('webhook_events_status_updated')
    .on('webhook_events')
    .columns(['status', 'updated_at'])
    .execute();
  await db.schema
    .createIndex('webhook_attempts_event')
    .on('webhook_attempts')
    .columns(['event_id', 'attempt'])
    .execute();
}
