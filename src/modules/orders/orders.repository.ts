import { type Kysely, sql, type Updateable } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import type { NewOrder, NewOrderItem, OrderItemRow, OrderRow, StockHold } from './orders.model.js';
import type { OrdersTables } from './orders.tables.js';

/**
 * Orders, their items, stock holds, coupon claims and saved addresses: queries only. Every method
 * takes the connection to use, so callers run them inside their own transaction.
 */
export class OrdersRepository {
  constructor(
    readonly db: Kysely<DB>,
    readonly dialect: Dialect,
  ) {}

  transaction<T>(fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  find(id: number, db: Kysely<DB> = this.db): Promise<OrderRow | undefined> {
    return db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Reads the order inside a transaction; on PostgreSQL the row is locked until it ends. */
  lock(trx: Kysely<DB>, id: number): Promise<OrderRow | undefined> {
    return trx
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', id)
      .$if(this.dialect === 'postgres', (q) => q.forUpdate())
      .executeTakeFirst();
  }

  findByIdempotency(hash: string): Promise<OrderRow | undefined> {
    return this.db.selectFrom('orders').selectAll().where('idempotency_hash', '=', hash).executeTakeFirst();
  }

  list(filter: { customer_id?: number; status?: string }, limit: number, offset: number) {
    return this.db
      .selectFrom('orders')
      .selectAll()
      .$if(filter.customer_id !== undefined, (q) => q.where('customer_id', '=', filter.customer_id!))
      .$if(filter.status !== undefined, (q) => q.where('status', '=', filter.status as never))
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  items(orderId: number, db: Kysely<DB> = this.db): Promise<OrderItemRow[]> {
    return db.selectFrom('order_items').selectAll().where('order_id', '=', orderId).orderBy('id').execute();
  }

  async insert(trx: Kysely<DB>, values: NewOrder): Promise<number> {
    const row = await trx.insertInto('orders').values(values).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  async insertItem(trx: Kysely<DB>, values: NewOrderItem): Promise<number> {
    const row = await trx.insertInto('order_items').values(values).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  async update(trx: Kysely<DB>, id: number, values: Updateable<OrdersTables['orders']>): Promise<void> {
    await trx.updateTable('orders').set(values).where('id', '=', id).execute();
  }

  async delete(trx: Kysely<DB>, id: number): Promise<void> {
    await trx.deleteFrom('orders').where('id', '=', id).execute();
  }

  /**
   * Takes `quantity` from the pool only if that much is left: one conditional UPDATE, so parallel
   * orders from any number of processes can never sell more than the stock. An untracked pool
   * (null) always succeeds.
   */
  async takeStock(trx: Kysely<DB>, hold: StockHold): Promise<boolean> {
    const table = hold.pool === 'product' ? 'products' : 'product_variations';
    const r = await trx
      .updateTable(table)
      .set({ stock_quantity: sql`stock_quantity - ${hold.quantity}` })
      .where('id', '=', hold.id)
      .where('stock_quantity', '>=', hold.quantity)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) return true;
    const row = await trx
      .selectFrom(table)
      .select('stock_quantity')
      .where('id', '=', hold.id)
      .executeTakeFirst();
    return row !== undefined && row.stock_quantity === null;
  }

  async giveStock(trx: Kysely<DB>, hold: StockHold): Promise<void> {
    const table = hold.pool === 'product' ? 'products' : 'product_variations';
    await trx
      .updateTable(table)
      .set({ stock_quantity: sql`stock_quantity + ${hold.quantity}` })
      .where('id', '=', hold.id)
      .where('stock_quantity', 'is not', null)
      .execute();
  }

  /** Counts one use of the coupon only while under its usage limit (atomic, like takeStock). */
  async claimCoupon(trx: Kysely<DB>, couponId: number): Promise<boolean> {
    const r = await trx
      .updateTable('coupons')
      .set({ usage_count: sql`usage_count + 1` })
      .where('id', '=', couponId)
      .where((eb) => eb.or([eb('usage_limit', 'is', null), eb('usage_count', '<', eb.ref('usage_limit'))]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Uses of the coupon already claimed by this customer (by user id, else by billing email). */
  async usesBy(trx: Kysely<DB>, couponId: number, userId: number | null, email: string): Promise<number> {
    const row = await trx
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
    trx: Kysely<DB>,
    values: {
      coupon_id: number;
      user_id: number | null;
      email: string;
      order_id: number;
      created_at: string;
    },
  ): Promise<void> {
    await trx.insertInto('coupon_usages').values(values).execute();
  }

  /** Gives back the order's coupon uses (a failed or deleted order never keeps one). */
  async releaseCoupons(trx: Kysely<DB>, orderId: number): Promise<void> {
    const uses = await trx
      .selectFrom('coupon_usages')
      .select('coupon_id')
      .where('order_id', '=', orderId)
      .execute();
    for (const u of uses) {
      await trx
        .updateTable('coupons')
        .set({ usage_count: sql`usage_count - 1` })
        .where('id', '=', u.coupon_id)
        .where('usage_count', '>', 0)
        .execute();
    }
    await trx.deleteFrom('coupon_usages').where('order_id', '=', orderId).execute();
  }

  async saveAddresses(trx: Kysely<DB>, userId: number, billing: string, shipping: string, now: string) {
    await trx
      .insertInto('customer_addresses')
      .values({ user_id: userId, billing, shipping, updated_at: now })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ billing, shipping, updated_at: now }))
      .execute();
  }

  addresses(userId: number) {
    return this.db
      .selectFrom('customer_addresses')
      .selectAll()
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  licensesOfOrder(orderId: number, db: Kysely<DB> = this.db) {
    return db
      .selectFrom('licenses')
      .select(['id', 'order_item_id'])
      .where('order_id', '=', orderId)
      .execute();
  }
}
