import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Changes no person made (docs/admin.md, 'Audit trail'): a site whose reinstall takes an
 * activation over. `actor_kind` is `user` for every existing event; for a site, `actor_user_id` is 0
 * (no user has it) and `actor_email` holds the site's domain, so the columns, their NOT NULL and the
 * actor index stay as they are.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('audit_events')
    .addColumn('actor_kind', 'varchar(16)', (c) => c.notNull().defaultTo('user'))
    .execute();
}
