import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  // Customer-approval activation tokens (docs/oauth.md): only the SHA-256 of the token is stored.
  await withId(db.schema.createTable('oauth_activation_tokens'), dialect)
    .addColumn('token_hash', 'char(64)', (c) => c.notNull().unique())
    .addColumn('license_id', 'integer', (c) => c.notNull().references('licenses.id').onDelete('cascade'))
    .addColumn('identity_key', 'char(64)', (c) => c.notNull())
    .addColumn('domain_normalized', 'varchar(300)', (c) => c.notNull())
    .addColumn('installation_id', 'char(36)', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('used_at', ts)
    .execute();
  await db.schema
    .createIndex('oauth_tokens_license')
    .on('oauth_activation_tokens')
    .column('license_id')
    .execute();
  await db.schema
    .createIndex('oauth_tokens_expires')
    .on('oauth_activation_tokens')
    .column('expires_at')
    .execute();
}
