import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  // Single-use download tokens (docs/distribution.md): the hash of the bearer string and Token
  // Binding v1.
  await withId(db.schema.createTable('download_tokens'), dialect)
    .addColumn('token_hash', 'char(64)', (c) => c.notNull().unique())
    .addColumn('binding_version', 'integer', (c) => c.notNull())
    .addColumn('policy', 'varchar(16)', (c) => c.notNull())
    .addColumn('product_id', 'integer', (c) => c.notNull())
    .addColumn('release_id', 'integer', (c) => c.notNull())
    .addColumn('artifact_id', 'integer', (c) => c.notNull())
    .addColumn('artifact_sha256', 'char(64)', (c) => c.notNull())
    .addColumn('purpose', 'varchar(16)', (c) => c.notNull())
    .addColumn('license_id', 'integer')
    .addColumn('activation_id', 'integer')
    .addColumn('activation_revision', 'integer')
    .addColumn('identity_key', 'char(64)')
    .addColumn('installation_id', 'char(36)')
    .addColumn('domain_normalized', 'varchar(300)')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('used_at', ts)
    .addColumn('invalidated_at', ts)
    .addColumn('invalidated_reason', 'varchar(32)')
    .execute();
  for (const column of ['license_id', 'activation_id', 'release_id', 'artifact_id', 'expires_at']) {
    await db.schema.createIndex(`download_tokens_${column}`).on('download_tokens').column(column).execute();
  }
}
