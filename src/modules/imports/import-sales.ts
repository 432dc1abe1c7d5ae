import { type Clock, iso } from '../../clock.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { type CurrencyContext, currencySymbol, resolveCurrency } from '../catalogue/currency.js';
import { currencyDecimals } from '../catalogue/money.js';
import type { OrdersService } from '../orders/orders.service.js';
import { plainOrder } from '../orders/orders.service.js';
import type { OrderStatus } from '../orders/orders.tables.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { StripeService } from '../stripe/stripe.service.js';
import { STRIPE_SUBSCRIPTION } from '../subscriptions/subscriptions.model.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { ImportMap } from './import-map.js';
import { ImportRefusal, isAmount, type Outcome, type Run, time } from './import-run.js';
import type { ImportOrder, ImportOrderStatus, ImportSubscription } from './records.js';

/** The old store's order states, as a Tollgate order stores them. */
const ORDER_STATUS: Record<ImportOrderStatus, OrderStatus> = {
  pending: 'pending',
  completed: 'completed',
  refunded: 'refunded',
  failed: 'failed',
  cancelled: 'cancelled',
};

const SUBSCRIPTION_STATUSES = new Set(['active', 'on-hold', 'pending-cancel', 'cancelled', 'expired']);
/** The states in which a subscription renews: its currency must be one the store charges in. */
const RUNNING = new Set(['active', 'on-hold', 'pending-cancel']);
const PERIODS = new Set(['day', 'week', 'month', 'year']);

/**
 * The importer's orders and subscriptions (docs/migrating.md, 'Orders', 'Subscriptions'), and
 * the question to Stripe whether the old store's subscription still bills there.
 */
export class SalesImport {
  constructor(
    private readonly map: ImportMap,
    private readonly orders: Pick<OrdersService, 'insertImported' | 'addStoreNote' | 'linkImportedRenewals'>,
    private readonly subscriptions: Pick<SubscriptionsService, 'insertImported'>,
    private readonly stripe: Pick<StripeService, 'oldSubscription'>,
    private readonly catalogue: Pick<CatalogueService, 'gateways'>,
    private readonly settings: Pick<SettingsService, 'get'>,
    private readonly clock: Clock,
  ) {}

  /**
   * An order of the old store, as it happened there: its items, totals, currency, status, dates,
   * gateway and customer. Nothing follows from it: no license is issued, no stock taken, no
   * invoice numbered, no email or webhook sent. Never a test order, whatever the store's mode.
   */
  async order(run: Run, o: ImportOrder): Promise<Outcome> {
    const known = await this.map.found(run, 'orders', o.sourceId);
    if (known !== undefined) return 'present';
    const status = ORDER_STATUS[o.status];
    if (!status) throw new ImportRefusal('invalid_status');
    const tax = o.tax ?? 0;
    if (!isAmount(o.total) || !isAmount(tax) || tax > o.total) throw new ImportRefusal('invalid_amount');
    const createdAt = time(o.createdAt, 'invalid_date');
    const paidAt = o.paidAt ? time(o.paidAt, 'invalid_date') : null;
    const settings = await this.settings.get();
    const ctx = this.currencyOf(o.currency, settings);
    const userId = await this.map.target(run, 'customers', o.customerSourceId, 'unknown_customer');
    const items: Parameters<OrdersService['insertImported']>[1] = [];
    for (const i of o.items) {
      const itemTax = i.tax ?? 0;
      if (!isAmount(i.total) || !isAmount(itemTax) || itemTax > i.total)
        throw new ImportRefusal('invalid_amount');
      if (!Number.isSafeInteger(i.quantity) || i.quantity < 1) throw new ImportRefusal('invalid_quantity');
      const productId = await this.map.target(run, 'products', i.productSourceId, 'unknown_product');
      const variationId = i.variationSourceId
        ? await this.map.target(run, 'variations', i.variationSourceId, 'unknown_variation')
        : 0;
      const net = i.total - itemTax;
      items.push({
        product_id: productId,
        variation_id: variationId,
        name: i.name.slice(0, 200),
        quantity: i.quantity,
        // The entry basis: with tax when prices include tax (docs/pricing.md).
        price: Math.round((settings.prices_include_tax ? i.total : net) / i.quantity),
        subtotal: net,
        subtotal_tax: itemTax,
        total: net,
        total_tax: itemTax,
        meta: '[]',
        subscription_id: null,
      });
    }
    if (run.dryRun) {
      run.plan('orders', o.sourceId);
      return 'created';
    }
    const gateway = (o.gateway ?? '').slice(0, 100);
    const method = await this.gatewayOf(gateway);
    const now = iso(this.clock.now());
    return this.map.first(async (tx) => {
      const id = await this.orders.insertImported(
        {
          ...plainOrder(ctx, settings, { customer_id: userId, created_via: 'import', total: o.total, now }),
          status,
          subtotal: o.total - tax,
          total_tax: tax,
          payment_method: method,
          payment_method_title: gateway,
          // Paid in the old store: completed when it was, refunded orders keep when they were paid.
          paid_at: status === 'completed' ? (paidAt ?? createdAt) : status === 'refunded' ? paidAt : null,
          refunded_total: status === 'refunded' ? o.total : 0,
          test: 0,
          created_at: createdAt,
          updated_at: now,
        },
        items,
        tx,
      );
      const transaction = o.transactionId ? `, transaction ${o.transactionId.slice(0, 200)}` : '';
      await this.orders.addStoreNote(
        id,
        `Imported from ${run.source} order ${o.sourceId.slice(0, 100)} (${o.status}${gateway ? `, paid with ${gateway}` : ''}${transaction}).`,
        now,
        tx,
      );
      return this.map.remember(run, 'orders', o.sourceId, id, tx);
    });
  }

  /**
   * A subscription of the old store, with its schedule, status, next payment and recurring total:
   * the renewal worker makes its renewal orders from its next payment on, as for any other, and
   * a Stripe customer kept with a card (the customer's import) pays them off-session.
   */
  async subscription(run: Run, s: ImportSubscription): Promise<Outcome> {
    // Read in every run before the licenses, so they know which of theirs still renew.
    if (RUNNING.has(s.status)) {
      run.renewing.add(s.sourceId);
      // Never billed twice: what Tollgate cannot ask the old gateway, the owner cancels there. Listed
      // in every run while the source says it renews, imported before or not.
      const profile = s.gatewayProfileId ?? '';
      if (profile !== '' && !STRIPE_SUBSCRIPTION.test(profile)) {
        run.oldGateway({
          subscription: s.sourceId,
          gateway: s.gateway ?? '',
          profile: profile.slice(0, 255),
          nextPaymentAt: s.nextPaymentAt ?? null,
        });
      }
    }
    const known = await this.map.found(run, 'subscriptions', s.sourceId);
    if (known !== undefined) {
      // Renewal orders an earlier run had not imported yet are linked now (one statement).
      const renewals = await this.renewalOrders(run, s);
      if (!run.dryRun && renewals.length > 0) {
        await this.orders.linkImportedRenewals(renewals, known, iso(this.clock.now()));
      }
      return 'present';
    }
    if (!SUBSCRIPTION_STATUSES.has(s.status)) throw new ImportRefusal('invalid_status');
    if (!PERIODS.has(s.billingPeriod) || !Number.isSafeInteger(s.billingInterval) || s.billingInterval < 1) {
      throw new ImportRefusal('invalid_period');
    }
    if (!isAmount(s.recurringTotal)) throw new ImportRefusal('invalid_amount');
    const next = s.nextPaymentAt ? time(s.nextPaymentAt, 'invalid_date') : null;
    const createdAt = s.createdAt ? time(s.createdAt, 'invalid_date') : null;
    const settings = await this.settings.get();
    // A subscription that renews is charged in its currency: one the store sells in.
    if (RUNNING.has(s.status) && resolveCurrency(settings, s.currency)?.code !== s.currency) {
      throw new ImportRefusal('currency_not_enabled');
    }
    this.currencyOf(s.currency, settings);
    const userId = await this.map.target(run, 'customers', s.customerSourceId, 'unknown_customer');
    const productId = await this.map.target(run, 'products', s.productSourceId, 'unknown_product');
    const variationId = s.variationSourceId
      ? await this.map.target(run, 'variations', s.variationSourceId, 'unknown_variation')
      : 0;
    // The first order when it was imported; a subscription whose order was left out stands alone.
    const parent = s.parentOrderSourceId
      ? await this.map.optional(run, 'orders', s.parentOrderSourceId)
      : null;
    const renewals = await this.renewalOrders(run, s);
    const method = await this.gatewayOf(s.gateway ?? '');
    const profile = (s.gatewayProfileId ?? '').slice(0, 255);
    // Never billed twice: one that Stripe still bills is left for the owner to cancel there.
    const ended =
      RUNNING.has(s.status) && STRIPE_SUBSCRIPTION.test(profile) ? await this.stripeEnded(profile) : null;
    if (run.dryRun) {
      run.plan('subscriptions', s.sourceId);
      return 'created';
    }
    const now = iso(this.clock.now());
    return this.map.first(async (tx) => {
      const id = await this.subscriptions.insertImported(
        {
          user_id: userId,
          product_id: productId,
          variation_id: variationId,
          status: s.status,
          next_payment_at: next,
          billing_period: s.billingPeriod,
          billing_interval: s.billingInterval,
          quantity: 1,
          currency: s.currency,
          recurring_total: s.recurringTotal,
          payment_method: method,
          parent_order_id: parent !== null && parent > 0 ? parent : null,
          status_reason: 'imported',
          gateway_profile_id: profile,
          gateway_profile_ended_at: ended,
          created_at: createdAt ?? now,
          updated_at: now,
        },
        tx,
      );
      await this.orders.linkImportedRenewals(renewals, id, now, tx);
      return this.map.remember(run, 'subscriptions', s.sourceId, id, tx);
    });
  }

  /** The Tollgate ids of a subscription's renewal orders of the old store that were imported. */
  private async renewalOrders(run: Run, s: ImportSubscription): Promise<number[]> {
    const ids: number[] = [];
    for (const sourceId of s.renewalOrderSourceIds ?? []) {
      const id = await this.map.optional(run, 'orders', sourceId);
      if (id !== null && id > 0) ids.push(id);
    }
    return ids;
  }

  /**
   * When Stripe said the old store's subscription no longer bills (asked before any transaction),
   * or a refusal: `old_subscription_active` while Stripe still bills it (the owner cancels it
   * there and runs the import again), `stripe_not_configured` when the store does not take
   * Stripe (nothing could be asked, nor renewed), `stripe_unavailable` (thrown) when Stripe is out
   * of reach.
   */
  private async stripeEnded(profile: string): Promise<string> {
    const state = await this.stripe.oldSubscription(profile);
    if (state === undefined) throw new ImportRefusal('stripe_not_configured');
    if (state === 'billing') throw new ImportRefusal('old_subscription_active');
    return iso(this.clock.now());
  }

  /**
   * The order's currency as the order records it: the store's own when it sells in it (symbol
   * and rate), else the ISO currency with its minor unit (an old store's sale in a currency this
   * store does not sell in; no rate is known for it).
   */
  private currencyOf(code: string, settings: Settings): CurrencyContext {
    const configured = resolveCurrency(settings, code);
    if (configured && configured.code === code) return configured;
    let decimals: number;
    try {
      if (!/^[A-Z]{3}$/.test(code)) throw new Error('not an ISO 4217 code');
      decimals = currencyDecimals(code, settings);
    } catch {
      throw new ImportRefusal('invalid_currency');
    }
    return {
      code,
      symbol: currencySymbol(code),
      decimals,
      rate: '',
      rate_id: '',
      rate_updated_at: null,
      base_currency: settings.base_currency,
      base_decimals: currencyDecimals(settings.base_currency, settings),
    };
  }

  /**
   * The old gateway as an order's payment method here: kept when Tollgate has a gateway of that
   * id (`stripe`, `bacs`, `cheque`), else none, so the order (and a subscription's renewals) can be
   * paid with any gateway rather than only with one this store does not have.
   */
  private async gatewayOf(name: string): Promise<string> {
    return name && (await this.catalogue.gateways.find(name)) ? name : '';
  }
}
