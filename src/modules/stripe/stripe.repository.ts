import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import { OutboxQueries } from '../../outbox/outbox.repository.js';
import type { StripeTables } from './stripe.tables.js';

export type StripePaymentRow = Selectable<StripeTables['stripe_payments']>;
export type StripeCustomerRow = Selectable<StripeTables['stripe_customers']>;
export type StripeCardRow = Selectable<StripeTables['stripe_cards']>;
export type RenewalChargeRow = Selectable<StripeTables['stripe_renewal_charges']>;

/** The Stripe gateway's queries (docs/development.md, 'Transactions: one way'). */
export class StripeRepository {
  private readonly db: Kysely<DB>;
  /** The renewal charges' outbox statements. */
  readonly outbox: OutboxQueries<'stripe_renewal_charges'>;

  constructor(database: Pick<Database, 'db' | 'dialect'>) {
    this.db = database.db;
    this.outbox = new OutboxQueries(database, 'stripe_renewal_charges');
  }

  /** A renewal order to charge off-session, in the transaction that creates it. */
  async addRenewalCharge(orderId: number, now: string, tx: Tx): Promise<void> {
    await on(this.db, tx)
      .insertInto('stripe_renewal_charges')
      .values({
        order_id: orderId,
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.column('order_id').doNothing())
      .execute();
  }

  /**
   * Records an event as handled, in the transaction of its effect; false when it already was. On
   * PostgreSQL a second delivery racing the first waits on the key until the first commits.
   */
  async claimEvent(id: string, type: string, now: string, tx: Tx): Promise<boolean> {
    const row = await on(this.db, tx)
      .insertInto('stripe_events')
      .values({ id, type, received_at: now })
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  payment(orderId: number, tx?: Tx): Promise<StripePaymentRow | undefined> {
    return on(this.db, tx)
      .selectFrom('stripe_payments')
      .selectAll()
      .where('order_id', '=', orderId)
      .executeTakeFirst();
  }

  paymentByIntent(paymentIntentId: string, tx?: Tx): Promise<StripePaymentRow | undefined> {
    return on(this.db, tx)
      .selectFrom('stripe_payments')
      .selectAll()
      .where('payment_intent_id', '=', paymentIntentId)
      .executeTakeFirst();
  }

  /**
   * The first PaymentIntent of an order stays its own. A racing request made the same one (the
   * same idempotency key) and inserts the same row: no conflict target, as on PostgreSQL that row
   * can collide on either unique key while the first insert is uncommitted.
   */
  async insertPayment(row: Insertable<StripeTables['stripe_payments']>, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .insertInto('stripe_payments')
      .values(row)
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  customer(userId: number, tx?: Tx): Promise<StripeCustomerRow | undefined> {
    return on(this.db, tx)
      .selectFrom('stripe_customers')
      .selectAll()
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  async insertCustomer(userId: number, customerId: string, now: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .insertInto('stripe_customers')
      .values({ user_id: userId, customer_id: customerId, payment_method_id: null, updated_at: now })
      .onConflict((oc) => oc.column('user_id').doNothing())
      .execute();
  }

  async savePaymentMethod(userId: number, paymentMethodId: string, now: string, tx: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('stripe_customers')
      .set({ payment_method_id: paymentMethodId, updated_at: now })
      .where('user_id', '=', userId)
      .execute();
  }

  /**
   * Forgets a card detached from its customer at Stripe (in the Dashboard, or by the customer
   * removing it): renewals stop trying it. Answers the users whose kept card it was.
   */
  async forgetPaymentMethod(paymentMethodId: string, now: string, tx: Tx): Promise<number[]> {
    const rows = await on(this.db, tx)
      .updateTable('stripe_customers')
      .set({ payment_method_id: null, updated_at: now })
      .where('payment_method_id', '=', paymentMethodId)
      .returning('user_id')
      .execute();
    return rows.map((r) => Number(r.user_id));
  }

  /** Drops the link to a Stripe customer deleted at Stripe; answers the users it was linked to. */
  async forgetCustomer(customerId: string, tx: Tx): Promise<number[]> {
    const cards = on(this.db, tx)
      .selectFrom('stripe_cards')
      .select('payment_method_id')
      .where('customer_id', '=', customerId);
    await on(this.db, tx)
      .deleteFrom('stripe_subscription_cards')
      .where('payment_method_id', 'in', cards)
      .execute();
    await on(this.db, tx).deleteFrom('stripe_cards').where('customer_id', '=', customerId).execute();
    const rows = await on(this.db, tx)
      .deleteFrom('stripe_customers')
      .where('customer_id', '=', customerId)
      .returning('user_id')
      .execute();
    return rows.map((r) => Number(r.user_id));
  }

  /** Keeps what may be shown of a customer's cards, as Stripe listed them (a listed card's row is replaced). */
  async rememberCards(customerId: string, cards: CardSummary[], now: string): Promise<void> {
    for (const card of cards) {
      const values = {
        customer_id: customerId,
        brand: card.brand,
        last4: card.last4,
        exp_month: card.exp_month,
        exp_year: card.exp_year,
        updated_at: now,
      };
      await this.db
        .insertInto('stripe_cards')
        .values({ payment_method_id: card.id, ...values })
        .onConflict((oc) => oc.column('payment_method_id').doUpdateSet(values))
        .execute();
    }
  }

  card(paymentMethodId: string, tx?: Tx): Promise<StripeCardRow | undefined> {
    return on(this.db, tx)
      .selectFrom('stripe_cards')
      .selectAll()
      .where('payment_method_id', '=', paymentMethodId)
      .executeTakeFirst();
  }

  /** A card gone from its customer: shown nowhere, chosen by no subscription. */
  async dropCard(paymentMethodId: string, tx: Tx): Promise<void> {
    await on(this.db, tx)
      .deleteFrom('stripe_cards')
      .where('payment_method_id', '=', paymentMethodId)
      .execute();
    await on(this.db, tx)
      .deleteFrom('stripe_subscription_cards')
      .where('payment_method_id', '=', paymentMethodId)
      .execute();
  }

  /** The card chosen for a subscription's renewals, if any. */
  async subscriptionCard(subscriptionId: number, tx?: Tx): Promise<string | null> {
    const row = await on(this.db, tx)
      .selectFrom('stripe_subscription_cards')
      .select('payment_method_id')
      .where('subscription_id', '=', subscriptionId)
      .executeTakeFirst();
    return row?.payment_method_id ?? null;
  }

  /** The cards chosen for these subscriptions, by subscription id. */
  async subscriptionCards(subscriptionIds: number[]): Promise<Map<number, string>> {
    if (subscriptionIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('stripe_subscription_cards')
      .select(['subscription_id', 'payment_method_id'])
      .where('subscription_id', 'in', subscriptionIds)
      .execute();
    return new Map(rows.map((r) => [Number(r.subscription_id), r.payment_method_id]));
  }

  async chooseSubscriptionCard(subscriptionId: number, paymentMethodId: string, now: string, tx: Tx) {
    await on(this.db, tx)
      .insertInto('stripe_subscription_cards')
      .values({ subscription_id: subscriptionId, payment_method_id: paymentMethodId, updated_at: now })
      .onConflict((oc) =>
        oc.column('subscription_id').doUpdateSet({ payment_method_id: paymentMethodId, updated_at: now }),
      )
      .execute();
  }
}

/** A card as a buyer is shown it: the brand, the last four digits and the expiry. */
export interface CardSummary {
  id: string;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
}
