import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { OrdersTables } from './orders.tables.js';

export type RefundRow = Selectable<OrdersTables['order_refunds']>;
export type NoteRow = Selectable<OrdersTables['order_notes']>;

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

  async insertRefund(values: Insertable<OrdersTables['order_refunds']>, tx: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .insertInto('order_refunds')
      .values(values)
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  findRefund(id: number, tx?: Tx): Promise<RefundRow | undefined> {
    return on(this.db, tx).selectFrom('order_refunds').selectAll().where('id', '=', id).executeTakeFirst();
  }

  refunds(orderId: number, tx?: Tx): Promise<RefundRow[]> {
    return on(this.db, tx)
      .selectFrom('order_refunds')
      .selectAll()
      .where('order_id', '=', orderId)
      .orderBy('id')
      .execute();
  }

  async insertNote(values: Insertable<OrdersTables['order_notes']>, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .insertInto('order_notes')
      .values(values)
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  findNote(id: number, tx?: Tx): Promise<NoteRow | undefined> {
    return on(this.db, tx).selectFrom('order_notes').selectAll().where('id', '=', id).executeTakeFirst();
  }

  notes(orderId: number, tx?: Tx): Promise<NoteRow[]> {
    return on(this.db, tx)
      .selectFrom('order_notes')
      .selectAll()
      .where('order_id', '=', orderId)
      .orderBy('id')
      .execute();
  }
}
