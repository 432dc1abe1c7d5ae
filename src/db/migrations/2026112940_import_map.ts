import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { notNull, ts, withId } from './helpers.js';

/**
 * What an import made of each record of the old store (docs/migrating.md, 'Importing'): one row
 * per source, kind and source id, naming the Tollgate row. Its unique index is what makes a second
 * run of the same import find what the first made rather than make it again.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('import_map'), dialect)
    .addColumn('source', 'varchar(20)', notNull)
    .addColumn('kind', 'varchar(20)', notNull)
    .addColumn('source_id', 'varchar(255)', notNull)
    .addColumn('target_id', 'integer', notNull)
    .addColumn('created_at', ts, notNull)
    .execute();
  await db.schema
    .createIndex('import_map_source')
    .on('import_map')
    .columns(['source', 'kind', 'source_id'])
    .unique()
    .execute();
}
