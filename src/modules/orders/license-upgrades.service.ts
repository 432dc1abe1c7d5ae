import Big from 'big.js';
import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { Actor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import {
  isPublicProduct,
  isSubscriptionType,
  isVariableType,
  type Product,
  resolveActivationLimit,
  type Variation,
} from '../catalogue/catalogue.model.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { checkCoupon, discountMatrix, type PricingCoupon } from '../catalogue/coupons.pricing.js';
import type { Coupon } from '../catalogue/coupons.service.js';
import { type CurrencyContext, resolveCurrency } from '../catalogue/currency.js';
import { fromMinor, minorOf, toBig } from '../catalogue/money.js';
import { parseTimestamp } from '../licensing/entitlements.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { LicenseRecord } from '../licensing/licensing.model.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { OrderRow } from './orders.model.js';
import { type OrdersService, plainOrder } from './orders.service.js';

const DAY_MS = 86_400_000;

/**
 * The price of moving to a tier (docs/selling.md, 'Upgrades and downgrades'), all in minor units:
 * credit = floor(paid × days_left ÷ period_days), where days_left counts the days from now to the
 * end of the current period, a started day as a whole one (0 to period_days); a license without
 * an end (lifetime) keeps all of what was paid as credit. price = max(0, new price − credit).
 */
export function prorate(input: {
  newPrice: number;
  paid: number;
  periodDays: number | null;
  end: Date | null;
  now: Date;
}): { credit: number; price: number; days_left: number | null } {
  let credit = input.paid;
  let daysLeft: number | null = null;
  if (input.end !== null && input.periodDays !== null && input.periodDays > 0) {
    const started = Math.ceil((input.end.getTime() - input.now.getTime()) / DAY_MS);
    daysLeft = Math.min(Math.max(started, 0), input.periodDays);
    // BigInt: a price of 10^12 minor units times 36,500 days passes 2^53.
    credit = Number((BigInt(input.paid) * BigInt(daysLeft)) / BigInt(input.periodDays));
  }
  return { credit, price: Math.max(0, input.newPrice - credit), days_left: daysLeft };
}

/**
 * What the quote reads of the subscription that renews a license (src/wiring.ts: the
 * subscriptions module answers it): its status, billing schedule and current period.
 */
export interface SubscriptionBilling {
  status: string;
  period: string;
  interval: number;
  next_payment_at: Date | null;
  period_start: Date | null;
}

export type SubscriptionBillingReader = (subscriptionId: number) => Promise<SubscriptionBilling | null>;

/** A tier a license may move to, priced for it. */
export interface UpgradeTarget {
  product: Product;
  variation: Variation | null;
  /** The tier's catalogue price, base minor units. */
  full: number;
  /** What the customer pays for it now, base minor units. */
  price: number;
  /** Sites the license activates on that tier; 0 = unlimited. */
  activation_limit: number;
}

/** What the quote routes answer (docs/selling.md, 'Upgrades and downgrades'). */
export interface UpgradeQuote {
  license: LicenseRecord;
  currency: CurrencyContext;
  paid: number;
  /** The current tier's catalogue price, base minor units: a dearer target is an upgrade. */
  current_price: number;
  credit: number;
  days_left: number | null;
  period_days: number | null;
  /** The subscription renewing the license, whose billing moves with it; null for a term license. */
  billing: SubscriptionBilling | null;
  targets: UpgradeTarget[];
}

/**
 * Upgrades and downgrades of a license (docs/selling.md, 'Upgrades and downgrades'): the tiers a
 * license may move to (its product's other variations, and the products on its upgrade paths),
 * priced with the unused share of the current period credited, and the pending order of one move,
 * of one item whose meta names the license (`license_id`, `license_action: 'upgrade'`). Paying it
 * (pay-order, any gateway) moves the license instead of issuing a new one (the orders' paid step);
 * an order that costs nothing (a downgrade) is completed at once. A license a subscription renews
 * moves only to a subscription product of the same billing period and interval, prorated over the
 * subscription's current period; paying moves the subscription too (LicenseService's hook).
 */
export class UpgradeService {
  private subscriptionBilling: SubscriptionBillingReader | null = null;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly settings: SettingsService,
    private readonly catalogue: CatalogueService,
    private readonly orders: OrdersService,
    private readonly licenses: LicenseService,
  ) {}

  /** How the quote reads a license's subscription (src/wiring.ts: the subscriptions module). */
  setSubscriptionBilling(reader: SubscriptionBillingReader): void {
    this.subscriptionBilling = reader;
  }

  /**
   * The billing of the subscription renewing the license, null for none; a subscription that
   * cannot move (not active, or its payment already due) makes the license not upgradable.
   */
  private async billingOf(license: LicenseRecord): Promise<SubscriptionBilling | null> {
    if (license.subscription_id === null) return null;
    const billing = this.subscriptionBilling ? await this.subscriptionBilling(license.subscription_id) : null;
    const now = this.clock.now();
    if (
      billing?.status !== 'active' ||
      billing.next_payment_at === null ||
      billing.period_start === null ||
      billing.next_payment_at <= now
    ) {
      throw new ApiError('license_not_upgradable');
    }
    return billing;
  }

  /** The license's tiers to move to; `userId` null for an administrator. */
  async quote(licenseId: number, userId: number | null): Promise<UpgradeQuote> {
    const license = await this.licenses.upgradable(licenseId, userId);
    const settings = await this.settings.get();
    const currency = resolveCurrency(settings, null)!;
    const product = await this.catalogue.getProduct(license.product_id);
    const variation = product?.variations.find((v) => v.id === license.variation_id) ?? null;
    const paid = await this.paidFor(license, product, variation, currency);
    const billing = await this.billingOf(license);
    const now = this.clock.now();
    // A subscription's license: the credit is the unused share of its current billing period.
    const end = billing
      ? billing.next_payment_at
      : license.usage_expires_at === null
        ? null
        : parseTimestamp(license.usage_expires_at);
    const periodDays = billing
      ? Math.round((billing.next_payment_at!.getTime() - billing.period_start!.getTime()) / DAY_MS)
      : end === null
        ? null
        : periodOf(license, end);
    const { credit, days_left } = prorate({ newPrice: 0, paid, periodDays, end, now });
    const targets: UpgradeTarget[] = [];
    const candidates = product ? [product] : [];
    for (const id of product?.upgrade_paths ?? []) {
      const other = await this.catalogue.getProduct(id);
      if (other) candidates.push(other);
    }
    for (const p of candidates) {
      if (p.status !== 'publish' || isPublicProduct(p) || !billedAlike(p, billing)) continue;
      const tiers: (Variation | null)[] = isVariableType(p.type) ? p.variations : [null];
      for (const v of tiers) {
        if (p.id === license.product_id && (v?.id ?? 0) === license.variation_id) continue;
        const full = v ? v.price_minor : p.price_minor;
        const limit = resolveActivationLimit(p, v, settings.default_activation_limit);
        targets.push({
          product: p,
          variation: v,
          full,
          price: Math.max(0, full - credit),
          activation_limit: limit,
        });
      }
    }
    const currentPrice = variation ? variation.price_minor : (product?.price_minor ?? 0);
    return {
      license,
      currency,
      paid,
      current_price: currentPrice,
      credit,
      days_left,
      period_days: periodDays,
      billing,
      targets,
    };
  }

  /**
   * The pending order moving the license to `target`, for the license's owner; an administrator
   * (`actor`) may create it for any customer's license, recorded in the audit trail.
   */
  async createOrder(
    licenseId: number,
    userId: number | null,
    target: { product_id?: number; variation_id?: number; coupon_code?: string },
    actor?: Actor,
  ): Promise<{ order: OrderRow; target: UpgradeTarget }> {
    const quote = await this.quote(licenseId, userId);
    const { license } = quote;
    const chosen = this.pick(quote, target);
    const settings = await this.settings.get();
    const { product, variation, price } = chosen;
    const email = license.user_email ?? '';
    const coupon = target.coupon_code
      ? await this.coupon(target.coupon_code, {
          settings,
          currency: quote.currency,
          price,
          product,
          userId: license.user_id,
          email,
        })
      : null;
    const meta = {
      license_id: license.id,
      license_action: 'upgrade',
      activation_limit: chosen.activation_limit,
      tier_paid_minor: chosen.full,
    };
    const name = `Upgrade: ${variation ? `${product.name} - ${variation.name}` : product.name}`;
    const now = iso(this.clock.now());
    const parent = license.order_id ? await this.orders.find(license.order_id) : undefined;
    return withTransaction(this.database, async (tx) => {
      // The coupon's use is claimed with the order, under its usage limits, as checkout claims it.
      if (coupon && !(await this.orders.claimCoupon(coupon.coupon.id, tx))) {
        throw new ApiError('coupon_failed', { data: { reason: 'usage_limit_reached' } });
      }
      if (coupon?.coupon.usage_limit_per_user != null) {
        const uses = await this.orders.couponUses(coupon.coupon.id, license.user_id, email, tx);
        if (uses >= coupon.coupon.usage_limit_per_user) {
          throw new ApiError('coupon_failed', { data: { reason: 'usage_limit_per_user_reached' } });
        }
      }
      const order = await this.orders.createForLicense(
        {
          ...plainOrder(quote.currency, settings, {
            customer_id: license.user_id,
            created_via: 'checkout',
            now,
          }),
          test: license.test,
        },
        { product_id: product.id, variation_id: variation?.id ?? 0, name, meta: JSON.stringify(meta) },
        {
          parent,
          amount: price,
          ...(coupon
            ? { discount: { amount: coupon.discount, code: coupon.coupon.code, coupon_id: coupon.coupon.id } }
            : {}),
          pricesIncludeTax: settings.prices_include_tax,
        },
        tx,
      );
      if (coupon) {
        await this.orders.recordCouponUse(
          {
            coupon_id: coupon.coupon.id,
            user_id: license.user_id,
            email,
            order_id: order.id,
            created_at: now,
          },
          tx,
        );
      }
      if (actor) {
        const changes = {
          upgrade_order: { before: null, after: order.id },
          target: { before: null, after: { product_id: product.id, variation_id: variation?.id ?? 0 } },
        };
        await this.audit.record(
          actor,
          { entity_type: 'license', entity_id: license.id, action: 'upgrade_order', changes },
          tx,
        );
      }
      // Nothing to pay (a downgrade, credit or a coupon covering the price): the move applies at once.
      if (Number(order.total) > 0) return { order, target: chosen };
      const products = new Map([[product.id, product]]);
      const paid = await this.orders.transition(order, 'completed', { products, settings }, tx);
      return { order: paid, target: chosen };
    });
  }

  /**
   * A coupon on a move (docs/selling.md, 'Upgrades and downgrades'): checked as checkout checks it,
   * against the one line of the move at its prorated price in the entry basis, and its discount on
   * that line; 400 `coupon_failed` with `data.reason` when it does not apply.
   */
  private async coupon(
    code: string,
    o: {
      settings: Settings;
      currency: CurrencyContext;
      price: number;
      product: Product;
      userId: number;
      email: string;
    },
  ): Promise<{ coupon: Coupon; discount: number }> {
    if (!o.settings.coupons_enabled)
      throw new ApiError('coupon_failed', { data: { reason: 'coupons_disabled' } });
    const coupon = await this.catalogue.coupons.getByCode(code.trim().toLowerCase());
    if (!coupon) throw new ApiError('coupon_failed', { data: { reason: 'not_found' } });
    const priced: PricingCoupon = {
      ...coupon,
      customer_uses: await this.orders.couponUses(coupon.id, o.userId, o.email),
    };
    const lines = [{ product_id: o.product.id, quantity: 1, amount: o.price }];
    const reason = checkCoupon(priced, lines, o.currency, this.clock.now());
    if (reason) throw new ApiError('coupon_failed', { data: { reason } });
    return { coupon, discount: discountMatrix([priced], lines, o.currency)[0]![0]! };
  }

  /** The target the body names: a variation (of the product, when given too) or a simple product. */
  private pick(quote: UpgradeQuote, target: { product_id?: number; variation_id?: number }): UpgradeTarget {
    const { license } = quote;
    const { product_id: productId, variation_id: variationId } = target;
    if (productId === undefined && variationId === undefined) throw new ApiError('invalid_upgrade_target');
    const productOk = (id: number) => productId === undefined || productId === id;
    if (
      (variationId !== undefined && variationId === license.variation_id && productOk(license.product_id)) ||
      (variationId === undefined && productId === license.product_id && license.variation_id === 0)
    ) {
      throw new ApiError('upgrade_same_tier');
    }
    const found = quote.targets.find((t) =>
      variationId !== undefined
        ? t.variation?.id === variationId && productOk(t.product.id)
        : t.variation === null && t.product.id === productId,
    );
    if (!found) throw new ApiError('invalid_upgrade_target');
    return found;
  }

  /**
   * What was paid for the license's current tier, base minor units: the tier's worth an upgrade
   * recorded, else the issuing order item's total (converted at the order's locked rate), else (a
   * license issued by hand or imported) the tier's catalogue price.
   */
  private async paidFor(
    license: LicenseRecord,
    product: Product | null,
    variation: Variation | null,
    currency: CurrencyContext,
  ): Promise<number> {
    if (license.tier_paid_minor !== null) return Number(license.tier_paid_minor);
    if (license.order_id !== null && license.order_item_id !== null) {
      const order = await this.orders.find(license.order_id);
      const item = order && (await this.orders.items(order.id)).find((i) => i.id === license.order_item_id);
      if (order && item) {
        const total = Number(item.total);
        if (order.currency === order.base_currency) return total;
        return minorOf(toBig(total, order.decimals).div(new Big(order.rate)), currency.base_decimals);
      }
    }
    return variation ? variation.price_minor : (product?.price_minor ?? 0);
  }
}

/**
 * Whether a license may move to product `p`: a term license to a product that is not a
 * subscription; a subscription's license to a subscription product billed on the same schedule
 * (its renewals continue at the new price, on the same dates).
 */
function billedAlike(p: Product, billing: SubscriptionBilling | null): boolean {
  if (billing === null) return !isSubscriptionType(p.type);
  return (
    isSubscriptionType(p.type) &&
    (p.subscription?.period ?? 'month') === billing.period &&
    (p.subscription?.interval ?? 1) === billing.interval
  );
}

/** The length in days of the license's current period: its policy's term, else issue to expiry. */
function periodOf(license: LicenseRecord, end: Date): number | null {
  if (license.entitlement_policy !== null) {
    const usage = (JSON.parse(license.entitlement_policy) as { usage: { mode: string; days?: number } })
      .usage;
    if (usage.mode === 'days' && usage.days !== undefined) return usage.days;
  }
  const issued = Date.parse(license.created_at);
  const days = Math.round((end.getTime() - issued) / DAY_MS);
  return days > 0 ? days : null;
}

/** A minor amount as the API writes money. */
export const money = (minor: number, currency: CurrencyContext) => fromMinor(minor, currency.decimals);
