import type { Kysely } from 'kysely';
import { ts } from './helpers.js';

/**
 * Saved cards (docs/payments.md, 'Saved cards'). `stripe_cards` keeps what a buyer may be shown of
 * each card kept with Stripe (brand, last four digits, expiry; never a number), so a renewal email
 * can name the card it will charge without asking Stripe. `stripe_subscription_cards` is the card a
 * buyer chose for one subscription's renewals, instead of the one kept last.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('stripe_cards')
    .addColumn('payment_method_id', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('customer_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('brand', 'varchar(32)', (c) => c.notNull())
    .addColumn('last4', 'varchar(4)', (c) => c.notNull())
    .addColumn('exp_month', 'integer', (c) => c.notNull())
    .addColumn('exp_year', 'integer', (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('stripe_cards_customer').on('stripe_cards').column('customer_id').execute();
  await db.schema
    .createTable('stripe_subscription_cards')
    .addColumn('subscription_id', 'integer', (c) =>
      c.primaryKey().references('subscriptions.id').onDelete('cascade'),
    )
    .addColumn('payment_method_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
}
