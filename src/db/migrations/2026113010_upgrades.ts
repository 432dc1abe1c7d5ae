import type { Kysely } from 'kysely';

/**
 * Upgrades and downgrades (docs/selling.md, 'Upgrades and downgrades'):
 * - `products.upgrade_paths`: JSON list of the product ids a license of this product may move to,
 *   besides the product's own variations; null = none.
 * - `licenses.tier_paid_minor`: what the license's current tier was worth when an upgrade moved it
 *   there, in the store's base currency's minor units; null = read it from the issuing order item.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('products').addColumn('upgrade_paths', 'text').execute();
  await db.schema.alterTable('licenses').addColumn('tier_paid_minor', 'bigint').execute();
}
