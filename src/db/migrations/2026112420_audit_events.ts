import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { notNull, ts, withId } from './helpers.js';

/**
 * The audit trail (docs/admin.md, 'Audit trail'): one row per administrator change, written in the
 * change's own transaction. The two indexes serve the list's two ways in: one entity's history
 * (entity_type, entity_id, newest first by id) and everything, newest first.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('audit_events'), dialect)
    .addColumn('actor_user_id', 'integer', notNull)
    .addColumn('actor_email', 'varchar(254)', notNull)
    .addColumn('entity_type', 'varchar(40)', notNull)
    .addColumn('entity_id', 'integer', notNull)
    .addColumn('action', 'varchar(40)', notNull)
    .addColumn('changes', 'text', notNull)
    .addColumn('created_at', ts, notNull)
    .execute();
  await db.schema
    .createIndex('audit_events_entity')
    .on('audit_events')
    .columns(['entity_type', 'entity_id', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_events_actor')
    .on('audit_events')
    .columns(['actor_user_id', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_events_created')
    .on('audit_events')
    .columns(['created_at', 'id'])
    .execute();
}
