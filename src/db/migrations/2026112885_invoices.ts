import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts, withId } from './helpers.js';

/**
 * Invoices and credit notes (docs/invoices.md). `document_sequences` holds the last number given
 * in each sequence (`invoice` or `credit_note`, per year when the store resets yearly, else period
 * 0): a paid order or a refund raises it in its own transaction, so a rolled-back payment gives its
 * number back and the numbers stay gap-free. `invoices` holds each issued document with a frozen
 * snapshot of seller, buyer, lines and totals; it is never updated.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('document_sequences')
    .addColumn('kind', 'varchar(20)', (c) => c.notNull())
    .addColumn('period', 'integer', (c) => c.notNull())
    .addColumn('last', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('document_sequences_pk', ['kind', 'period'])
    .execute();

  await withId(db.schema.createTable('invoices'), dialect)
    .addColumn('order_id', 'integer', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    // invoice or credit_note.
    .addColumn('kind', 'varchar(20)', (c) => c.notNull())
    .addColumn('number', 'varchar(100)', (c) => c.notNull().unique())
    .addColumn('refund_id', 'integer', (c) => c.references('order_refunds.id').onDelete('cascade'))
    .addColumn('snapshot', 'text', (c) => c.notNull())
    .addColumn('issued_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('invoices_order').on('invoices').columns(['order_id', 'id']).execute();
}
