import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';
import { notNull, ts, withId } from './helpers.js';

/**
 * License transfers (docs/selling.md, 'Transfers'): an offer of a license to the account of an
 * email, accepted once by an emailed link. Only the SHA-256 of the link's token is stored, and
 * only once the email carrying it is sent. The partial unique index keeps one pending offer per
 * license on both databases; the unique token index finds the offer the link names.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('license_transfers'), dialect)
    .addColumn('license_id', 'integer', notNull)
    .addColumn('from_user_id', 'integer', notNull)
    .addColumn('to_email', 'varchar(254)', notNull)
    .addColumn('keep_activations', 'integer', notNull)
    .addColumn('status', 'varchar(12)', notNull)
    .addColumn('token_hash', 'varchar(64)')
    .addColumn('to_user_id', 'integer')
    .addColumn('created_by', 'integer', notNull)
    .addColumn('expires_at', ts, notNull)
    .addColumn('accepted_at', ts)
    .addColumn('cancelled_at', ts)
    .addColumn('created_at', ts, notNull)
    .addColumn('updated_at', ts, notNull)
    .execute();
  await db.schema
    .createIndex('license_transfers_pending')
    .on('license_transfers')
    .column('license_id')
    .unique()
    .where(sql<boolean>`${sql.ref('status')} = 'pending'`)
    .execute();
  await db.schema
    .createIndex('license_transfers_token')
    .on('license_transfers')
    .column('token_hash')
    .unique()
    .execute();
  // A license's history of offers, newest first (the console's license screen).
  await db.schema
    .createIndex('license_transfers_license')
    .on('license_transfers')
    .columns(['license_id', 'id'])
    .execute();
}
