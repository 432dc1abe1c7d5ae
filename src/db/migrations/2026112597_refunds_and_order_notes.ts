import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

/**
 * Refunds and order notes (docs/payments.md). `orders.refunded_total` (minor units) is what the
 * order's refunds add up to: a refund raises it with a conditional update, so parallel refunds can
 * never pass the order's total. Each refund is a row of `order_refunds`; `order_notes` is the
 * order's history (payments, refunds, disputes) and the administrator's own notes.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('orders')
    .addColumn('refunded_total', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();

  await withId(db.schema.createTable('order_refunds'), dialect)
    .addColumn('order_id', 'integer', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'varchar(1000)', (c) => c.notNull())
    // 1 when this refund brought the order's refunds up to its total.
    .addColumn('full_refund', 'integer', (c) => c.notNull())
    .addColumn('restock', 'integer', (c) => c.notNull())
    .addColumn('actor_user_id', 'integer')
    .addColumn('actor_email', 'varchar(320)')
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('order_refunds_order')
    .on('order_refunds')
    .columns(['order_id', 'id'])
    .execute();

  await withId(db.schema.createTable('order_notes'), dialect)
    .addColumn('order_id', 'integer', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    // payment, refund, dispute or note (the administrator's own).
    .addColumn('kind', 'varchar(20)', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('actor_user_id', 'integer')
    .addColumn('actor_email', 'varchar(320)')
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('order_notes_order').on('order_notes').columns(['order_id', 'id']).execute();
}
