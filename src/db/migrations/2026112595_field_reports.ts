import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { notNull } from './helpers.js';

/**
 * What runs in the field (docs/distribution.md, 'What runs in the field'): how many sites run each
 * version of a product, and on which platform and PHP versions, per UTC day. No domain, address,
 * key or installation id is stored. `field_sites` holds, for today and yesterday only, a keyed hash
 * of each site already counted that day, so that every server process flushing the same day counts
 * a site once (the day leads its key, which the prune reads). `field_counts` holds the figures:
 * `kind` is `version`, `platform` (with the platform's name in `name`) or `php`.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('field_sites')
    .addColumn('day', 'varchar(10)', notNull)
    .addColumn('product_id', 'integer', notNull)
    .addColumn('site', 'varchar(32)', notNull)
    .addPrimaryKeyConstraint('field_sites_pk', ['day', 'product_id', 'site'])
    .execute();
  await db.schema
    .createTable('field_counts')
    .addColumn('product_id', 'integer', notNull)
    .addColumn('day', 'varchar(10)', notNull)
    .addColumn('kind', 'varchar(10)', notNull)
    .addColumn('name', 'varchar(32)', notNull)
    .addColumn('version', 'varchar(64)', notNull)
    .addColumn('sites', 'bigint', notNull)
    .addPrimaryKeyConstraint('field_counts_pk', ['product_id', 'day', 'kind', 'name', 'version'])
    .execute();
  await db.schema.createIndex('field_counts_day').on('field_counts').column('day').execute();
}
