import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

/**
 * The store's Ed25519 signing keys (docs/administration.md, 'Signing keys'), shared by every
 * server process on the database. `public_key` is the raw 32-byte key in base64; `private_key`
 * is the 32-byte seed sealed with the vault key (base64), and is emptied (null) once the key is
 * retired: a retired key only verifies. At most one key per algorithm is active (`retired_at` null),
 * whatever races the processes lose: the first key created by two processes at once is one key.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('signing_keys'), dialect)
    .addColumn('key_id', 'varchar(40)', (c) => c.notNull().unique())
    .addColumn('algorithm', 'varchar(20)', (c) => c.notNull())
    .addColumn('public_key', 'varchar(100)', (c) => c.notNull())
    .addColumn('private_key', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('retired_at', ts)
    .execute();
  await db.schema
    .createIndex('signing_keys_one_active')
    .on('signing_keys')
    .column('algorithm')
    .unique()
    .where(sql.ref('retired_at'), 'is', null)
    .execute();
}
