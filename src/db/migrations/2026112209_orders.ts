import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  // Money in minor units of the order's currency; the currency and its exchange rate are locked
  // on the order (rate, rate_id, rate_updated_at) so later rate changes never reprice it.
  await withId(db.schema.createTable('orders'), dialect)
    .addColumn('order_key', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('customer_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('created_via', 'varchar(20)', (c) => c.notNull())
    .addColumn('currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('currency_symbol', 'varchar(8)', (c) => c.notNull())
    .addColumn('decimals', 'integer', (c) => c.notNull())
    .addColumn('base_currency', 'varchar(3)', (c) => c.notNull())
    .addColumn('rate', 'varchar(40)', (c) => c.notNull())
    .addColumn('rate_id', 'varchar(16)', (c) => c.notNull())
    .addColumn('rate_updated_at', ts)
    .addColumn('prices_include_tax', 'integer', (c) => c.notNull())
    .addColumn('subtotal', 'bigint', (c) => c.notNull())
    .addColumn('subtotal_tax', 'bigint', (c) => c.notNull())
    .addColumn('discount_total', 'bigint', (c) => c.notNull())
    .addColumn('discount_tax', 'bigint', (c) => c.notNull())
    .addColumn('shipping_total', 'bigint', (c) => c.notNull())
    .addColumn('shipping_tax', 'bigint', (c) => c.notNull())
    .addColumn('total_tax', 'bigint', (c) => c.notNull())
    .addColumn('total', 'bigint', (c) => c.notNull())
    .addColumn('payment_method', 'varchar(50)', (c) => c.notNull())
    .addColumn('payment_method_title', 'varchar(200)', (c) => c.notNull())
    .addColumn('billing', 'text', (c) => c.notNull())
    .addColumn('shipping', 'text', (c) => c.notNull())
    .addColumn('shipping_lines', 'text', (c) => c.notNull())
    .addColumn('coupons', 'text', (c) => c.notNull())
    .addColumn('customer_note', 'text', (c) => c.notNull())
    .addColumn('custom_fields', 'text', (c) => c.notNull())
    .addColumn('referral_code', 'varchar(100)', (c) => c.notNull())
    .addColumn('ip_address', 'varchar(64)', (c) => c.notNull())
    // JSON [{product_id, variation_id, quantity}] still held back from stock; [] once released.
    .addColumn('stock_held', 'text', (c) => c.notNull())
    // The multi-currency audit snapshot written by the order-creation hooks (JSON).
    .addColumn('audit', 'text')
    .addColumn('subscription_id', 'integer', (c) => c.references('subscriptions.id'))
    // Renewal orders: `<subscription_id>:<due date>`, unique so a due payment yields one order
    // however many schedulers race; null for other orders.
    .addColumn('renewal_of', 'varchar(80)', (c) => c.unique())
    .addColumn('renewal_due_at', ts)
    // SHA-256 of the submit's Idempotency-Key header; a retried submit answers the first order.
    .addColumn('idempotency_hash', 'char(64)', (c) => c.unique())
    .addColumn('tracking_number', 'varchar(100)', (c) => c.notNull().defaultTo(''))
    .addColumn('tracking_url', 'varchar(2000)', (c) => c.notNull().defaultTo(''))
    .addColumn('paid_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('orders_customer').on('orders').column('customer_id').execute();
  await db.schema.createIndex('orders_status').on('orders').column('status').execute();
  await db.schema.createIndex('orders_subscription').on('orders').column('subscription_id').execute();

  await withId(db.schema.createTable('order_items'), dialect)
    .addColumn('order_id', 'integer', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('product_id', 'integer', (c) => c.notNull())
    .addColumn('variation_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'varchar(400)', (c) => c.notNull())
    .addColumn('quantity', 'integer', (c) => c.notNull())
    .addColumn('price', 'bigint', (c) => c.notNull())
    .addColumn('subtotal', 'bigint', (c) => c.notNull())
    .addColumn('subtotal_tax', 'bigint', (c) => c.notNull())
    .addColumn('total', 'bigint', (c) => c.notNull())
    .addColumn('total_tax', 'bigint', (c) => c.notNull())
    .addColumn('meta', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'integer')
    .execute();
  await db.schema.createIndex('order_items_order').on('order_items').column('order_id').execute();

  // One license per licensed line item, however often the order's status changes.
  await db.schema
    .createIndex('licenses_order_item_unique')
    .on('licenses')
    .column('order_item_id')
    .unique()
    .execute();

  // The addresses checkout saves to a customer (bootstrap offers them back).
  await db.schema
    .createTable('customer_addresses')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('billing', 'text', (c) => c.notNull())
    .addColumn('shipping', 'text', (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();

  // Subscriptions get their billing schedule and what a renewal charges.
  const add = (column: string, type: 'varchar(10)' | 'integer' | 'varchar(3)' | 'bigint' | 'varchar(50)') =>
    db.schema.alterTable('subscriptions').addColumn(column, type).execute();
  await add('billing_period', 'varchar(10)');
  await add('billing_interval', 'integer');
  await add('quantity', 'integer');
  await add('currency', 'varchar(3)');
  await add('recurring_total', 'bigint');
  await add('payment_method', 'varchar(50)');
  await add('parent_order_id', 'integer');
  await db.schema.alterTable('subscriptions').addColumn('status_reason', 'text').execute();
}
