import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

/**
 * Off-session renewal charges (docs/payments.md, 'Renewals'): an outbox (docs/development.md,
 * 'Outboxes'). A row is added in the transaction that creates a renewal order whose customer kept
 * a card with Stripe; the worker charges it, and the order is paid by Stripe's event as any other.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('stripe_renewal_charges'), dialect)
    .addColumn('order_id', 'integer', (c) => c.notNull().unique().references('orders.id').onDelete('cascade'))
    // pending, charged (Stripe took the charge; its event pays the order) or failed (the customer pays by the link).
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', ts)
    .addColumn('locked_until', ts)
    .addColumn('last_error', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('stripe_renewal_charges_due')
    .on('stripe_renewal_charges')
    .columns(['status', 'next_attempt_at'])
    .execute();
}
