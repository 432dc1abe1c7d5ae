import { type Kysely, type Selectable, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { forUpdate, on, type Tx } from '../../db/transaction.js';
import type { CartTables } from './cart.tables.js';

export type CartRow = Selectable<CartTables['carts']>;
export type CartWrite = Pick<CartRow, 'items' | 'coupons' | 'destination' | 'shipping_method' | 'expires_at'>;

/**
 * Carts, the customer sessions that point at them, and the coupon-use ledger. Queries only; each
 * joins the transaction it is handed (docs/development.md, 'Transactions').
 */
export class CartRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: Dialect,
  ) {}

  /** The cart a live session points at. */
  async findSession(
    idHash: string,
    now: string,
    tx?: Tx,
  ): Promise<{ cart_id: number; expires_at: string } | undefined> {
    return on(this.db, tx)
      .selectFrom('cart_sessions')
      .select(['cart_id', 'expires_at'])
      .where('id_hash', '=', idHash)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  findCart(id: number, tx?: Tx): Promise<CartRow | undefined> {
    return on(this.db, tx).selectFrom('carts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findCartOfUser(userId: number, tx?: Tx): Promise<CartRow | undefined> {
    return on(this.db, tx).selectFrom('carts').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  /**
   * Reads the cart row, by its id or its customer's, locked, so changes of one cart from any number
   * of processes run one at a time.
   */
  lockCart(column: 'id' | 'user_id', value: number, tx: Tx): Promise<CartRow | undefined> {
    return tx
      .selectFrom('carts')
      .selectAll()
      .where(column, '=', value)
      .$call(forUpdate(this.dialect))
      .executeTakeFirst();
  }

  /** Serialises merges into one customer's cart across processes until the transaction ends. */
  async lockCustomer(userId: number, tx: Tx): Promise<void> {
    if (this.dialect !== 'postgres') return;
    await sql`select pg_advisory_xact_lock(hashtext(${`tollgate:cart-user:${userId}`}))`.execute(tx);
  }

  async insertCart(values: CartWrite & { user_id: number | null; now: string }, tx?: Tx): Promise<number> {
    const { now, ...rest } = values;
    const row = await on(this.db, tx)
      .insertInto('carts')
      .values({ ...rest, version: 0, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** The customer's cart, created empty when there is none (the unique user_id decides races). */
  async ensureCartOfUser(userId: number, empty: CartWrite, now: string, tx?: Tx): Promise<CartRow> {
    await on(this.db, tx)
      .insertInto('carts')
      .values({ ...empty, user_id: userId, version: 0, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('user_id').doNothing())
      .execute();
    return (await this.findCartOfUser(userId, tx))!;
  }

  async saveCart(
    id: number,
    values: CartWrite & { now: string; user_id?: number | null },
    tx?: Tx,
  ): Promise<void> {
    const { now, ...rest } = values;
    await on(this.db, tx)
      .updateTable('carts')
      .set((eb) => ({ ...rest, updated_at: now, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  async deleteCart(id: number, tx?: Tx): Promise<void> {
    await on(this.db, tx).deleteFrom('carts').where('id', '=', id).execute();
  }

  /** Stores a session; false when a session (live or ended) already has this id. */
  async createSession(
    idHash: string,
    cartId: number,
    now: string,
    expiresAt: string,
    tx?: Tx,
  ): Promise<boolean> {
    const row = await on(this.db, tx)
      .insertInto('cart_sessions')
      .values({ id_hash: idHash, cart_id: cartId, created_at: now, expires_at: expiresAt })
      .onConflict((oc) => oc.column('id_hash').doNothing())
      .returning('id_hash')
      .executeTakeFirst();
    return row !== undefined;
  }

  async touchSession(idHash: string, expiresAt: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('cart_sessions')
      .set({ expires_at: expiresAt })
      .where('id_hash', '=', idHash)
      .execute();
  }

  /** Points every session of one cart at another (a merged guest cart's devices follow it). */
  async moveSessions(fromCartId: number, toCartId: number, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('cart_sessions')
      .set({ cart_id: toCartId })
      .where('cart_id', '=', fromCartId)
      .execute();
  }

  /** Removes idle sessions and carts (a cart's sessions go with it). */
  async deleteExpired(now: string, tx?: Tx): Promise<void> {
    const db = on(this.db, tx);
    await db.deleteFrom('cart_sessions').where('expires_at', '<=', now).execute();
    await db.deleteFrom('carts').where('expires_at', '<=', now).execute();
  }

  /** Uses of each coupon claimed by this customer (checkout writes the ledger). */
  async customerUses(couponIds: number[], userId: number, tx?: Tx): Promise<Map<number, number>> {
    if (couponIds.length === 0) return new Map();
    const rows = await on(this.db, tx)
      .selectFrom('coupon_usages')
      .select((eb) => ['coupon_id', eb.fn.countAll<number>().as('n')])
      .where('coupon_id', 'in', couponIds)
      .where('user_id', '=', userId)
      .groupBy('coupon_id')
      .execute();
    return new Map(rows.map((r) => [r.coupon_id, Number(r.n)]));
  }
}
