import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  // Minimal subscription record: licensing reads its status; the subscriptions module extends it.
  await withId(db.schema.createTable('subscriptions'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('product_id', 'integer', (c) => c.notNull())
    .addColumn('variation_id', 'integer')
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('next_payment_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('subscriptions_user').on('subscriptions').column('user_id').execute();

  await withId(db.schema.createTable('licenses'), dialect)
    .addColumn('license_key', 'varchar(128)', (c) => c.notNull().unique())
    .addColumn('product_id', 'integer', (c) => c.notNull().references('products.id'))
    .addColumn('variation_id', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('order_id', 'integer')
    .addColumn('order_item_id', 'integer')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('subscription_id', 'integer', (c) => c.references('subscriptions.id'))
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('activation_limit', 'integer')
    // Text, not a timestamp type: a legacy unreadable value must survive to be reported.
    .addColumn('usage_expires_at', 'text')
    .addColumn('entitlement_policy', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('licenses_user').on('licenses').column('user_id').execute();
  await db.schema.createIndex('licenses_product').on('licenses').column('product_id').execute();
  await db.schema.createIndex('licenses_subscription').on('licenses').column('subscription_id').execute();
  await db.schema.createIndex('licenses_order').on('licenses').column('order_id').execute();

  await withId(db.schema.createTable('activations'), dialect)
    .addColumn('license_id', 'integer', (c) => c.notNull().references('licenses.id').onDelete('cascade'))
    .addColumn('identity_key', 'char(64)', (c) => c.notNull())
    .addColumn('domain', 'varchar(2048)', (c) => c.notNull())
    .addColumn('domain_normalized', 'varchar(300)', (c) => c.notNull())
    .addColumn('installation_id', 'char(36)', (c) => c.notNull())
    .addColumn('ip_address', 'varchar(64)', (c) => c.notNull())
    .addColumn('machine_id', 'varchar(255)')
    .addColumn('user_agent', 'varchar(512)', (c) => c.notNull())
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('activated_at', ts, (c) => c.notNull())
    .addColumn('deactivated_at', ts)
    .addColumn('activation_revision', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('activations_license').on('activations').column('license_id').execute();
  // The last line of defence under the license row lock: one identity, at most one ACTIVE activation.
  await db.schema
    .createIndex('activations_one_active_identity')
    .on('activations')
    .columns(['license_id', 'identity_key'])
    .unique()
    .where(sql.ref('status'), '=', sql.lit('active'))
    .execute();
}
