import type { Insertable, Kysely, Updateable } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { forUpdate, on, type Tx } from '../../db/transaction.js';
import type { OrderStatus } from '../orders/orders.tables.js';
import type { SubscriptionRow } from './subscriptions.model.js';
import type { SubscriptionsTables } from './subscriptions.tables.js';

type Subscriptions = SubscriptionsTables['subscriptions'];

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

  /** The first subscription the order created. */
  firstOfOrder(orderId: number, tx?: Tx): Promise<SubscriptionRow | undefined> {
    return on(this.db, tx)
      .selectFrom('subscriptions')
      .selectAll()
      .where('parent_order_id', '=', orderId)
      .orderBy('id')
      .executeTakeFirst();
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
