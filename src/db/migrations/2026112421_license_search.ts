import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * The administrator's license search (docs/licensing.md, '7. For store administrators') answers
 * from indexes at a million licenses: a key by its last four characters (an expression index, the
 * rest of the typed tail checked on the few rows it finds), a customer by the start of their email,
 * and a site by the start of its normalised domain or by its installation id. Emails and domains
 * are stored lower-case. SQLite's GLOB walks a plain index for a prefix; PostgreSQL's LIKE does so
 * only with the pattern operator class, whatever the database's collation.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') {
    await sql`create index licenses_key_tail on licenses (lower(right(license_key, 4)))`.execute(db);
    await sql`create index users_email_prefix on users (email text_pattern_ops)`.execute(db);
    await sql`create index activations_domain on activations (domain_normalized text_pattern_ops)`.execute(
      db,
    );
  } else {
    await sql`create index licenses_key_tail on licenses (lower(substr(license_key, -4)))`.execute(db);
    // users.email already has its unique index, which GLOB can walk.
    await db.schema.createIndex('activations_domain').on('activations').column('domain_normalized').execute();
  }
  await db.schema
    .createIndex('activations_installation')
    .on('activations')
    .column('installation_id')
    .execute();
}
