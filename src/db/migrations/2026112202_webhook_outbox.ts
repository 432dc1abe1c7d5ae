import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('webhook_events'), dialect)
    .addColumn('event_id', 'char(36)', (c) => c.notNull().unique())
    .addColumn('event', 'varchar(50)', (c) => c.notNull())
    // The exact encoded envelope: signed and sent byte for byte on every attempt.
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', ts)
    .addColumn('locked_until', ts)
    .addColumn('last_error', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_events_due')
    .on('webhook_events')
    .columns(['status', 'next_attempt_at'])
    .execute();

  await withId(db.schema.createTable('webhook_attempts'), dialect)
    .addColumn('event_id', 'char(36)', (c) => c.notNull())
    .addColumn('event', 'varchar(50)', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('response_code', 'integer')
    .addColumn('delivered', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('attempted_at', ts, (c) => c.notNull())
    .execute();
}
