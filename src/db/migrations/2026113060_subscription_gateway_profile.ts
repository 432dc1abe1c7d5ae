import type { Kysely } from 'kysely';

/**
 * The payment gateway's own id of a subscription (Stripe's `sub_…`, PayPal's `I-…`), kept when a
 * subscription is imported from another store (docs/migrating.md) so support can find it at the
 * gateway. '' for subscriptions Tollgate started: their renewals are Tollgate's own orders.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('subscriptions')
    .addColumn('gateway_profile_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .execute();
}
