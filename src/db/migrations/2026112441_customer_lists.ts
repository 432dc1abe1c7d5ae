import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * The console's customer and subscription lists (docs/admin.md, 'Customers' and 'Subscriptions'):
 * each filter and sort key has an index on (column, id), so that a page is read by walking the
 * index and stopping after the page instead of sorting the table (as 2026112401_list_indexes does
 * for licenses). On SQLite the id is the rowid, which every index already ends with; PostgreSQL
 * needs it named. The next-payment index is built NULLS FIRST on PostgreSQL so that both databases
 * answer in one order (SQLite puts nulls first ascending).
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  // Subscriptions: filtered by status, customer and product; sorted by creation and next payment.
  await db.schema.createIndex('subscriptions_status').on('subscriptions').columns(['status', 'id']).execute();
  await db.schema
    .createIndex('subscriptions_product')
    .on('subscriptions')
    .columns(['product_id', 'id'])
    .execute();
  await db.schema.dropIndex('subscriptions_user').execute();
  await db.schema.createIndex('subscriptions_user').on('subscriptions').columns(['user_id', 'id']).execute();
  await db.schema
    .createIndex('subscriptions_created')
    .on('subscriptions')
    .columns(['created_at', 'id'])
    .execute();
  if (dialect === 'postgres') {
    await sql`create index subscriptions_next_payment on subscriptions (next_payment_at asc nulls first, id)`.execute(
      db,
    );
  } else {
    await db.schema
      .createIndex('subscriptions_next_payment')
      .on('subscriptions')
      .columns(['next_payment_at', 'id'])
      .execute();
  }
  // Orders by subscription (its renewal orders) and by customer, newest first.
  await db.schema.dropIndex('orders_subscription').execute();
  await db.schema
    .createIndex('orders_subscription')
    .on('orders')
    .columns(['subscription_id', 'id'])
    .execute();
  await db.schema.dropIndex('orders_customer').execute();
  await db.schema.createIndex('orders_customer').on('orders').columns(['customer_id', 'id']).execute();
  // The user list filtered by role and sorted by email or by name (last name, first name).
  await db.schema.createIndex('users_role_email').on('users').columns(['role', 'email', 'id']).execute();
  await db.schema
    .createIndex('users_role_name')
    .on('users')
    .columns(['role', 'last_name', 'first_name', 'id'])
    .execute();
}
