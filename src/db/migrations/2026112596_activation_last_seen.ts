import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';
import { ts } from './helpers.js';

/**
 * When each site was last heard from (docs/licensing.md, 'Last seen and stale activations').
 * Existing activations take the best time already known: their activation, or the newest download
 * token their update checks and package requests were given, whichever is later (one pass over the
 * tokens, grouped, rather than a lookup per activation: the tokens have no activation index). The
 * partial index is what the stale-activation job walks: active sites, oldest first.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('activations').addColumn('last_seen_at', ts).execute();
  await sql`update activations set last_seen_at = activated_at`.execute(db);
  await sql`update activations set last_seen_at = seen.at
    from (select activation_id, max(created_at) as at from download_tokens
          where activation_id is not null group by activation_id) as seen
    where seen.activation_id = activations.id and seen.at > activations.last_seen_at`.execute(db);
  await db.schema
    .createIndex('activations_active_last_seen')
    .on('activations')
    .column('last_seen_at')
    .where(sql<boolean>`${sql.ref('status')} = ${sql.lit('active')}`)
    .execute();
}
