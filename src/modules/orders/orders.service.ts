import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { randomHex } from '../../random.js';
import type { Actor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import { type Product, resolveActivationLimit } from '../catalogue/catalogue.model.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { CurrencyContext } from '../catalogue/currency.js';
import { fromMinor } from '../catalogue/money.js';
import type { EntitlementPolicyInput } from '../catalogue/policy.js';
import { exclusiveTaxes, inclusiveTaxes } from '../catalogue/tax.pricing.js';
import type { TaxRate } from '../catalogue/tax.service.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { Gateways, PaymentGateway } from './gateways.js';
import {
  type NewOrder,
  type NewOrderItem,
  NO_EVIDENCE,
  type OrderItemRow,
  type OrderRow,
  type StockHold,
  type TaxEvidence,
  type TaxLine,
} from './orders.model.js';
import type { OrderFilter, OrderSort, OrdersRepository } from './orders.repository.js';
import type { OrderStatus } from './orders.tables.js';
import type { RefundsRepository } from './refunds.repository.js';

export const ORDER_STATUSES: readonly OrderStatus[] = [
  'pending',
  'processing',
  'on-hold',
  'completed',
  'failed',
  'cancelled',
  'refunded',
];
/** What the administrator's status change may set: `refunded` comes only from a refund (docs/payments.md). */
export const SETTABLE_STATUSES: readonly OrderStatus[] = ORDER_STATUSES.filter((s) => s !== 'refunded');
/** Statuses of a paid order: entering one issues the order's licenses (once). */
export const PAID: ReadonlySet<string> = new Set(['processing', 'completed']);
/** Statuses that give the order's held stock back. */
const RELEASING: ReadonlySet<string> = new Set(['failed', 'cancelled']);
/** Renewal orders that may still be paid (a closed renewal window cancels them). */
export const OPEN_RENEWAL = ['pending', 'failed', 'on-hold'] as const satisfies readonly OrderStatus[];

/**
 * The fields every new order starts with, whoever creates it (checkout or a renewal): its key,
 * the currency snapshot it is priced in (the rate is locked with the order), and whether it is a
 * test order (placed while the store is in test mode; docs/payments.md).
 */
export function newOrderBasis(ctx: CurrencyContext, settings: Settings) {
  return {
    order_key: `order_${randomHex(16)}`,
    currency: ctx.code,
    currency_symbol: ctx.symbol,
    decimals: ctx.decimals,
    base_currency: ctx.base_currency,
    rate: ctx.rate,
    rate_id: ctx.rate_id,
    rate_updated_at: ctx.rate_updated_at,
    prices_include_tax: settings.prices_include_tax ? 1 : 0,
    test: settings.store_mode === 'test' ? 1 : 0,
  };
}

/** The first order's tax lines, and its rates as the pricing functions take them. */
function parentRates(parent: OrderRow | undefined) {
  const lines = parent ? (JSON.parse(parent.tax_lines) as TaxLine[]) : [];
  const rates: TaxRate[] = lines.map((l) => ({
    id: l.rate_id,
    country: parent!.tax_country,
    state: '',
    postcode: '',
    rate: l.rate,
    name: l.name,
    shipping: false,
    compound: false,
    priority: 1,
  }));
  return { lines, rates };
}

/** The tax columns of an order taxed as `parent` was, with each rate's amount. */
function taxColumnsAs(parent: OrderRow | undefined, lines: TaxLine[], amounts: number[]) {
  return {
    tax_country: parent?.tax_country ?? '',
    buyer_tax_id: parent?.buyer_tax_id ?? '',
    reverse_charge: parent?.reverse_charge ?? 0,
    tax_lines: JSON.stringify(lines.map((l, i): TaxLine => ({ ...l, amount: amounts[i]! }))),
    tax_evidence: parent?.tax_evidence ?? '{}',
  };
}

/**
 * The tax inside a renewal's amount, which repeats its first order's total with tax: the first
 * order's rates taken out of it as from a price with tax, the same country, VAT number and reverse
 * charge (docs/taxes.md, 'Renewals'). A first order without recorded tax lines gives none.
 */
export function renewalTax(parent: OrderRow | undefined, gross: number) {
  const { lines, rates } = parentRates(parent);
  const amounts = inclusiveTaxes(gross, rates);
  return { tax: amounts.reduce((a, b) => a + b, 0), columns: taxColumnsAs(parent, lines, amounts) };
}

/**
 * The tax of an order that acts on a license outside checkout (its renewal, its move to another
 * tier), priced at a catalogue `price`: the license's first order's rates, country, VAT number
 * and reverse charge, taken out of the price when prices include tax and added to it when they do
 * not, as checkout does (docs/taxes.md, 'Renewals'). `total` is what the buyer pays.
 */
export function licenseOrderTax(parent: OrderRow | undefined, price: number, pricesIncludeTax: boolean) {
  if (pricesIncludeTax) return { ...renewalTax(parent, price), total: price };
  const { lines, rates } = parentRates(parent);
  const amounts = exclusiveTaxes(price, rates);
  const tax = amounts.reduce((a, b) => a + b, 0);
  return { tax, total: price + tax, columns: taxColumnsAs(parent, lines, amounts) };
}

/**
 * A pending order made without checkout (a subscription's renewal, a term license's renewal):
 * newOrderBasis, its total untaxed, and empty what only checkout fills (addresses, shipping,
 * coupons, fields). The caller overrides what it knows (payment method, billing, subscription).
 */
export function plainOrder(
  ctx: CurrencyContext,
  settings: Settings,
  /** `total`: absent for an order acting on a license, whose totals createForLicense writes. */
  o: { customer_id: number; created_via: string; total?: number; now: string },
) {
  const total = o.total ?? 0;
  return {
    ...newOrderBasis(ctx, settings),
    customer_id: o.customer_id,
    status: 'pending' as const,
    created_via: o.created_via,
    subtotal: total,
    subtotal_tax: 0,
    discount_total: 0,
    discount_tax: 0,
    shipping_total: 0,
    shipping_tax: 0,
    total_tax: 0,
    total,
    payment_method: '',
    payment_method_title: '',
    billing: '{}',
    shipping: '{}',
    shipping_lines: '[]',
    coupons: '[]',
    customer_note: '',
    custom_fields: '{}',
    referral_code: '',
    ip_address: '',
    stock_held: '[]',
    audit: null,
    subscription_id: null,
    renewal_of: null,
    renewal_due_at: null,
    idempotency_hash: null,
    tracking_number: '',
    tracking_url: '',
    paid_at: null,
    created_at: o.now,
    updated_at: o.now,
  };
}

/** The license an order item's meta says it renews (`license_action: 'renewal'`), else null. */
export function renewalOf(meta: string): number | null {
  try {
    const m = JSON.parse(meta) as { license_action?: unknown; license_id?: unknown } | null;
    return m?.license_action === 'renewal' && Number.isSafeInteger(m.license_id)
      ? (m.license_id as number)
      : null;
  } catch {
    return null;
  }
}

/**
 * The move an order item's meta asks for (`license_action: 'upgrade'`, docs/selling.md, 'Upgrades
 * and downgrades'): the license, the new tier's limit and its worth; else null.
 */
export function upgradeOf(
  meta: string,
): { license_id: number; activation_limit: number; tier_paid_minor: number } | null {
  try {
    const m = JSON.parse(meta) as Record<string, unknown> | null;
    const ok =
      m?.license_action === 'upgrade' &&
      Number.isSafeInteger(m.license_id) &&
      Number.isSafeInteger(m.activation_limit) &&
      Number.isSafeInteger(m.tier_paid_minor);
    return ok
      ? {
          license_id: m.license_id as number,
          activation_limit: m.activation_limit as number,
          tier_paid_minor: m.tier_paid_minor as number,
        }
      : null;
  } catch {
    return null;
  }
}

/** What the subscriptions module does inside an order's transaction when the order is paid. */
export type OrderPaidHook = (order: OrderRow, paidAt: Date, tx: Tx) => Promise<void>;

/** What runs inside the transaction that creates an order, or moves it to `failed` (src/wiring.ts: its email). */
export type OrderHook = (order: OrderRow, tx: Tx) => Promise<void>;

/** Products of an order's items, read before its transaction (SQLite has one connection). */
export type ProductMap = Map<number, Product | null>;

export const parseHolds = (order: Pick<OrderRow, 'stock_held'>): StockHold[] =>
  JSON.parse(order.stock_held) as StockHold[];

/**
 * Orders: status changes, stock holds and license issuance on payment (docs/checkout.md, 'Gateways
 * and order statuses' and 'Licenses from orders'). Every change of one order runs in a transaction
 * that holds its row, so parallel changes (two admins, a payment racing an admin) apply one after
 * the other and licenses are issued exactly once.
 */
export class OrdersService {
  private paidHooks: OrderPaidHook[] = [];
  private createdHooks: OrderHook[] = [];
  private failedHooks: OrderHook[] = [];
  private heldHooks: OrderHook[] = [];

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: OrdersRepository,
    private readonly catalogue: CatalogueService,
    private readonly licenses: LicenseService,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly notes: RefundsRepository,
    private readonly gateways: Gateways,
  ) {}

  /** Adds a gateway implemented by another module (src/wiring.ts: Stripe). */
  addGateway(gateway: PaymentGateway): void {
    this.gateways.add(gateway);
  }

  /** The implementation behind a gateway id, or null for none. */
  gateway(id: string): PaymentGateway | null {
    return this.gateways.get(id);
  }

  /** Runs inside the transaction of every order that enters a paid status (subscriptions, renewals). */
  onPaid(hook: OrderPaidHook): void {
    this.paidHooks.push(hook);
  }

  /** Runs inside the transaction of every order created with its items (renewals; checkout adds its items later). */
  onCreated(hook: OrderHook): void {
    this.createdHooks.push(hook);
  }

  /** Runs inside the transaction of every order that moves to `failed` through a status change. */
  onFailed(hook: OrderHook): void {
    this.failedHooks.push(hook);
  }

  /** Runs inside the transaction of every order that moves to `on-hold` (waiting for an offline payment). */
  onHeld(hook: OrderHook): void {
    this.heldHooks.push(hook);
  }

  find(id: number, tx?: Tx): Promise<OrderRow | undefined> {
    return this.repo.find(id, tx);
  }

  /**
   * Refuses, before any money moves, an order whose item acts on a license that can no longer take
   * it (docs/selling.md): the renewal of a license no longer renewable (`409
   * license_not_renewable`), the move of one no longer upgradable (`409 license_not_upgradable`:
   * expired, revoked, its subscription on hold since the quote). Paid, it would change nothing
   * and the customer would have paid for nothing.
   */
  async assertLicenseActionsApply(order: OrderRow): Promise<void> {
    if (order.customer_id === null) return;
    for (const item of await this.repo.items(order.id)) {
      const renewal = renewalOf(item.meta);
      if (renewal !== null) await this.licenses.renewable(renewal, order.customer_id);
      const move = upgradeOf(item.meta);
      if (move !== null) await this.licenses.upgradable(move.license_id, order.customer_id);
    }
  }

  /** Reads the order to change it in `tx`; on PostgreSQL its row stays locked until `tx` ends. */
  lock(id: number, tx: Tx): Promise<OrderRow | undefined> {
    return this.repo.lock(id, tx);
  }

  items(orderId: number, tx?: Tx): Promise<OrderItemRow[]> {
    return this.repo.items(orderId, tx);
  }

  /** The order checkout placed under this idempotency key, if any. */
  findByIdempotency(hash: string): Promise<OrderRow | undefined> {
    return this.repo.findBy('idempotency_hash', hash);
  }

  /** The renewal order of one due payment (`renewal_of` is `subscription id:due date`), if any. */
  findRenewal(renewalOf: string): Promise<OrderRow | undefined> {
    return this.repo.findBy('renewal_of', renewalOf);
  }

  /** The renewal orders of several due payments at once, by their `subscription id:due date` key. */
  async findRenewals(keys: string[]): Promise<Map<string, OrderRow>> {
    const rows = await this.repo.findByRenewalsOf(keys);
    return new Map(rows.map((row) => [row.renewal_of!, row]));
  }

  /** Creates an order with its items (checkout adds its items in a later step); answers its row. */
  async create(order: NewOrder, items: Omit<NewOrderItem, 'order_id'>[], tx: Tx): Promise<OrderRow> {
    const id = await this.repo.insert(order, tx);
    for (const item of items) await this.repo.insertItem({ ...item, order_id: id }, tx);
    const row = (await this.repo.find(id, tx))!;
    for (const hook of this.createdHooks) await hook(row, tx);
    return row;
  }

  /**
   * An order that happened in another store, imported as it was (docs/migrating.md): written with
   * its items and none of the created hooks, so no renewal charge, email or webhook follows.
   */
  async insertImported(order: NewOrder, items: Omit<NewOrderItem, 'order_id'>[], tx: Tx): Promise<number> {
    const id = await this.repo.insert(order, tx);
    for (const item of items) await this.repo.insertItem({ ...item, order_id: id }, tx);
    return id;
  }

  /**
   * Imported orders that paid an imported subscription's renewals in the old store, linked to it
   * as its renewals are (an order already linked keeps its subscription). They keep `import` as
   * where they came from, so nothing treats them as renewals Tollgate made.
   */
  linkImportedRenewals(orderIds: number[], subscriptionId: number, now: string, tx?: Tx): Promise<void> {
    return this.repo.linkToSubscription(orderIds, subscriptionId, now, tx);
  }

  /**
   * Creates the pending order of one item that acts on a license (its renewal, its move to another
   * tier: the item's meta names it) at `price.amount` less a coupon's `discount`, in the entry
   * basis, taxed as the license's first order `price.parent` was (licenseOrderTax): the discount
   * comes off before tax, and the order and its item carry the totals as checkout writes them.
   */
  createForLicense(
    order: NewOrder,
    item: Pick<NewOrderItem, 'product_id' | 'variation_id' | 'name' | 'meta'>,
    price: {
      parent: OrderRow | undefined;
      amount: number;
      /** A coupon's discount on the line, with the coupon (the order's `coupons`, as checkout writes them). */
      discount?: { amount: number; code: string; coupon_id: number };
      pricesIncludeTax: boolean;
    },
    tx: Tx,
  ): Promise<OrderRow> {
    const full = licenseOrderTax(price.parent, price.amount, price.pricesIncludeTax);
    const paid = licenseOrderTax(
      price.parent,
      price.amount - (price.discount?.amount ?? 0),
      price.pricesIncludeTax,
    );
    const fullNet = full.total - full.tax;
    const paidNet = paid.total - paid.tax;
    const discount = { discount_total: fullNet - paidNet, discount_tax: full.tax - paid.tax };
    const { code, coupon_id } = price.discount ?? {};
    return this.create(
      {
        ...order,
        ...paid.columns,
        ...discount,
        coupons: JSON.stringify(code === undefined ? [] : [{ code, coupon_id, ...discount }]),
        subtotal: fullNet,
        total_tax: paid.tax,
        total: paid.total,
      },
      [
        {
          ...item,
          quantity: 1,
          price: price.amount,
          subtotal: fullNet,
          subtotal_tax: full.tax,
          total: paidNet,
          total_tax: paid.tax,
          subscription_id: null,
        },
      ],
      tx,
    );
  }

  /** Adds the paying card's country to the order's evidence of location (docs/taxes.md), in `tx`. */
  async recordCardCountry(order: OrderRow, country: string, tx: Tx): Promise<OrderRow> {
    const evidence = { ...NO_EVIDENCE, ...(JSON.parse(order.tax_evidence) as Partial<TaxEvidence>) };
    const tax_evidence = JSON.stringify({ ...evidence, card_country: country });
    await this.repo.update(order.id, { tax_evidence }, tx);
    return { ...order, tax_evidence };
  }

  /** A note the store itself writes on an order (no administrator behind it), in `tx`. */
  async addStoreNote(orderId: number, body: string, at: string, tx: Tx): Promise<void> {
    await this.notes.insertNote(
      { order_id: orderId, kind: 'note', body, actor_user_id: null, actor_email: null, created_at: at },
      tx,
    );
  }

  addItem(item: NewOrderItem, tx?: Tx): Promise<number> {
    return this.repo.insertItem(item, tx);
  }

  update(id: number, patch: Partial<Omit<OrderRow, 'id'>>, tx?: Tx): Promise<void> {
    return this.repo.update(id, patch, tx);
  }

  /**
   * Takes every hold from stock, or answers false as soon as one pool has too little left: the
   * caller then rolls `tx` back, which gives back what was taken.
   */
  async takeStock(holds: readonly StockHold[], tx: Tx): Promise<boolean> {
    for (const hold of holds) if (!(await this.repo.takeStock(hold, tx))) return false;
    return true;
  }

  /**
   * A failed order gave its stock back; paying it takes the stock again (the variation's own pool,
   * else the product's), or answers null when some ran out (the caller rolls `tx` back).
   */
  async holdAgain(
    order: OrderRow,
    items: Pick<OrderItemRow, 'product_id' | 'variation_id' | 'quantity'>[],
    products: ProductMap,
    tx: Tx,
  ): Promise<OrderRow | null> {
    const holds: StockHold[] = [];
    for (const item of items) {
      const product = products.get(item.product_id);
      if (!product) continue;
      const variation = product.variations.find((v) => v.id === item.variation_id);
      if (variation && variation.stock_quantity !== null) {
        holds.push({ pool: 'variation', id: variation.id, quantity: item.quantity });
      } else if (product.stock_quantity !== null) {
        holds.push({ pool: 'product', id: product.id, quantity: item.quantity });
      }
    }
    if (!(await this.takeStock(holds, tx))) return null;
    const stock_held = JSON.stringify(holds);
    await this.repo.update(order.id, { stock_held, updated_at: iso(this.clock.now()) }, tx);
    return { ...order, stock_held };
  }

  /** Counts one use of the coupon, only while it is under its usage limit. */
  claimCoupon(couponId: number, tx: Tx): Promise<boolean> {
    return this.repo.claimCoupon(couponId, tx);
  }

  /** Uses of the coupon this customer has claimed (by user id, else by billing email). */
  couponUses(couponId: number, userId: number | null, email: string, tx?: Tx): Promise<number> {
    return this.repo.usesBy(couponId, userId, email, tx);
  }

  recordCouponUse(
    use: { coupon_id: number; user_id: number | null; email: string; order_id: number; created_at: string },
    tx: Tx,
  ): Promise<void> {
    return this.repo.recordCouponUse(use, tx);
  }

  /** Gives back the order's coupon uses. */
  releaseCoupons(orderId: number, tx?: Tx): Promise<void> {
    return this.repo.releaseCoupons(orderId, tx);
  }

  /** The customer's last billing and shipping addresses (JSON), which checkout offers again. */
  savedAddresses(userId: number) {
    return this.repo.addresses(userId);
  }

  saveAddresses(userId: number, billing: string, shipping: string, now: string, tx?: Tx): Promise<void> {
    return this.repo.saveAddresses(userId, billing, shipping, now, tx);
  }

  /** Order processing failed after creation: the order stays, `failed`, its stock given back. */
  async markFailed(id: number, tx: Tx): Promise<void> {
    const locked = await this.repo.lock(id, tx);
    if (!locked) return;
    for (const hold of parseHolds(locked)) await this.repo.giveStock(hold, tx);
    await this.repo.update(id, { status: 'failed', stock_held: '[]', updated_at: iso(this.clock.now()) }, tx);
  }

  /** An order that must not exist: its stock given back, its row and items deleted. */
  async discard(id: number, tx: Tx): Promise<void> {
    const locked = await this.repo.lock(id, tx);
    if (!locked) return;
    for (const hold of parseHolds(locked)) await this.repo.giveStock(hold, tx);
    await this.repo.delete(id, tx);
  }

  /** Cancels the subscription's renewal orders that may still be paid (its window closed). */
  cancelOpenRenewals(subscriptionId: number, tx?: Tx): Promise<void> {
    return this.repo.cancelRenewals(subscriptionId, OPEN_RENEWAL, iso(this.clock.now()), tx);
  }

  async require(id: number): Promise<OrderRow> {
    const order = await this.repo.find(id);
    if (!order) throw new ApiError('order_not_found');
    return order;
  }

  async get(id: number) {
    const order = await this.require(id);
    return this.view(order, await this.repo.items(order.id));
  }

  /**
   * A page of orders (newest first unless sorted otherwise) and how many the filter matches in all
   * (docs/api.md, 'Lists').
   */
  async list(
    filter: OrderFilter,
    page: number,
    perPage: number,
    sort: { by: OrderSort; order: 'asc' | 'desc' } = { by: 'id', order: 'desc' },
  ) {
    const [rows, total] = await Promise.all([
      this.repo.list(filter, perPage, (page - 1) * perPage, sort),
      this.repo.count(filter),
    ]);
    const items = await Promise.all(rows.map(async (o) => this.view(o, await this.repo.items(o.id))));
    return { items, total };
  }

  /**
   * A customer's orders, newest first, one page: the order rows alone (no lines, so one query for
   * the page and one for the count, both on orders_customer), for the store's My orders page.
   */
  async listForCustomer(customerId: number, page: number, perPage: number) {
    const filter = { customer_id: customerId };
    const [rows, total] = await Promise.all([
      this.repo.list(filter, perPage, (page - 1) * perPage),
      this.repo.count(filter),
    ]);
    return { rows, total };
  }

  async productsOf(items: Pick<OrderItemRow, 'product_id'>[]): Promise<ProductMap> {
    const ids = [...new Set(items.map((i) => i.product_id))];
    const products = await Promise.all(ids.map((id) => this.catalogue.getProduct(id)));
    return new Map(ids.map((id, i) => [id, products[i] ?? null]));
  }

  /** The administrator's status change: moves an offline-paid order on, cancels, completes. */
  /** `actor`: the administrator who asked, recorded with the change (docs/admin.md, 'Audit trail'). */
  async setStatus(id: number, status: OrderStatus, actor?: Actor) {
    const order = await this.require(id);
    const items = await this.repo.items(id);
    const products = await this.productsOf(items);
    const settings = await this.settings.get();
    await withTransaction(this.database, async (tx) => {
      const locked = await this.repo.lock(id, tx);
      if (!locked) throw new ApiError('order_not_found');
      // A refunded order's money went back: paying it again would issue its licenses again.
      if (locked.status === 'refunded' && status !== 'refunded') throw new ApiError('order_refunded');
      await this.transition(locked, status, { products, settings }, tx);
      if (actor && locked.status !== status) {
        const changes = { status: { before: locked.status, after: status } };
        await this.audit.record(
          actor,
          { entity_type: 'order', entity_id: id, action: 'status', changes },
          tx,
        );
      }
    });
    return this.get(order.id);
  }

  /**
   * Moves a locked order to `to`, all in the caller's transaction `tx` (which holds the order's
   * row), so an order is paid with its licenses and subscriptions or not at all:
   * 1. the new status; failure or cancellation gives the held stock back, the first payment
   *    records its time;
   * 2. a paid status issues the licenses not yet issued; the first payment extends the licenses
   *    its renewal items name and moves the licenses its upgrade items name to their new tier;
   * 3. the first payment runs the paid hooks (src/wiring.ts: the order's subscriptions start, or a
   *    renewal extends its subscription's licenses).
   */
  async transition(
    order: OrderRow,
    to: OrderStatus,
    ctx: { products: ProductMap; settings: Settings },
    tx: Tx,
  ): Promise<OrderRow> {
    const now = this.clock.now();
    const firstPayment = PAID.has(to) && order.paid_at === null;
    const updated = await this.recordStatus(order, to, now, tx);
    if (PAID.has(to)) await this.issueLicenses(updated, ctx, firstPayment ? now : null, tx);
    if (firstPayment) {
      await this.notes.insertNote(
        {
          order_id: order.id,
          kind: 'payment',
          body: `Payment received: ${fromMinor(Number(order.total), order.decimals)} ${order.currency}${order.payment_method_title ? ` by ${order.payment_method_title}` : ''}.`,
          actor_user_id: null,
          actor_email: null,
          created_at: iso(now),
        },
        tx,
      );
      for (const hook of this.paidHooks) await hook(updated, now, tx);
    }
    if (to === 'failed' && order.status !== 'failed')
      for (const hook of this.failedHooks) await hook(updated, tx);
    if (to === 'on-hold' && order.status !== 'on-hold')
      for (const hook of this.heldHooks) await hook(updated, tx);
    return updated;
  }

  private async recordStatus(order: OrderRow, to: OrderStatus, now: Date, tx: Tx): Promise<OrderRow> {
    const patch: Partial<OrderRow> = { status: to, updated_at: iso(now) };
    if (RELEASING.has(to) && order.stock_held !== '[]') {
      for (const hold of parseHolds(order)) await this.repo.giveStock(hold, tx);
      patch.stock_held = '[]';
    }
    if (PAID.has(to) && order.paid_at === null) patch.paid_at = iso(now);
    await this.repo.update(order.id, patch, tx);
    return { ...order, ...patch };
  }

  /**
   * One license per licensed line item that has none yet (the unique index on order_item_id is
   * the last defence): limit = the resolved limit × quantity (0 stays unlimited), the entitlement
   * snapshot from the variation or else the product (none = legacy).
   */
  private async issueLicenses(
    order: OrderRow,
    ctx: { products: ProductMap; settings: Settings },
    firstPaidAt: Date | null,
    tx: Tx,
  ): Promise<void> {
    if (order.customer_id === null) return; // a license needs an owner
    if (order.created_via === 'renewal') return; // a renewal extends the subscription's licenses instead
    const items = await this.repo.items(order.id, tx);
    const issued = new Set((await this.repo.licensesOfOrder(order.id, tx)).map((l) => l.order_item_id));
    for (const item of items) {
      // An item renewing a license (docs/selling.md, 'Buying a renewal') extends it, once, instead.
      const renewal = renewalOf(item.meta);
      if (renewal !== null) {
        if (firstPaidAt) {
          const renewed = { license_id: renewal, product_id: item.product_id };
          await this.licenses.renewForOrder(
            renewed,
            { id: order.id, customer_id: order.customer_id },
            firstPaidAt,
            tx,
          );
        }
        continue;
      }
      // An item moving a license to another tier changes it, once, instead.
      const upgrade = upgradeOf(item.meta);
      if (upgrade !== null) {
        const product = ctx.products.get(item.product_id);
        if (firstPaidAt && product) {
          const variation = product.variations.find((v) => v.id === item.variation_id) ?? null;
          const policy = variation?.entitlement_policy ?? product.entitlement_policy;
          await this.licenses.upgradeForOrder(
            {
              ...upgrade,
              product_id: product.id,
              variation_id: variation ? variation.id : 0,
              entitlement_policy: (policy as EntitlementPolicyInput | null) ?? null,
            },
            { id: order.id, customer_id: order.customer_id },
            firstPaidAt,
            tx,
          );
        }
        continue;
      }
      if (issued.has(item.id)) continue;
      const product = ctx.products.get(item.product_id);
      if (!product || product.licensing_enabled === 'no') continue;
      const variation = product.variations.find((v) => v.id === item.variation_id) ?? null;
      const limit = resolveActivationLimit(product, variation, ctx.settings.default_activation_limit);
      const policy = variation?.entitlement_policy ?? product.entitlement_policy;
      await this.licenses.create(
        {
          product_id: product.id,
          variation_id: variation ? variation.id : 0,
          user_id: order.customer_id,
          activation_limit: limit === 0 ? 0 : limit * item.quantity,
          entitlement_policy: (policy as EntitlementPolicyInput | null) ?? null,
          order_id: order.id,
          order_item_id: item.id,
          subscription_id: item.subscription_id,
          test: order.test === 1,
        },
        tx,
      );
    }
  }

  /**
   * Deletes every test order, giving back their coupon uses first (docs/payments.md, 'Deleting
   * test data'); answers how many. Runs in the caller's transaction.
   */
  async deleteTestOrders(tx: Tx): Promise<number> {
    for (const { id } of await this.repo.testOrderIds(tx)) await this.repo.releaseCoupons(id, tx);
    return this.repo.deleteTestOrders(tx);
  }

  /** The administrator's view of an order. */
  view(order: OrderRow, items: OrderItemRow[]) {
    const money = (minor: number) => fromMinor(Number(minor), order.decimals);
    return {
      id: order.id,
      number: String(order.id),
      order_key: order.order_key,
      status: order.status,
      created_via: order.created_via,
      test: order.test === 1,
      customer_id: order.customer_id,
      currency: order.currency,
      currency_symbol: order.currency_symbol,
      base_currency: order.base_currency,
      exchange_rate: order.rate,
      rate_id: order.rate_id,
      prices_include_tax: order.prices_include_tax === 1,
      subtotal: money(order.subtotal),
      subtotal_tax: money(order.subtotal_tax),
      discount_total: money(order.discount_total),
      discount_tax: money(order.discount_tax),
      shipping_total: money(order.shipping_total),
      shipping_tax: money(order.shipping_tax),
      total_tax: money(order.total_tax),
      total: money(order.total),
      payment_method: order.payment_method,
      payment_method_title: order.payment_method_title,
      billing: JSON.parse(order.billing) as Record<string, string>,
      shipping: JSON.parse(order.shipping) as Record<string, string>,
      shipping_lines: (JSON.parse(order.shipping_lines) as ShippingLine[]).map((l) => ({
        ...l,
        total: money(l.total),
      })),
      coupons: (JSON.parse(order.coupons) as OrderCoupon[]).map((c) => ({
        code: c.code,
        discount_total: money(c.discount_total),
        discount_tax: money(c.discount_tax),
      })),
      customer_note: order.customer_note,
      subscription_id: order.subscription_id,
      renewal_due_at: order.renewal_due_at,
      paid_at: order.paid_at,
      refunded_total: money(Number(order.refunded_total)),
      disputed_at: order.disputed_at,
      buyer_tax_id: order.buyer_tax_id,
      reverse_charge: order.reverse_charge === 1,
      tax_country: order.tax_country,
      tax_lines: (JSON.parse(order.tax_lines) as TaxLine[]).map((l) => ({
        name: l.name,
        rate: l.rate,
        amount: money(l.amount),
      })),
      tax_evidence: { ...NO_EVIDENCE, ...(JSON.parse(order.tax_evidence) as Partial<TaxEvidence>) },
      items: items.map((i) => ({
        id: i.id,
        product_id: i.product_id,
        variation_id: i.variation_id,
        name: i.name,
        quantity: i.quantity,
        price: money(i.price),
        subtotal: money(i.subtotal),
        total: money(i.total),
        total_tax: money(i.total_tax),
        subscription_id: i.subscription_id,
      })),
      created_at: order.created_at,
      updated_at: order.updated_at,
    };
  }
}

export interface ShippingLine {
  id: number;
  method_title: string;
  method_id: string;
  /** Minor units. */
  total: number;
}

export interface OrderCoupon {
  code: string;
  coupon_id: number;
  discount_total: number;
  discount_tax: number;
}
