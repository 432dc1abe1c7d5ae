import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * The ETag a bucket gave an artifact's object when it was written (docs/releases.md, 'Objects in
 * a bucket'): while the object's ETag is still that one, a download's pre-check trusts the bytes
 * the upload hashed instead of reading the object a second time. Null for files in the vault.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('artifacts').addColumn('stored_etag', 'varchar(200)').execute();
}
