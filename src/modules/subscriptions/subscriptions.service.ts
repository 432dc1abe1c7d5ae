import { type Clock, iso, rfc3339 } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import { type Actor, diff, systemActor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { fromBase, resolveCurrency } from '../catalogue/currency.js';
import { currencyDecimals } from '../catalogue/money.js';
import type { SubscriptionMove } from '../licensing/license.service.js';
import type { SubscriptionBilling } from '../orders/license-upgrades.service.js';
import type { OrderRow } from '../orders/orders.model.js';
import {
  licenseOrderTax,
  OPEN_RENEWAL,
  type OrdersService,
  plainOrder,
  renewalTax,
} from '../orders/orders.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { Outbox } from '../webhooks/outbox.js';
import {
  addPeriod,
  type BillingPeriod,
  type OldSubscriptionCheck,
  STRIPE_SUBSCRIPTION,
  type SubscriptionRow,
  type SubscriptionView,
  subscriptionView,
} from './subscriptions.model.js';
import type {
  SubscriptionFilter,
  SubscriptionSort,
  SubscriptionsRepository,
} from './subscriptions.repository.js';

export interface SubscriptionListQuery extends SubscriptionFilter {
  sort?: SubscriptionSort;
  order?: 'asc' | 'desc';
}

export interface CreateSubscriptionInput {
  user_id: number;
  product_id: number;
  variation_id?: number;
  status?: string;
  next_payment_at?: string | null;
}

/** What checkout knows of a subscription line when it creates the line's subscription. */
export interface CheckoutSubscription {
  user_id: number;
  product_id: number;
  variation_id: number;
  quantity: number;
  period: BillingPeriod;
  interval: number;
  currency: string;
  recurring_total: number;
  payment_method: string;
  order_id: number;
}

/**
 * Subscriptions (docs/checkout.md, 'Subscriptions and renewals'): status changes with their event,
 * renewal orders (by hand and by the renewal worker), and what paying an order means for them: the first
 * payment activates the checkout's subscriptions, a renewal payment extends the linked licenses and
 * moves the next payment on.
 */
/** What runs inside the transaction of a subscription's status change. */
export type SubscriptionStatusHook = (
  subscriptionId: number,
  status: string,
  reason: string,
  tx: Tx,
) => Promise<void>;

/** Who holds a subscription the old gateway still bills, in the audit trail. */
const RENEWAL_ACTOR = systemActor('renewals');

export class SubscriptionsService {
  private statusHooks: SubscriptionStatusHook[] = [];
  private oldSubscription: OldSubscriptionCheck | null = null;

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: SubscriptionsRepository,
    private readonly orders: OrdersService,
    private readonly catalogue: CatalogueService,
    private readonly accounts: Pick<AccountsService, 'getUser'>,
    private readonly settings: SettingsService,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  /** Runs in the transaction of every status change (src/wiring.ts: the customer's email). */
  onStatusChanged(hook: SubscriptionStatusHook): void {
    this.statusHooks.push(hook);
  }

  /** How renewals ask Stripe whether it still bills an imported `sub_…` (src/wiring.ts). */
  checkOldSubscription(check: OldSubscriptionCheck): void {
    this.oldSubscription = check;
  }

  private async find(id: number): Promise<SubscriptionRow> {
    const row = await this.repo.find(id);
    if (!row) throw new ApiError('subscription_not_found');
    return row;
  }

  async view(row: SubscriptionRow): Promise<SubscriptionView> {
    const settings = await this.settings.get();
    return subscriptionView(row, currencyDecimals(row.currency ?? settings.base_currency, settings));
  }

  async get(id: number): Promise<SubscriptionView> {
    return this.view(await this.find(id));
  }

  /** Administrator-created subscription: the product's schedule and price in the base currency. */
  async create(input: CreateSubscriptionInput, actor?: Actor): Promise<SubscriptionView> {
    if (!(await this.accounts.getUser(input.user_id))) throw new ApiError('user_not_found');
    const product = await this.catalogue.getProduct(input.product_id);
    if (!product) throw new ApiError('product_not_found');
    const variationId = input.variation_id ?? 0;
    const variation = variationId ? product.variations.find((v) => v.id === variationId) : null;
    if (variationId && !variation) throw new ApiError('variation_not_found');
    const settings = await this.settings.get();
    const now = this.clock.now();
    const period = product.subscription?.period ?? 'month';
    const interval = product.subscription?.interval ?? 1;
    const next =
      input.next_payment_at === undefined
        ? iso(addPeriod(now, period, interval))
        : input.next_payment_at === null
          ? null
          : iso(new Date(input.next_payment_at));
    const row = await withTransaction(this.database, async (tx) => {
      const created = await this.repo.insert(
        {
          user_id: input.user_id,
          product_id: product.id,
          variation_id: variationId,
          status: input.status ?? 'active',
          next_payment_at: next,
          billing_period: period,
          billing_interval: interval,
          quantity: 1,
          currency: settings.base_currency,
          recurring_total: variation ? variation.price_minor : product.price_minor,
          payment_method: '',
          parent_order_id: null,
          created_at: iso(now),
          updated_at: iso(now),
        },
        tx,
      );
      if (actor) {
        const { id: _, created_at: _c, updated_at: _u, ...fields } = created;
        const changes = diff({}, fields);
        await this.audit.record(
          actor,
          { entity_type: 'subscription', entity_id: created.id, action: 'create', changes },
          tx,
        );
      }
      return created;
    });
    return this.view(row);
  }

  /** Checkout's subscription for one line, created with its order (pending until paid). */
  async createForOrder(input: CheckoutSubscription, tx: Tx): Promise<number> {
    const now = iso(this.clock.now());
    const row = await this.repo.insert(
      {
        user_id: input.user_id,
        product_id: input.product_id,
        variation_id: input.variation_id,
        status: 'pending',
        next_payment_at: null,
        billing_period: input.period,
        billing_interval: input.interval,
        quantity: input.quantity,
        currency: input.currency,
        recurring_total: input.recurring_total,
        payment_method: input.payment_method,
        parent_order_id: input.order_id,
        created_at: now,
        updated_at: now,
      },
      tx,
    );
    return row.id;
  }

  /**
   * A subscription imported from another store (docs/migrating.md), in the import's transaction:
   * as it was there, without the status event (it changed nothing here).
   */
  async insertImported(row: Parameters<SubscriptionsRepository['insert']>[0], tx: Tx): Promise<number> {
    return (await this.repo.insert(row, tx)).id;
  }

  /** Deletes the subscriptions checkout created for an order that must not exist (still pending). */
  deletePendingOfOrder(orderId: number, tx: Tx): Promise<void> {
    return this.repo.deletePendingOfOrder(orderId, tx);
  }

  /** Changes the status and records `subscription.status_changed` in the same transaction. */
  /** `actor`: the administrator who asked, recorded when the status or its reason changes. */
  async setStatus(id: number, status: string, reason = '', actor?: Actor): Promise<SubscriptionView> {
    await withTransaction(this.database, async (tx) => {
      const row = await this.repo.lock(id, tx);
      if (!row) throw new ApiError('subscription_not_found');
      await this.changeStatus(row, status, reason, {}, tx);
      const changes = diff(
        { status: row.status, status_reason: row.status_reason ?? '' },
        { status, status_reason: reason },
      );
      if (actor && Object.keys(changes).length > 0)
        await this.audit.record(
          actor,
          { entity_type: 'subscription', entity_id: id, action: 'status', changes },
          tx,
        );
    });
    return this.get(id);
  }

  /**
   * The administrator's list (docs/checkout.md, 'Routes'): filtered, sorted by the server with the
   * id as tie-break, newest first by default, each with its customer's email and name and its
   * product's name, and the total of the filter.
   */
  async list(query: SubscriptionListQuery, page: number, perPage: number) {
    const { sort = 'id', order, ...filter } = query;
    const by = { by: sort, order: order ?? (sort === 'next_payment_at' ? 'asc' : 'desc') } as const;
    const { rows, total } = await this.repo.list(filter, page, perPage, by);
    const settings = await this.settings.get();
    const items = rows.map(({ user_email, user_first_name, user_last_name, product_name, ...row }) => ({
      ...subscriptionView(row, currencyDecimals(row.currency ?? settings.base_currency, settings)),
      user_email: user_email ?? '',
      user_name: [user_first_name, user_last_name].filter(Boolean).join(' '),
      product_name: product_name ?? '',
    }));
    return { items, total };
  }

  /** The customer's own subscriptions, newest first. */
  async listForUser(userId: number): Promise<SubscriptionView[]> {
    const rows = await this.repo.ofUser(userId);
    return Promise.all(rows.map((r) => this.view(r)));
  }

  /**
   * Cancellation by the customer: `pending-cancel` while a paid period remains (licenses stay
   * valid until it ends), else `cancelled`. Someone else's subscription is 404 `not_found`, so ids
   * cannot be probed; cancelling an ended subscription changes nothing.
   */
  async cancelByCustomer(id: number, userId: number): Promise<SubscriptionView> {
    await withTransaction(this.database, async (tx) => {
      const row = await this.repo.lock(id, tx);
      if (!row || row.user_id !== userId) throw new ApiError('not_found');
      if (['cancelled', 'expired', 'pending-cancel'].includes(row.status)) return;
      const paidThrough = row.next_payment_at !== null && row.next_payment_at > iso(this.clock.now());
      const status = row.status === 'active' && paidThrough ? 'pending-cancel' : 'cancelled';
      await this.changeStatus(row, status, 'cancelled_by_customer', {}, tx);
    });
    return this.get(id);
  }

  private async changeStatus(
    row: SubscriptionRow,
    status: string,
    reason: string,
    extra: { next_payment_at?: string | null },
    tx: Tx,
  ): Promise<void> {
    const now = iso(this.clock.now());
    await this.repo.update(row.id, { status, status_reason: reason, updated_at: now, ...extra }, tx);
    if (row.status !== status) {
      await this.outbox.record(
        'subscription.status_changed',
        { subscription_id: row.id, status, reason },
        tx,
      );
      for (const hook of this.statusHooks) await hook(row.id, status, reason, tx);
    }
  }

  /**
   * What pricing a move of the subscription's license to another tier reads (docs/selling.md,
   * 'Upgrades and downgrades'): its status, billing schedule and next payment; null when it is gone.
   */
  async billing(id: number): Promise<SubscriptionBilling | null> {
    const row = await this.repo.find(id);
    if (!row) return null;
    const period = (row.billing_period ?? 'month') as BillingPeriod;
    const interval = row.billing_interval ?? 1;
    const next = row.next_payment_at === null ? null : new Date(row.next_payment_at);
    return {
      status: row.status,
      period,
      interval,
      next_payment_at: next,
      // The current period began one period before the next payment.
      period_start: next === null ? null : addPeriod(next, period, -interval),
    };
  }

  /**
   * A license the subscription renews moved tier (the upgrade order's paid step, in its
   * transaction): the subscription renews the new product and variation, for one, at its catalogue
   * price in the subscription's currency with the first order's taxes, as checkout would have set
   * it; its next payment date stays. Audited as the paying order.
   */
  async moveTier(move: SubscriptionMove, tx: Tx): Promise<void> {
    const sub = await this.repo.lock(move.subscription_id, tx);
    if (!sub) return;
    const settings = await this.settings.get(tx);
    const ctx = resolveCurrency(settings, sub.currency) ?? resolveCurrency(settings, null)!;
    const parent = sub.parent_order_id ? await this.orders.find(sub.parent_order_id, tx) : undefined;
    const { total } = licenseOrderTax(
      parent,
      fromBase(move.tier_price_minor, ctx),
      settings.prices_include_tax,
    );
    const patch = {
      product_id: move.product_id,
      variation_id: move.variation_id,
      quantity: 1,
      recurring_total: total,
    };
    await this.repo.update(sub.id, { ...patch, updated_at: iso(this.clock.now()) }, tx);
    const before = {
      product_id: sub.product_id,
      variation_id: sub.variation_id ?? 0,
      quantity: sub.quantity ?? 1,
      recurring_total: sub.recurring_total === null ? null : Number(sub.recurring_total),
    };
    await this.audit.record(
      systemActor(`order ${move.order_id}`),
      { entity_type: 'subscription', entity_id: sub.id, action: 'upgrade', changes: diff(before, patch) },
      tx,
    );
  }

  /** The subscriptions test orders started (docs/payments.md, 'Deleting test data'). */
  ofTestOrders(tx: Tx): Promise<number[]> {
    return this.repo.ofTestOrders(tx);
  }

  /** Deletes these subscriptions once nothing names them any more; answers how many. */
  deleteUnreferenced(ids: number[], tx: Tx): Promise<number> {
    return this.repo.deleteUnreferenced(ids, tx);
  }

  /**
   * A pending renewal order for the subscription's due payment (its next_payment_at, or now when
   * it has none). One order per due date however often this runs, from any process.
   */
  async createRenewalOrder(id: number, actor?: Actor): Promise<OrderRow> {
    const sub = await this.find(id);
    const settings = await this.settings.get();
    const due = sub.next_payment_at ?? iso(this.clock.now());
    const renewalOf = `${sub.id}:${due}`;
    const existing = await this.orders.findRenewal(renewalOf);
    if (existing) return existing;
    const product = await this.catalogue.getProduct(sub.product_id);
    const parent = sub.parent_order_id ? await this.orders.find(sub.parent_order_id) : undefined;
    const ctx = resolveCurrency(settings, sub.currency) ?? resolveCurrency(settings, null)!;
    const quantity = sub.quantity ?? 1;
    const total = Number(sub.recurring_total ?? 0);
    const variation = product?.variations.find((v) => v.id === sub.variation_id) ?? null;
    const name = product
      ? variation
        ? `${product.name} - ${variation.name}`
        : product.name
      : `Product ${sub.product_id}`;
    const now = iso(this.clock.now());
    // The recurring total holds the first order's tax: the same rates, country and VAT number.
    const { tax, columns } = renewalTax(parent, total);
    try {
      return await withTransaction(this.database, async (tx) => {
        const order = await this.orders.create(
          {
            ...plainOrder(ctx, settings, { customer_id: sub.user_id, created_via: 'renewal', total, now }),
            ...columns,
            subtotal: total - tax,
            total_tax: tax,
            // A renewal of a test order is a test order too, whatever the store's mode now.
            ...(parent ? { test: parent.test } : {}),
            payment_method: sub.payment_method ?? '',
            payment_method_title: parent?.payment_method_title ?? '',
            billing: parent?.billing ?? '{}',
            shipping: parent?.shipping ?? '{}',
            subscription_id: sub.id,
            renewal_of: renewalOf,
            renewal_due_at: due,
          },
          [
            {
              product_id: sub.product_id,
              variation_id: sub.variation_id ?? 0,
              name,
              quantity,
              // The entry basis: with tax when prices include tax (docs/pricing.md).
              price: Math.round((settings.prices_include_tax ? total : total - tax) / quantity),
              subtotal: total - tax,
              subtotal_tax: tax,
              total: total - tax,
              total_tax: tax,
              meta: '[]',
              subscription_id: sub.id,
            },
          ],
          tx,
        );
        // Made at the administrator's request (the renewal worker's have no actor): recorded as the
        // order's creation. An order found again above was made before and records nothing.
        if (actor) {
          const changes = diff(
            {},
            {
              status: order.status,
              created_via: order.created_via,
              subscription_id: order.subscription_id,
              renewal_due_at: order.renewal_due_at,
              currency: order.currency,
              total: order.total,
            },
          );
          await this.audit.record(
            actor,
            { entity_type: 'order', entity_id: order.id, action: 'create', changes },
            tx,
          );
        }
        return order;
      });
    } catch (e) {
      // Another process created this due date's order first.
      const raced = await this.orders.findRenewal(renewalOf);
      if (raced) return raced;
      throw e;
    }
  }

  /** Active subscriptions whose next payment is due and has no renewal order yet (renewal worker). */
  async createDueRenewals(limit = 50): Promise<number> {
    const due = await this.repo.dueWithoutRenewal(iso(this.clock.now()), limit);
    for (const { id } of due) if (await this.oldGatewayEnded(id)) await this.createRenewalOrder(id);
    return due.length;
  }

  /**
   * Never billed twice (docs/migrating.md, 'Subscriptions Stripe still bills'): before the first
   * renewal of an imported subscription that Stripe billed (`sub_…`), Stripe is asked whether it
   * still does, once: the answer `ended` is kept on the row (`gateway_profile_ended_at`) and the
   * subscription renews from then on without asking. Still billed, or no answer (Stripe not set
   * up or out of reach), it goes `on-hold` (`old_subscription_active`,
   * `old_subscription_unverified`) with an audit entry, instead of a renewal order: the owner
   * cancels it at Stripe and sets it active again, which asks again.
   */
  private async oldGatewayEnded(id: number): Promise<boolean> {
    const sub = await this.repo.find(id);
    if (!sub || sub.gateway_profile_ended_at !== null || !STRIPE_SUBSCRIPTION.test(sub.gateway_profile_id)) {
      return true;
    }
    let state: Awaited<ReturnType<OldSubscriptionCheck>>;
    try {
      state = await this.oldSubscription?.(sub.gateway_profile_id);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      state = undefined;
    }
    const now = iso(this.clock.now());
    return withTransaction(this.database, async (tx) => {
      const row = await this.repo.lock(id, tx);
      // Changed meanwhile (paid, held, cancelled): the next tick looks again.
      if (row?.status !== 'active' || row.next_payment_at !== sub.next_payment_at) return false;
      if (state === 'ended') {
        await this.repo.update(id, { gateway_profile_ended_at: now, updated_at: now }, tx);
        return true;
      }
      const reason = state === 'billing' ? 'old_subscription_active' : 'old_subscription_unverified';
      await this.changeStatus(row, 'on-hold', reason, {}, tx);
      const changes = diff(
        { status: row.status, status_reason: row.status_reason ?? '' },
        { status: 'on-hold', status_reason: reason },
      );
      await this.audit.record(
        RENEWAL_ACTOR,
        { entity_type: 'subscription', entity_id: id, action: 'status', changes },
        tx,
      );
      return false;
    });
  }

  /**
   * Overdue subscriptions (renewal worker): an `active` subscription whose due payment has a renewal
   * order but is not paid goes `on-hold` (reason `renewal_payment_overdue`); an `on-hold` one
   * whose due date is more than `renewal_window_days` past with that payment still unpaid goes
   * `expired` (reason `renewal_window_expired`) and its open renewal orders are cancelled, as
   * pay-order would. Each change re-reads the row under its lock, so a payment that lands first
   * wins; every change records `subscription.status_changed`. Answers how many changed.
   */
  async lapseOverdue(limit = 50): Promise<number> {
    const settings = await this.settings.get();
    const nowMs = this.clock.now().getTime();
    const now = iso(new Date(nowMs));
    const windowStart = iso(new Date(nowMs - settings.renewal_window_days * 86_400_000));
    let changed = 0;
    const move = async (id: number, due: string | null, from: string, to: string, reason: string) =>
      withTransaction(this.database, async (tx) => {
        const row = await this.repo.lock(id, tx);
        if (!row || row.status !== from || row.next_payment_at !== due) return false;
        await this.changeStatus(row, to, reason, {}, tx);
        return true;
      });
    for (const s of await this.repo.dueWithRenewalIn('active', now, OPEN_RENEWAL, limit)) {
      if (await move(s.id, s.next_payment_at, 'active', 'on-hold', 'renewal_payment_overdue')) changed++;
    }
    const lapsing = await this.repo.dueWithRenewalIn(
      'on-hold',
      windowStart,
      [...OPEN_RENEWAL, 'cancelled'],
      limit,
    );
    for (const s of lapsing) {
      // Strictly past the window, like pay-order's check.
      if (Date.parse(s.next_payment_at!) + settings.renewal_window_days * 86_400_000 >= nowMs) continue;
      if (!(await move(s.id, s.next_payment_at, 'on-hold', 'expired', 'renewal_window_expired'))) continue;
      changed++;
      await this.orders.cancelOpenRenewals(s.id);
    }
    return changed;
  }

  /**
   * Whether the renewal order's payment window is closed: `renewal_window_days` after its due
   * date. When it is, every open renewal order of the subscription is cancelled.
   */
  async closeExpiredRenewal(order: OrderRow): Promise<boolean> {
    if (order.created_via !== 'renewal' || order.renewal_due_at === null || order.subscription_id === null) {
      return false;
    }
    const settings = await this.settings.get();
    const closesAt = Date.parse(order.renewal_due_at) + settings.renewal_window_days * 86_400_000;
    if (this.clock.now().getTime() <= closesAt) return false;
    await this.orders.cancelOpenRenewals(order.subscription_id);
    return true;
  }

  /**
   * The paid hook of orders, in the order's transaction: a renewal renews its subscription, a
   * first order activates the subscriptions checkout created for it.
   */
  async orderPaid(order: OrderRow, paidAt: Date, tx: Tx): Promise<void> {
    if (order.created_via === 'renewal' && order.subscription_id !== null) {
      await this.renew(order, order.subscription_id, paidAt, tx);
    } else {
      await this.activateFirst(order, paidAt, tx);
    }
  }

  /**
   * A renewal paid: each linked license's usage expiry moves on by one period (from the later of
   * now and the current expiry; a license without expiry keeps none) with one `license.renewed`
   * each, then the subscription is active again with its next payment one period after the due
   * date.
   */
  private async renew(order: OrderRow, subscriptionId: number, paidAt: Date, tx: Tx): Promise<void> {
    const sub = await this.repo.lock(subscriptionId, tx);
    if (!sub) return;
    const period = (sub.billing_period ?? 'month') as BillingPeriod;
    const interval = sub.billing_interval ?? 1;
    for (const l of await this.repo.licensesOf(sub.id, tx)) {
      if (l.usage_expires_at !== null) {
        const current = Date.parse(l.usage_expires_at);
        const from = Number.isNaN(current) ? paidAt : new Date(Math.max(current, paidAt.getTime()));
        await this.repo.setLicenseUsageExpiry(
          l.id,
          rfc3339(addPeriod(from, period, interval)),
          iso(paidAt),
          tx,
        );
      }
      await this.outbox.record(
        'license.renewed',
        { license_id: l.id, subscription_id: sub.id, order_id: order.id },
        tx,
      );
    }
    const base = order.renewal_due_at ? new Date(order.renewal_due_at) : paidAt;
    const next = iso(addPeriod(base, period, interval));
    await this.changeStatus(sub, 'active', 'renewal_paid', { next_payment_at: next }, tx);
  }

  /** A first order paid: its pending subscriptions become active, next payment one period on. */
  private async activateFirst(order: OrderRow, paidAt: Date, tx: Tx): Promise<void> {
    for (const sub of await this.repo.pendingOfOrder(order.id, tx)) {
      const period = (sub.billing_period ?? 'month') as BillingPeriod;
      const next = iso(addPeriod(paidAt, period, sub.billing_interval ?? 1));
      await this.changeStatus(sub, 'active', 'payment_received', { next_payment_at: next }, tx);
    }
  }

  /**
   * The refunded hook of orders, in the refund's transaction (docs/payments.md, 'Refunds'): the
   * subscription a fully refunded order paid for (a renewal's) or started is cancelled, with
   * `subscription.status_changed` (reason `order_refunded`), and its open renewal orders with it.
   */
  async orderRefunded(order: OrderRow, tx: Tx): Promise<void> {
    const subs =
      order.subscription_id !== null
        ? [await this.repo.lock(order.subscription_id, tx)]
        : await this.repo.lockOfOrder(order.id, tx);
    for (const sub of subs) {
      if (!sub || sub.status === 'cancelled' || sub.status === 'expired') continue;
      await this.changeStatus(sub, 'cancelled', 'order_refunded', {}, tx);
      await this.orders.cancelOpenRenewals(sub.id, tx);
    }
  }

  /** The subscription a receipt shows: the renewal's, else the first one the order created. */
  /** The ids of the subscriptions an order started, in the caller's transaction. */
  idsStartedBy(orderId: number, tx: Tx): Promise<number[]> {
    return this.repo.idsOfOrder(orderId, tx);
  }

  async ofOrder(order: OrderRow): Promise<SubscriptionView | null> {
    const row =
      order.subscription_id !== null
        ? await this.repo.find(order.subscription_id)
        : await this.repo.firstOfOrder(order.id);
    return row ? this.view(row) : null;
  }
}
