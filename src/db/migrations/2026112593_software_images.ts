import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * A product's icon and banner as WordPress shows them (docs/distribution.md, section 10): the
 * content hash of each upload, whose sized files are media rows (docs/catalogue.md, 'Icons and
 * banners'). On the product row, so the update check, which already reads it, needs no query more.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('products').addColumn('software_icon', 'varchar(32)').execute();
  await db.schema.alterTable('products').addColumn('software_banner', 'varchar(32)').execute();
}
