import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

const COLUMNS = `id, token_hash, binding_version, policy, product_id, release_id, artifact_id, artifact_sha256,
  purpose, license_id, activation_id, activation_revision, identity_key, installation_id,
  domain_normalized, created_at, expires_at, used_at, invalidated_at, invalidated_reason, user_id`;

/**
 * Download tokens are found by their locator and hash (docs/distribution.md, 'What a token is'):
 * the unique index on the hash alone, whose every entry went to a random page, gives way to an
 * index on (token_locator, token_hash), which grows at its end (docs/performance.md, 'Download
 * token locators'). The tokens minted before keep no locator and are found by their hash, on a
 * unique partial index that new tokens never write to.
 *
 * SQLite cannot drop a column's UNIQUE constraint: the table is rebuilt with the same columns, ids
 * and autoincrement sequence, and its indexes made again.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') {
    await sql`alter table download_tokens drop constraint download_tokens_token_hash_key`.execute(db);
    await sql`alter table download_tokens add column token_locator bigint`.execute(db);
  } else {
    await sql`create table download_tokens_next (
      "id" integer primary key autoincrement, "token_hash" char(64) not null,
      "binding_version" integer not null, "policy" varchar(16) not null,
      "product_id" integer not null, "release_id" integer not null, "artifact_id" integer not null,
      "artifact_sha256" char(64) not null, "purpose" varchar(16) not null, "license_id" integer,
      "activation_id" integer, "activation_revision" integer, "identity_key" char(64),
      "installation_id" char(36), "domain_normalized" varchar(300), "created_at" varchar(30) not null,
      "expires_at" varchar(30) not null, "used_at" varchar(30), "invalidated_at" varchar(30),
      "invalidated_reason" varchar(32), "user_id" integer, "token_locator" integer)`.execute(db);
    await sql
      .raw(`insert into download_tokens_next (${COLUMNS}) select ${COLUMNS} from download_tokens`)
      .execute(db);
    // The next id continues after the highest ever given, as before, even if its row was deleted.
    await sql`delete from sqlite_sequence where name = 'download_tokens_next'`.execute(db);
    await sql`insert into sqlite_sequence (name, seq)
      select 'download_tokens_next', seq from sqlite_sequence where name = 'download_tokens'`.execute(db);
    await sql`drop table download_tokens`.execute(db);
    await sql`alter table download_tokens_next rename to download_tokens`.execute(db);
    for (const column of ['activation_id', 'release_id', 'artifact_id']) {
      await db.schema.createIndex(`download_tokens_${column}`).on('download_tokens').column(column).execute();
    }
    await db.schema
      .createIndex('download_tokens_account_license')
      .on('download_tokens')
      .column('license_id')
      .where(sql.ref('user_id'), 'is not', null)
      .execute();
  }
  await db.schema
    .createIndex('download_tokens_locator')
    .on('download_tokens')
    .columns(['token_locator', 'token_hash'])
    .execute();
  await db.schema
    .createIndex('download_tokens_unlocated')
    .on('download_tokens')
    .column('token_hash')
    .unique()
    .where(sql.ref('token_locator'), 'is', null)
    .execute();
}
