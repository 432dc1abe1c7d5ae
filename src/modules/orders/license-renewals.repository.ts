import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { forUpdate, on, type Tx } from '../../db/transaction.js';

/** The order a renewal link of one license and period made (docs/selling.md, 'Renewals'): queries only. */
export class RenewalLinkRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * The period's row, made if absent, read locked until the transaction ends: a parallel open of a
   * link for the same period waits on the primary key (PostgreSQL) or the one writer (SQLite),
   * then finds the order this one made.
   */
  async claim(
    licenseId: number,
    periodEnd: number,
    now: string,
    tx: Tx,
  ): Promise<{ order_id: number | null }> {
    await on(this.db, tx)
      .insertInto('renewal_link_orders')
      .values({ license_id: licenseId, period_end: periodEnd, order_id: null, created_at: now })
      .onConflict((oc) => oc.columns(['license_id', 'period_end']).doNothing())
      .execute();
    return on(this.db, tx)
      .selectFrom('renewal_link_orders')
      .select('order_id')
      .where('license_id', '=', licenseId)
      .where('period_end', '=', periodEnd)
      .$call(forUpdate(this.dialect))
      .executeTakeFirstOrThrow();
  }

  async setOrder(licenseId: number, periodEnd: number, orderId: number, tx: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('renewal_link_orders')
      .set({ order_id: orderId })
      .where('license_id', '=', licenseId)
      .where('period_end', '=', periodEnd)
      .execute();
  }
}
