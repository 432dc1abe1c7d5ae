import type { Kysely } from 'kysely';
import { notNull, ts } from './helpers.js';

/**
 * The one-click renewal link (docs/selling.md, 'Renewals'): the pending order that a link of one
 * license and period made, so that every later open of a link for that period (and parallel
 * opens) pays that one order. The primary key is what makes it one order under parallel
 * requests, on both databases.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('renewal_link_orders')
    .addColumn('license_id', 'integer', notNull)
    .addColumn('period_end', 'bigint', notNull)
    .addColumn('order_id', 'integer')
    .addColumn('created_at', ts, notNull)
    .addPrimaryKeyConstraint('renewal_link_orders_pk', ['license_id', 'period_end'])
    .execute();
}
