import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { InvoicesTables, SequenceKind } from './invoices.tables.js';

export type InvoiceRow = Selectable<InvoicesTables['invoices']>;

/** Invoices, credit notes and their number sequences: queries only. */
export class InvoicesRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * The next number of a sequence, in the caller's transaction. The UPDATE holds the sequence's
   * row until `tx` ends (PostgreSQL row lock; SQLite's single writer), so parallel payments take
   * consecutive numbers one after the other, and a rolled-back payment gives its number back.
   */
  async nextNumber(kind: SequenceKind, period: number, tx: Tx): Promise<number> {
    const db = on(this.db, tx);
    await db
      .insertInto('document_sequences')
      .values({ kind, period, last: 0 })
      .onConflict((oc) => oc.columns(['kind', 'period']).doNothing())
      .execute();
    const row = await db
      .updateTable('document_sequences')
      .set({ last: sql`last + 1` })
      .where('kind', '=', kind)
      .where('period', '=', period)
      .returning('last')
      .executeTakeFirstOrThrow();
    return Number(row.last);
  }

  async insert(values: Insertable<InvoicesTables['invoices']>, tx: Tx): Promise<void> {
    await on(this.db, tx).insertInto('invoices').values(values).execute();
  }

  /** The order's invoice and credit notes, oldest first. */
  ofOrder(orderId: number, tx?: Tx): Promise<InvoiceRow[]> {
    return on(this.db, tx)
      .selectFrom('invoices')
      .selectAll()
      .where('order_id', '=', orderId)
      .orderBy('id')
      .execute();
  }

  find(id: number, tx?: Tx): Promise<InvoiceRow | undefined> {
    return on(this.db, tx).selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirst();
  }
}
