import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { OrdersTables } from './orders.tables.js';

export type RefundRow = Selectable<OrdersTables['order_refunds']>;
export type NoteRow = Selectable<OrdersTables['order_notes']>;

/** The two logs of an order. */
type OrderLog = 'order_refunds' | 'order_notes';
type LogRow<T extends OrderLog> = Selectable<OrdersTables[T]>;

/** An order's refunds and notes: queries only (docs/development.md, 'Transactions: one way'). */
export class RefundsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * Adds `amount` to the order's refunded total only while the sum stays within its total: the
   * guard is in the UPDATE itself, so two refunds racing past a read can never both pass it.
   */
  async addRefunded(orderId: number, amount: number, now: string, tx: Tx): Promise<boolean> {
    const r = await on(this.db, tx)
      .updateTable('orders')
      .set({ refunded_total: sql`refunded_total + ${amount}`, updated_at: now })
      .where('id', '=', orderId)
      .where(sql<boolean>`refunded_total + ${amount} <= total`)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  insertRefund(values: Insertable<OrdersTables['order_refunds']>, tx: Tx): Promise<number> {
    return this.insert('order_refunds', values, tx);
  }

  findRefund(id: number, tx?: Tx): Promise<RefundRow | undefined> {
    return this.find('order_refunds', id, tx);
  }

  refunds(orderId: number, tx?: Tx): Promise<RefundRow[]> {
    return this.ofOrder('order_refunds', orderId, tx);
  }

  insertNote(values: Insertable<OrdersTables['order_notes']>, tx?: Tx): Promise<number> {
    return this.insert('order_notes', values, tx);
  }

  findNote(id: number, tx?: Tx): Promise<NoteRow | undefined> {
    return this.find('order_notes', id, tx);
  }

  notes(orderId: number, tx?: Tx): Promise<NoteRow[]> {
    return this.ofOrder('order_notes', orderId, tx);
  }

  // Refunds and notes are kept alike: added a row at a time, read by id or by order, oldest first.

  private async insert<T extends OrderLog>(table: T, values: Insertable<OrdersTables[T]>, tx?: Tx) {
    const row = await on(this.db, tx)
      .insertInto(table as OrderLog)
      .values(values as Insertable<OrdersTables[OrderLog]>)
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  private async find<T extends OrderLog>(table: T, id: number, tx?: Tx) {
    const row = await on(this.db, tx)
      .selectFrom(table as OrderLog)
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row as LogRow<T> | undefined;
  }

  private async ofOrder<T extends OrderLog>(table: T, orderId: number, tx?: Tx) {
    const rows = await on(this.db, tx)
      .selectFrom(table as OrderLog)
      .selectAll()
      .where('order_id', '=', orderId)
      .orderBy('id')
      .execute();
    return rows as LogRow<T>[];
  }
}
