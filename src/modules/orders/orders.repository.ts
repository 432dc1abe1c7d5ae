import { type Kysely, sql, type Updateable } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { forUpdate, on, type Tx } from '../../db/transaction.js';
import type { NewOrder, NewOrderItem, OrderItemRow, OrderRow, StockHold } from './orders.model.js';
import type { OrdersTables } from './orders.tables.js';

/** The administrator's order list filters; each has an index on (column, id). */
export type OrderSort = 'id' | 'total';

export interface OrderFilter {
  customer_id?: number;
  subscription_id?: number;
  status?: string;
  /** true: only test orders; false: only real ones; absent: both. */
  test?: boolean;
}

/**
 * Orders, their items, stock holds, coupon claims and saved addresses: queries only. Every method
 * takes the caller's transaction last, and runs on its own without one (docs/development.md,
 * 'Transactions: one way').
 */
export class OrdersRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: Dialect,
  ) {}

  find(id: number, tx?: Tx): Promise<OrderRow | undefined> {
    return on(this.db, tx).selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Reads the order inside a transaction; on PostgreSQL the row is locked until it ends. */
  lock(id: number, tx?: Tx): Promise<OrderRow | undefined> {
    return on(this.db, tx)
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', id)
      .$call(forUpdate(this.dialect))
      .executeTakeFirst();
  }

  /** The order of a checkout's idempotency key, or the renewal order of a `subscription id:due date` key. */
  findBy(column: 'idempotency_hash' | 'renewal_of', value: string, tx?: Tx): Promise<OrderRow | undefined> {
    return on(this.db, tx).selectFrom('orders').selectAll().where(column, '=', value).executeTakeFirst();
  }

  /** The renewal orders of these `subscription id:due date` keys, in one query (an indexed IN). */
  findByRenewalsOf(keys: string[], tx?: Tx): Promise<OrderRow[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return on(this.db, tx).selectFrom('orders').selectAll().where('renewal_of', 'in', keys).execute();
  }

  private filtered(filter: OrderFilter, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('orders')
      .$if(filter.customer_id !== undefined, (q) => q.where('customer_id', '=', filter.customer_id!))
      .$if(filter.subscription_id !== undefined, (q) =>
        q.where('subscription_id', '=', filter.subscription_id!),
      )
      .$if(filter.status !== undefined, (q) => q.where('status', '=', filter.status as never))
      .$if(filter.test !== undefined, (q) => q.where('test', '=', filter.test ? 1 : 0));
  }

  /**
   * A page in the order asked for, the id breaking ties so that pages never overlap. By id is by
   * creation; by total walks orders_total (total, id) (migration 2026112442_orders_total) and stops
   * after the page.
   */
  list(
    filter: OrderFilter,
    limit: number,
    offset: number,
    sort: { by: OrderSort; order: 'asc' | 'desc' } = { by: 'id', order: 'desc' },
    tx?: Tx,
  ) {
    return this.filtered(filter, tx)
      .selectAll()
      .$if(sort.by === 'total', (q) => q.orderBy('total', sort.order))
      .orderBy('id', sort.order)
      .limit(limit)
      .offset(offset)
      .execute();
  }

  /**
   * The list's total: each filter has its index (orders_customer, orders_subscription,
   * orders_status), and the count reads that index alone; unfiltered, the smallest index.
   */
  async count(filter: OrderFilter, tx?: Tx): Promise<number> {
    const row = await this.filtered(filter, tx)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  items(orderId: number, tx?: Tx): Promise<OrderItemRow[]> {
    return on(this.db, tx)
      .selectFrom('order_items')
      .selectAll()
      .where('order_id', '=', orderId)
      .orderBy('id')
      .execute();
  }

  async insert(values: NewOrder, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .insertInto('orders')
      .values(values)
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async insertItem(values: NewOrderItem, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .insertInto('order_items')
      .values(values)
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Links the orders among `ids` that belong to no subscription to `subscriptionId`. */
  async linkToSubscription(ids: number[], subscriptionId: number, now: string, tx?: Tx): Promise<void> {
    if (ids.length === 0) return;
    await on(this.db, tx)
      .updateTable('orders')
      .set({ subscription_id: subscriptionId, updated_at: now })
      .where('id', 'in', ids)
      .where('subscription_id', 'is', null)
      .execute();
  }

  async update(id: number, values: Updateable<OrdersTables['orders']>, tx?: Tx): Promise<void> {
    await on(this.db, tx).updateTable('orders').set(values).where('id', '=', id).execute();
  }

  testOrderIds(tx?: Tx): Promise<{ id: number }[]> {
    return on(this.db, tx).selectFrom('orders').select('id').where('test', '=', 1).execute();
  }

  /** Deletes the test orders (their items, refunds, notes and Stripe rows go with them); answers how many. */
  async deleteTestOrders(tx?: Tx): Promise<number> {
    const r = await on(this.db, tx).deleteFrom('orders').where('test', '=', 1).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async delete(id: number, tx?: Tx): Promise<void> {
    await on(this.db, tx).deleteFrom('orders').where('id', '=', id).execute();
  }

  /** Cancels the subscription's renewal orders still in one of `open` statuses. */
  async cancelRenewals(subscriptionId: number, open: readonly string[], now: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('orders')
      .set({ status: 'cancelled', updated_at: now })
      .where('subscription_id', '=', subscriptionId)
      .where('created_via', '=', 'renewal')
      .where('status', 'in', [...open] as never[])
      .execute();
  }

  /**
   * Takes `quantity` from the pool only if that much is left: one conditional UPDATE, so parallel
   * orders from any number of processes can never sell more than the stock. An untracked pool
   * (null) always succeeds.
   */
  async takeStock(hold: StockHold, tx?: Tx): Promise<boolean> {
    const db = on(this.db, tx);
    const table = hold.pool === 'product' ? 'products' : 'product_variations';
    const r = await db
      .updateTable(table)
      .set({ stock_quantity: sql`stock_quantity - ${hold.quantity}` })
      .where('id', '=', hold.id)
      .where('stock_quantity', '>=', hold.quantity)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) return true;
    const row = await db
      .selectFrom(table)
      .select('stock_quantity')
      .where('id', '=', hold.id)
      .executeTakeFirst();
    return row !== undefined && row.stock_quantity === null;
  }

  async giveStock(hold: StockHold, tx?: Tx): Promise<void> {
    const table = hold.pool === 'product' ? 'products' : 'product_variations';
    await on(this.db, tx)
      .updateTable(table)
      .set({ stock_quantity: sql`stock_quantity + ${hold.quantity}` })
      .where('id', '=', hold.id)
      .where('stock_quantity', 'is not', null)
      .execute();
  }

  /** Counts one use of the coupon only while under its usage limit (atomic, like takeStock). */
  async claimCoupon(couponId: number, tx?: Tx): Promise<boolean> {
    const r = await on(this.db, tx)
      .updateTable('coupons')
      .set({ usage_count: sql`usage_count + 1` })
      .where('id', '=', couponId)
      .where((eb) => eb.or([eb('usage_limit', 'is', null), eb('usage_count', '<', eb.ref('usage_limit'))]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Uses of the coupon already claimed by this customer (by user id, else by billing email). */
  async usesBy(couponId: number, userId: number | null, email: string, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .selectFrom('coupon_usages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('coupon_id', '=', couponId)
      .where((eb) =>
        userId !== null
          ? eb.or([eb('user_id', '=', userId), eb('email', '=', email)])
          : eb('email', '=', email),
      )
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async recordCouponUse(
    values: {
      coupon_id: number;
      user_id: number | null;
      email: string;
      order_id: number;
      created_at: string;
    },
    tx?: Tx,
  ): Promise<void> {
    await on(this.db, tx).insertInto('coupon_usages').values(values).execute();
  }

  /** Gives back the order's coupon uses (a failed or deleted order never keeps one). */
  async releaseCoupons(orderId: number, tx?: Tx): Promise<void> {
    const db = on(this.db, tx);
    const uses = await db
      .selectFrom('coupon_usages')
      .select('coupon_id')
      .where('order_id', '=', orderId)
      .execute();
    for (const u of uses) {
      await db
        .updateTable('coupons')
        .set({ usage_count: sql`usage_count - 1` })
        .where('id', '=', u.coupon_id)
        .where('usage_count', '>', 0)
        .execute();
    }
    await db.deleteFrom('coupon_usages').where('order_id', '=', orderId).execute();
  }

  async saveAddresses(userId: number, billing: string, shipping: string, now: string, tx?: Tx) {
    await on(this.db, tx)
      .insertInto('customer_addresses')
      .values({ user_id: userId, billing, shipping, updated_at: now })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ billing, shipping, updated_at: now }))
      .execute();
  }

  addresses(userId: number, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('customer_addresses')
      .selectAll()
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  licensesOfOrder(orderId: number, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('licenses')
      .select(['id', 'order_item_id'])
      .where('order_id', '=', orderId)
      .execute();
  }
}
