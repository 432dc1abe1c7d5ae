import type { Kysely } from 'kysely';

/**
 * A gateway's payment instructions (docs/checkout.md, 'Gateways and order statuses'): what a
 * customer paying by bank transfer or cheque must do, shown while the order waits for payment.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('payment_gateways')
    .addColumn('instructions', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
}
