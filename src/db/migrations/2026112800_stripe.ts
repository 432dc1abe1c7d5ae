import type { Kysely } from 'kysely';
import { ts } from './helpers.js';

/**
 * The Stripe gateway (docs/payments.md, 'Stripe'). A `stripe` row in the gateways, off until the
 * store owner switches it on. `stripe_payments` maps each order to the one PaymentIntent made for
 * it (a retried payment finds it again); `stripe_customers` keeps the card a customer agreed to
 * save for renewals; `stripe_events` holds the id of every event handled, inserted in the
 * transaction of its effect, so an event delivered twice acts once. `orders.disputed_at` is when a
 * chargeback was opened against the order.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db
    .insertInto('payment_gateways')
    .values({
      id: 'stripe',
      title: 'Card (Stripe)',
      enabled: 0,
      currencies: '[]',
      position: 4,
      instructions: '',
    })
    .execute();

  await db.schema.alterTable('orders').addColumn('disputed_at', ts).execute();

  await db.schema
    .createTable('stripe_payments')
    .addColumn('order_id', 'integer', (c) => c.primaryKey().references('orders.id').onDelete('cascade'))
    .addColumn('payment_intent_id', 'varchar(255)', (c) => c.notNull().unique())
    // 1 when the customer agreed at checkout to keep the card for the subscription's renewals.
    .addColumn('save_card', 'integer', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('stripe_customers')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('customer_id', 'varchar(255)', (c) => c.notNull())
    // The card saved for off-session renewals; null until a payment that saved one succeeded.
    .addColumn('payment_method_id', 'varchar(255)')
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('stripe_events')
    .addColumn('id', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('type', 'varchar(100)', (c) => c.notNull())
    .addColumn('received_at', ts, (c) => c.notNull())
    .execute();
}
