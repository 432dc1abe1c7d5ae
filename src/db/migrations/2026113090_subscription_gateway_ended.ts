import type { Kysely } from 'kysely';
import { ts } from './helpers.js';

/**
 * When Tollgate saw an imported subscription's old gateway subscription end (Stripe answered it
 * `canceled`, `incomplete_expired` or no longer known), so Tollgate's renewals never charge a
 * customer the old gateway still bills (docs/migrating.md, 'Subscriptions Stripe still bills').
 * Null while not seen: the renewal worker asks Stripe once before the first renewal.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('subscriptions').addColumn('gateway_profile_ended_at', ts).execute();
}
