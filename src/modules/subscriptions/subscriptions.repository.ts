import type { Insertable, Kysely, Updateable } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { forUpdate, on, type Tx } from '../../db/transaction.js';
import type { OrderStatus } from '../orders/orders.tables.js';
import type { SubscriptionRow } from './subscriptions.model.js';
import type { SubscriptionsTables } from './subscriptions.tables.js';

type Subscriptions = SubscriptionsTables['subscriptions'];

export interface SubscriptionFilter {
  status?: string;
  user_id?: number;
  product_id?: number;
}

export type SubscriptionSort = 'id' | 'created_at' | 'next_payment_at';

/** A subscription with what the administrator's list shows of its customer and product. */
export type SubscriptionListRow = SubscriptionRow & {
  user_email: string | null;
  user_first_name: string | null;
  user_last_name: string | null;
  product_name: string | null;
};

/**
 * Each sort key is one column with the id as tie-break, so that pages never overlap; each has an
 * index on (column, id) (migration 2026112441_customer_lists) that the planner walks.
 */
const SORT_COLUMNS = {
  id: 's.id',
  created_at: 's.created_at',
  next_payment_at: 's.next_payment_at',
} as const;

/**
 * Subscriptions and the licenses they renew: queries only. Every method takes the caller's
 * transaction last, and runs on its own without one (docs/development.md, 'Transactions: one way').
 */
export class SubscriptionsRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: Dialect,
  ) {}

  find(id: number, tx?: Tx): Promise<SubscriptionRow | undefined> {
    return on(this.db, tx).selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Reads the subscription to change it in `tx`; on PostgreSQL its row stays locked until `tx` ends. */
  lock(id: number, tx?: Tx): Promise<SubscriptionRow | undefined> {
    return on(this.db, tx)
      .selectFrom('subscriptions')
      .selectAll()
      .where('id', '=', id)
      .$call(forUpdate(this.dialect))
      .executeTakeFirst();
  }

  insert(values: Insertable<Subscriptions>, tx?: Tx): Promise<SubscriptionRow> {
    return on(this.db, tx)
      .insertInto('subscriptions')
      .values(values)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async update(id: number, values: Updateable<Subscriptions>, tx?: Tx): Promise<void> {
    await on(this.db, tx).updateTable('subscriptions').set(values).where('id', '=', id).execute();
  }

  /**
   * A page of the administrator's list with the customer's email and name and the product's name
   * (joined by primary key, for the page's rows only), and the total of the filter.
   */
  async list(
    filter: SubscriptionFilter,
    page: number,
    perPage: number,
    sort: { by: SubscriptionSort; order: 'asc' | 'desc' },
    tx?: Tx,
  ): Promise<{ rows: SubscriptionListRow[]; total: number }> {
    const db = on(this.db, tx);
    let query = db
      .selectFrom('subscriptions as s')
      .leftJoin('users as u', 'u.id', 's.user_id')
      .leftJoin('products as p', 'p.id', 's.product_id')
      .selectAll('s')
      .select([
        'u.email as user_email',
        'u.first_name as user_first_name',
        'u.last_name as user_last_name',
        'p.name as product_name',
      ])
      .$if(filter.status !== undefined, (q) => q.where('s.status', '=', filter.status!))
      .$if(filter.user_id !== undefined, (q) => q.where('s.user_id', '=', filter.user_id!))
      .$if(filter.product_id !== undefined, (q) => q.where('s.product_id', '=', filter.product_id!));
    if (sort.by === 'next_payment_at' && this.dialect === 'postgres') {
      // No next payment sorts first ascending, as SQLite puts nulls; the PostgreSQL index is built
      // NULLS FIRST to match, so this order walks it.
      query = query.orderBy('s.next_payment_at', (o) =>
        sort.order === 'asc' ? o.asc().nullsFirst() : o.desc().nullsLast(),
      );
    } else if (sort.by !== 'id') {
      query = query.orderBy(SORT_COLUMNS[sort.by], sort.order);
    }
    const rows = await query
      .orderBy('s.id', sort.order)
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute();
    const count = await db
      .selectFrom('subscriptions as s')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .$if(filter.status !== undefined, (q) => q.where('s.status', '=', filter.status!))
      .$if(filter.user_id !== undefined, (q) => q.where('s.user_id', '=', filter.user_id!))
      .$if(filter.product_id !== undefined, (q) => q.where('s.product_id', '=', filter.product_id!))
      .executeTakeFirstOrThrow();
    return { rows, total: Number(count.n) };
  }

  /** The customer's subscriptions, newest first. */
  ofUser(userId: number, tx?: Tx): Promise<SubscriptionRow[]> {
    return on(this.db, tx)
      .selectFrom('subscriptions')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('id', 'desc')
      .execute();
  }

  /** The subscriptions checkout created with the order, still waiting for its first payment. */
  pendingOfOrder(orderId: number, tx?: Tx): Promise<SubscriptionRow[]> {
    return on(this.db, tx)
      .selectFrom('subscriptions')
      .selectAll()
      .where('parent_order_id', '=', orderId)
      .where('status', '=', 'pending')
      .execute();
  }

  /** The subscriptions the order started (its parent order), locked on PostgreSQL. */
  lockOfOrder(orderId: number, tx: Tx): Promise<SubscriptionRow[]> {
    return on(this.db, tx)
      .selectFrom('subscriptions')
      .selectAll()
      .where('parent_order_id', '=', orderId)
      .orderBy('id')
      .$call(forUpdate(this.dialect))
      .execute();
  }

  /** The ids of the subscriptions the order started (its parent order). */
  async idsOfOrder(orderId: number, tx?: Tx): Promise<number[]> {
    const rows = await on(this.db, tx)
      .selectFrom('subscriptions')
      .select('id')
      .where('parent_order_id', '=', orderId)
      .execute();
    return rows.map((r) => Number(r.id));
  }

  /** The first subscription the order created. */
  firstOfOrder(orderId: number, tx?: Tx): Promise<SubscriptionRow | undefined> {
    return on(this.db, tx)
      .selectFrom('subscriptions')
      .selectAll()
      .where('parent_order_id', '=', orderId)
      .orderBy('id')
      .executeTakeFirst();
  }

  /** The subscriptions test orders started. */
  async ofTestOrders(tx?: Tx): Promise<number[]> {
    const rows = await on(this.db, tx)
      .selectFrom('subscriptions')
      .select('id')
      .where('parent_order_id', 'in', (eb) => eb.selectFrom('orders').select('id').where('test', '=', 1))
      .execute();
    return rows.map((r) => r.id);
  }

  /** Deletes these subscriptions, except one a license or an order still names; answers how many. */
  async deleteUnreferenced(ids: number[], tx?: Tx): Promise<number> {
    if (ids.length === 0) return 0;
    const r = await on(this.db, tx)
      .deleteFrom('subscriptions')
      .where('id', 'in', ids)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('licenses')
              .select('licenses.id')
              .whereRef('licenses.subscription_id', '=', 'subscriptions.id'),
          ),
        ),
      )
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('orders')
              .select('orders.id')
              .whereRef('orders.subscription_id', '=', 'subscriptions.id'),
          ),
        ),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async deletePendingOfOrder(orderId: number, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .deleteFrom('subscriptions')
      .where('parent_order_id', '=', orderId)
      .where('status', '=', 'pending')
      .execute();
  }

  /** Active subscriptions due by `now` whose due payment has no renewal order yet. */
  dueWithoutRenewal(now: string, limit: number, tx?: Tx): Promise<{ id: number }[]> {
    return on(this.db, tx)
      .selectFrom('subscriptions as s')
      .select('s.id')
      .where('s.status', '=', 'active')
      .where('s.next_payment_at', 'is not', null)
      .where('s.next_payment_at', '<=', now)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('orders as o')
              .select('o.id')
              .whereRef('o.subscription_id', '=', 's.id')
              .whereRef('o.renewal_due_at', '=', 's.next_payment_at'),
          ),
        ),
      )
      .limit(limit)
      .execute();
  }

  /** Subscriptions in `status`, due by `dueBy`, whose due payment's renewal order is in `orderStatuses`. */
  dueWithRenewalIn(
    status: string,
    dueBy: string,
    orderStatuses: readonly OrderStatus[],
    limit: number,
    tx?: Tx,
  ): Promise<{ id: number; next_payment_at: string | null }[]> {
    return on(this.db, tx)
      .selectFrom('subscriptions as s')
      .select(['s.id', 's.next_payment_at'])
      .where('s.status', '=', status)
      .where('s.next_payment_at', 'is not', null)
      .where('s.next_payment_at', '<=', dueBy)
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('orders as o')
            .select('o.id')
            .whereRef('o.subscription_id', '=', 's.id')
            .whereRef('o.renewal_due_at', '=', 's.next_payment_at')
            .where('o.status', 'in', [...orderStatuses]),
        ),
      )
      .orderBy('s.id')
      .limit(limit)
      .execute();
  }

  /** The licenses a subscription renews, with their usage expiry. */
  licensesOf(subscriptionId: number, tx?: Tx): Promise<{ id: number; usage_expires_at: string | null }[]> {
    return on(this.db, tx)
      .selectFrom('licenses')
      .select(['id', 'usage_expires_at'])
      .where('subscription_id', '=', subscriptionId)
      .orderBy('id')
      .execute();
  }

  async setLicenseUsageExpiry(
    licenseId: number,
    usageExpiresAt: string,
    now: string,
    tx?: Tx,
  ): Promise<void> {
    await on(this.db, tx)
      .updateTable('licenses')
      .set({ usage_expires_at: usageExpiresAt, updated_at: now })
      .where('id', '=', licenseId)
      .execute();
  }
}
