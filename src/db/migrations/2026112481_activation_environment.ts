import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Staging sites and reinstall takeovers (docs/licensing.md, '2.3 Staging and development sites'
 * and '2.4 Reinstalls'). Every existing activation is a production one. `deactivation_reason` and
 * `replaced_by` stay null for an ordinary deactivation; a takeover sets them on the activation it
 * replaced (its history). The partial index answers the production count of a license, read by
 * every validate and activation, from the index alone: the values are literals, so SQLite can see
 * that a query's `status = 'active' and environment = 'production'` implies it.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('activations')
    .addColumn('environment', 'varchar(20)', (c) => c.notNull().defaultTo('production'))
    .execute();
  await db.schema.alterTable('activations').addColumn('deactivation_reason', 'varchar(20)').execute();
  await db.schema.alterTable('activations').addColumn('replaced_by', 'integer').execute();
  await db.schema
    .createIndex('activations_active_production')
    .on('activations')
    .column('license_id')
    .where(
      sql<boolean>`${sql.ref('status')} = ${sql.lit('active')} and ${sql.ref('environment')} = ${sql.lit('production')}`,
    )
    .execute();
}
