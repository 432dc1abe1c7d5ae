import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

/**
 * The mail outbox (docs/email.md) and the password tokens of forgot-password and set-your-password
 * links. A message row is written in the transaction of the change that causes it and sent by the
 * mail worker, which claims due rows with a lease like the webhook outbox.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('mail_messages'), dialect)
    .addColumn('kind', 'varchar(50)', (c) => c.notNull())
    .addColumn('recipient', 'varchar(254)', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    // The message's facts (JSON), rendered into text and HTML when it is sent.
    .addColumn('data', 'text', (c) => c.notNull())
    // Set for messages that must exist once (a license's expiry notice): a second insert is ignored.
    .addColumn('dedupe_key', 'varchar(200)', (c) => c.unique())
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', ts)
    .addColumn('locked_until', ts)
    .addColumn('last_error', 'text')
    .addColumn('sent_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  // The worker's claim: due pending messages in order.
  await db.schema
    .createIndex('mail_messages_due')
    .on('mail_messages')
    .columns(['status', 'next_attempt_at'])
    .execute();
  // The administrator's list filtered by status, newest first.
  await db.schema
    .createIndex('mail_messages_status_id')
    .on('mail_messages')
    .columns(['status', 'id'])
    .execute();

  await withId(db.schema.createTable('password_tokens'), dialect)
    // SHA-256 of the token; the token itself is only ever in the email that carried it.
    .addColumn('token_hash', 'char(64)', (c) => c.notNull().unique())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('purpose', 'varchar(20)', (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('used_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('password_tokens_user').on('password_tokens').columns(['user_id']).execute();
}
