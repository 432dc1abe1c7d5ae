import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const money = 'bigint';
  await db.schema
    .createTable('app_state')
    .addColumn('key', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await withId(db.schema.createTable('users'), dialect)
    .addColumn('email', 'varchar(254)', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'varchar(20)', (c) => c.notNull())
    .addColumn('first_name', 'varchar(100)', (c) => c.notNull().defaultTo(''))
    .addColumn('last_name', 'varchar(100)', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id_hash', 'char(64)', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('nonce', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();

  await withId(db.schema.createTable('application_passwords'), dialect)
    .addColumn('uuid', 'char(36)', (c) => c.notNull().unique())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('password_hash', 'char(64)', (c) => c.notNull().unique())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('last_used_at', ts)
    .execute();

  await db.schema
    .createTable('rate_counters')
    .addColumn('bucket', 'varchar(200)', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_counters_pk', ['bucket', 'window_start'])
    .execute();

  await withId(db.schema.createTable('products'), dialect)
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('type', 'varchar(30)', (c) => c.notNull())
    .addColumn('price_minor', money, (c) => c.notNull())
    .addColumn('virtual', 'integer', (c) => c.notNull())
    .addColumn('stock_quantity', 'integer')
    .addColumn('licensing_enabled', 'varchar(100)')
    .addColumn('activation_limit', 'integer')
    .addColumn('activation_mode', 'varchar(20)')
    .addColumn('subscription_period', 'varchar(10)')
    .addColumn('subscription_interval', 'integer')
    .addColumn('entitlement_policy', 'text')
    .addColumn('slug', 'varchar(200)')
    .addColumn('filename_template', 'varchar(200)')
    .addColumn('storage_driver', 'varchar(30)')
    .addColumn('software_enabled', 'varchar(10)')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  // Not unique: several published products sharing a slug is a reported state (software_slug_ambiguous).
  await db.schema.createIndex('products_slug').on('products').column('slug').execute();

  await withId(db.schema.createTable('product_variations'), dialect)
    .addColumn('product_id', 'integer', (c) => c.notNull().references('products.id').onDelete('cascade'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('price_minor', money, (c) => c.notNull())
    .addColumn('attributes', 'text', (c) => c.notNull())
    .addColumn('activation_limit', 'integer')
    .addColumn('stock_quantity', 'integer')
    .addColumn('entitlement_policy', 'text')
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('variations_product').on('product_variations').column('product_id').execute();

  await withId(db.schema.createTable('coupons'), dialect)
    .addColumn('code', 'varchar(100)', (c) => c.notNull().unique())
    .addColumn('discount_type', 'varchar(20)', (c) => c.notNull())
    .addColumn('amount', 'varchar(40)', (c) => c.notNull())
    .addColumn('expires_at', ts)
    .addColumn('usage_limit', 'integer')
    .addColumn('usage_limit_per_user', 'integer')
    .addColumn('usage_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('minimum_amount', 'varchar(40)')
    .addColumn('maximum_amount', 'varchar(40)')
    .addColumn('individual_use', 'integer', (c) => c.notNull())
    .addColumn('product_ids', 'text', (c) => c.notNull())
    .addColumn('excluded_product_ids', 'text', (c) => c.notNull())
    .addColumn('currency', 'varchar(3)')
    .addColumn('free_shipping', 'integer', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();

  await withId(db.schema.createTable('tax_rates'), dialect)
    .addColumn('country', 'varchar(2)', (c) => c.notNull())
    .addColumn('state', 'varchar(100)', (c) => c.notNull())
    .addColumn('postcode', 'varchar(100)', (c) => c.notNull())
    .addColumn('rate', 'varchar(20)', (c) => c.notNull())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('shipping', 'integer', (c) => c.notNull())
    .addColumn('compound', 'integer', (c) => c.notNull())
    .addColumn('priority', 'integer', (c) => c.notNull())
    .execute();

  await withId(db.schema.createTable('shipping_zones'), dialect)
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('regions', 'text', (c) => c.notNull())
    .addColumn('methods', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('payment_gateways')
    .addColumn('id', 'varchar(50)', (c) => c.primaryKey())
    .addColumn('title', 'varchar(200)', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('currencies', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .execute();
  await db
    .insertInto('payment_gateways')
    .values([
      { id: 'bacs', title: 'Direct bank transfer', enabled: 1, currencies: '[]', position: 1 },
      { id: 'cheque', title: 'Check payments', enabled: 1, currencies: '[]', position: 2 },
      { id: 'test_card', title: 'Card (test gateway)', enabled: 1, currencies: '[]', position: 3 },
    ])
    .execute();
}
