import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  // One cart per customer (user_id unique; NULLs are guests' carts). Lines and coupon codes are
  // JSON text: a cart is read and written whole under its row lock.
  await withId(db.schema.createTable('carts'), dialect)
    .addColumn('user_id', 'integer', (c) => c.unique().references('users.id').onDelete('cascade'))
    .addColumn('items', 'text', (c) => c.notNull())
    .addColumn('coupons', 'text', (c) => c.notNull())
    // {country, state, postcode} for taxes and shipping, and the chosen shipping rate id.
    .addColumn('destination', 'text')
    .addColumn('shipping_method', 'varchar(100)')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('carts_expires').on('carts').column('expires_at').execute();

  // A browser's customer-session cookie names a row here (by SHA-256); several sessions can share
  // one customer's cart (two devices).
  await db.schema
    .createTable('cart_sessions')
    .addColumn('id_hash', 'char(64)', (c) => c.primaryKey())
    .addColumn('cart_id', 'integer', (c) => c.notNull().references('carts.id').onDelete('cascade'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('cart_sessions_cart').on('cart_sessions').column('cart_id').execute();
  await db.schema.createIndex('cart_sessions_expires').on('cart_sessions').column('expires_at').execute();

  // The ledger of coupon uses that checkout claims (one row per use); the cart reads the counts
  // per customer for `usage_limit_per_user`.
  await withId(db.schema.createTable('coupon_usages'), dialect)
    .addColumn('coupon_id', 'integer', (c) => c.notNull().references('coupons.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('email', 'varchar(254)')
    .addColumn('order_id', 'integer')
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('coupon_usages_user')
    .on('coupon_usages')
    .columns(['coupon_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('coupon_usages_email')
    .on('coupon_usages')
    .columns(['coupon_id', 'email'])
    .execute();
}
