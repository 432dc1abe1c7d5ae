import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts } from './helpers.js';

/**
 * Integrity and signatures of stored artifacts (docs/releases.md, 'Signatures and Content-MD5'):
 * `file_md5` is the base64 MD5 of the plain bytes (a download's `Content-MD5`), `signature` the
 * base64 Ed25519 signature over the SHA-384 digest of the plain bytes, made with the signing key
 * `signing_key_id` at `signed_at`. All four are null for an external link (bytes never fetched)
 * and, until the data step run after the migrations has read them, for artifacts stored before
 * this migration: a schema migration cannot reach the vault.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('artifacts').addColumn('file_md5', 'varchar(24)').execute();
  await db.schema.alterTable('artifacts').addColumn('signature', 'varchar(100)').execute();
  await db.schema.alterTable('artifacts').addColumn('signing_key_id', 'varchar(40)').execute();
  await db.schema.alterTable('artifacts').addColumn('signed_at', ts).execute();
}
