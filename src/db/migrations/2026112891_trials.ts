import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';
import { notNull, ts, withId } from './helpers.js';

/**
 * Trials (docs/selling.md, 'Trials'). A product offers one with `trial_days` (null = none) for
 * `trial_sites` sites; a license marks itself a trial until it is bought. `trial_claims` holds one
 * row per product and email, and one per product and site: its unique index is what makes "once
 * per email, once per site" exact under parallel requests, on both databases.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema.alterTable('products').addColumn('trial_days', 'integer').execute();
  await db.schema.alterTable('products').addColumn('trial_sites', 'integer').execute();
  await db.schema
    .alterTable('licenses')
    .addColumn('trial', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await withId(db.schema.createTable('trial_claims'), dialect)
    .addColumn('product_id', 'integer', notNull)
    .addColumn('kind', 'varchar(10)', notNull)
    .addColumn('value', 'varchar(255)', notNull)
    .addColumn('license_id', 'integer', notNull)
    .addColumn('created_at', ts, notNull)
    .execute();
  await db.schema
    .createIndex('trial_claims_once')
    .on('trial_claims')
    .columns(['product_id', 'kind', 'value'])
    .unique()
    .execute();
  // The conversion looks up a customer's trial of a product.
  await db.schema
    .createIndex('licenses_trial')
    .on('licenses')
    .columns(['user_id', 'product_id'])
    .where(sql<boolean>`${sql.ref('trial')} = 1`)
    .execute();
}
