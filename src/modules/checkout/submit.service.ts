import type { FastifyBaseLogger } from 'fastify';
import { iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { RateCounter } from '../../http/rate-limit.js';
import { randomHex, sha256 } from '../../random.js';
import { type AccountsService, normaliseEmail } from '../accounts/accounts.service.js';
import type { CartSession } from '../cart/cart.service.js';
import { currencyDecimals } from '../catalogue/money.js';
import { acceptsCurrency, gatewayImplementation } from '../orders/gateways.js';
import type { OrderRow } from '../orders/orders.model.js';
import { newOrderBasis, type OrdersService } from '../orders/orders.service.js';
import { rateAgeSeconds, resolveCurrency } from '../pricing/currency.js';
import type { BillingPeriod } from '../subscriptions/subscriptions.model.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { verifyCaptcha } from './captcha.js';
import { CheckoutFailure, fail } from './checkout.errors.js';
import {
  type Address,
  assertStockAvailable,
  type RequestItem,
  resolveItems,
  stockHolds,
} from './checkout.pricing.js';
import type { CheckoutCaller, CheckoutService } from './checkout.service.js';

/**
 * Order attempts are counted per IP and per billing email over this window, up to the setting
 * `checkout_rate_limit` (docs/checkout.md, 'Submit', step 2).
 */
export const ATTEMPT_WINDOW_S = 600;

export interface SubmitBody {
  items?: RequestItem[];
  billing?: Address & { email?: string; first_name?: string; last_name?: string };
  shipping?: Address & { ship_to_different?: boolean };
  coupons?: string[];
  shipping_method?: string;
  shipping_cost?: number;
  shipping_title?: string;
  payment_method?: string;
  customer_note?: string;
  custom_fields?: Record<string, unknown>;
  referral_code?: string;
  captcha_token?: string;
}

export interface SubmitOutcome {
  /** HTTP status: 200, a failure's own (docs/checkout.md), 500 when processing failed. */
  status: number;
  body: Record<string, unknown>;
  session: CartSession;
  /** A customer created and signed in by auto-registration: the routes set the sign-in cookie. */
  login: { sessionId: string; nonce: string } | null;
}

const OUT_OF_STOCK = Symbol('out_of_stock');
const COUPON_FAILED = Symbol('coupon_failed');

const ADDRESS_FIELDS = [
  'first_name',
  'last_name',
  'company',
  'email',
  'phone',
  'address_1',
  'address_2',
  'city',
  'state',
  'postcode',
  'country',
] as const;

/** The address fields an order keeps, as strings. */
function cleanAddress(a: Address | undefined, withContact: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of ADDRESS_FIELDS) {
    if (!withContact && (f === 'email' || f === 'phone')) continue;
    const v = a?.[f];
    out[f] = typeof v === 'string' ? v.trim() : '';
  }
  out.country = out.country!.toUpperCase();
  return out;
}

/**
 * `POST /checkout/submit` in the 13 steps of docs/checkout.md, 'Submit', in order. The order row is
 * the unit of undo: stock is held when it is created (one conditional update per stock pool),
 * coupon uses are claimed atomically against the persisted order, and a failure after creation
 * either deletes it (coupons, currency lock: nothing happened) or marks it failed, giving stock and
 * coupon uses back.
 */
export class SubmitService {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly checkout: CheckoutService,
    private readonly orders: OrdersService,
    private readonly accounts: AccountsService,
    private readonly subscriptions: SubscriptionsService,
    private readonly rates: RateCounter,
    private readonly base: () => string,
    private readonly log: FastifyBaseLogger,
  ) {}

  urls(order: Pick<OrderRow, 'id' | 'order_key'>) {
    const key = encodeURIComponent(order.order_key);
    return {
      pay_url: `${this.base()}/checkout/pay-order/${order.id}?key=${key}`,
      thankyou_url: `${this.base()}/checkout/order/${order.id}?key=${key}`,
    };
  }

  private result(order: Pick<OrderRow, 'id' | 'order_key' | 'status'>, loggedIn: boolean) {
    return {
      ok: true,
      order_id: order.id,
      order_key: order.order_key,
      status: order.status,
      ...this.urls(order),
      user_logged_in: loggedIn,
    };
  }

  async submit(
    body: SubmitBody,
    caller: CheckoutCaller,
    idempotencyKey: string | undefined,
  ): Promise<SubmitOutcome> {
    // 1. Hydrate cart and session.
    const session = await this.checkout.openCart(caller);
    const out = (b: Record<string, unknown>, status = 200): SubmitOutcome => ({
      status,
      body: b,
      session,
      login: null,
    });
    try {
      if (!body.items || body.items.length === 0)
        throw fail(400, 'No items provided', { error_code: 'no_items' });
      const idem = idempotencyKey ? sha256(`checkout:${idempotencyKey}`) : null;
      if (idem) {
        const first = await this.orders.findByIdempotency(idem);
        if (first) return out(this.result(first, false));
      }
      const settings = await this.checkout.settings.get();
      const email = normaliseEmail(typeof body.billing?.email === 'string' ? body.billing.email : '');
      // 2. Rate limiting: order attempts per IP and per billing email.
      const buckets = [
        `checkout:ip:${sha256(caller.ip)}`,
        ...(email ? [`checkout:email:${sha256(email)}`] : []),
      ];
      const counts = await Promise.all(buckets.map((b) => this.rates.peek(b, ATTEMPT_WINDOW_S)));
      const over = counts.find((c) => c.count >= settings.checkout_rate_limit);
      if (over) {
        throw fail(429, 'Too many orders have been placed recently; please try again later.', {
          error_code: 'rate_limited',
          retry_after: over.retryAfter,
        });
      }
      try {
        return await this.place(body, caller, settings, email, idem, session);
      } finally {
        // 12. Record the attempt, whatever its outcome.
        await Promise.all(buckets.map((b) => this.rates.hit(b, ATTEMPT_WINDOW_S))).catch((err) =>
          this.log.warn({ err }, 'order attempt not recorded'),
        );
      }
    } catch (e) {
      if (e instanceof CheckoutFailure) return out(e.body, e.status);
      throw e;
    }
  }

  private async place(
    body: SubmitBody,
    caller: CheckoutCaller,
    settings: Awaited<ReturnType<CheckoutService['settings']['get']>>,
    email: string,
    idem: string | null,
    session: CartSession,
  ): Promise<SubmitOutcome> {
    const now = () => this.checkout.clock.now();
    // 3. CAPTCHA.
    if (settings.captcha_provider !== 'none') {
      const token = body.captcha_token?.trim() ?? '';
      if (token === '' || !(await verifyCaptcha(settings, token, caller.ip))) {
        throw new CheckoutFailure(403, {
          ok: false,
          error: 'Please complete the CAPTCHA check.',
          error_code: 'captcha_missing',
        });
      }
    }
    const lines = await resolveItems(this.checkout.catalogue, body.items!);
    // 4. A subscription needs an account the renewals can belong to.
    if (caller.user === null && lines.some((l) => l.line.subscription)) {
      throw fail(401, 'You must be logged in to purchase a subscription.', { error_code: 'login_required' });
    }
    // 5. Multi-currency: a fresh rate, and a gateway that takes the currency.
    const ctx = await this.checkout.currency(settings, caller.currency);
    if (rateAgeSeconds(ctx, now()) > settings.currency_rate_max_age) {
      throw fail(409, 'The exchange rate has expired; please try again shortly.', {
        error_code: 'currency_rate_stale',
      });
    }
    const gateway = await this.checkout.catalogue.gateways.find(body.payment_method ?? '');
    if (!gateway?.enabled || !gatewayImplementation(gateway.id)) {
      throw fail(400, 'Please choose an available payment method.', { error_code: 'invalid_payment_method' });
    }
    if (!acceptsCurrency(gateway, ctx.code)) {
      throw fail(400, `${gateway.title} is not available for ${ctx.code}.`, {
        error_code: 'currency_gateway_mismatch',
      });
    }
    assertStockAvailable(lines);
    const userId = caller.user?.id ?? null;
    const { found, missing } = await this.checkout.coupons(body.coupons, userId, email);
    const totals = await this.checkout.price({
      settings,
      currency: ctx,
      lines,
      coupons: found,
      billing: body.billing,
      shipping: body.shipping,
      shippingMethod: body.shipping_method,
    });

    // 6. Create the order (created_via checkout, currency and rate locked) and hold its stock.
    const holds = stockHolds(lines);
    const chosen = totals.shipping.chosen;
    const stamp = iso(now());
    let order: OrderRow;
    try {
      order = await withTransaction(this.database, async (tx) => {
        const created = await this.orders.create(
          {
            ...newOrderBasis(ctx, settings),
            customer_id: userId,
            status: 'pending',
            created_via: 'checkout',
            subtotal: totals.subtotal,
            subtotal_tax: totals.subtotal_tax,
            discount_total: totals.discount_total,
            discount_tax: totals.discount_tax,
            shipping_total: totals.shipping_total,
            shipping_tax: totals.shipping_tax,
            total_tax: totals.total_tax,
            total: totals.total,
            payment_method: gateway.id,
            payment_method_title: gateway.title,
            billing: '{}',
            shipping: '{}',
            shipping_lines: JSON.stringify(
              chosen
                ? [{ id: 1, method_title: chosen.label, method_id: chosen.method_id, total: chosen.cost }]
                : [],
            ),
            coupons: JSON.stringify(
              totals.coupons.map((c) => ({
                code: c.code,
                coupon_id: found.find((f) => f.coupon.code === c.code)?.coupon.id ?? 0,
                discount_total: c.discount_total,
                discount_tax: c.discount_tax,
              })),
            ),
            customer_note: body.customer_note ?? '',
            custom_fields: JSON.stringify(body.custom_fields ?? {}),
            referral_code: body.referral_code ?? '',
            ip_address: caller.ip,
            stock_held: JSON.stringify(holds),
            audit: null,
            subscription_id: null,
            renewal_of: null,
            renewal_due_at: null,
            idempotency_hash: idem,
            tracking_number: '',
            tracking_url: '',
            paid_at: null,
            created_at: stamp,
            updated_at: stamp,
          },
          [],
          tx,
        );
        if (!(await this.orders.takeStock(holds, tx))) throw OUT_OF_STOCK;
        return created;
      });
    } catch (e) {
      if (e === OUT_OF_STOCK)
        throw fail(409, 'Sorry, some items are no longer in stock.', { error_code: 'out_of_stock' });
      if (idem && isUniqueViolation(e)) {
        const first = await this.orders.findByIdempotency(idem);
        if (first) return { status: 200, body: this.result(first, false), session, login: null };
      }
      throw e;
    }

    let login: SubmitOutcome['login'] = null;
    let customerId = userId;
    try {
      // 7. Auto-registration, or linking to the existing customer of that email.
      if (customerId === null && email) {
        const existing = await this.accounts.findByEmail(email);
        if (existing) customerId = existing.id;
        else if (settings.auto_registration) {
          try {
            const user = await this.accounts.createUser({
              email,
              password: randomHex(24),
              first_name: body.billing?.first_name?.slice(0, 100) ?? '',
              last_name: body.billing?.last_name?.slice(0, 100) ?? '',
            });
            customerId = user.id;
            login = await this.accounts.startSession(user.id);
          } catch (e) {
            if (!(e instanceof ApiError && e.code === 'email_exists')) throw e;
            customerId = (await this.accounts.findByEmail(email))?.id ?? null;
          }
        }
      }
      // 8. Items and addresses (saved to the customer); one subscription per subscription line.
      const billing = cleanAddress(body.billing, true);
      const shipping = body.shipping?.ship_to_different ? cleanAddress(body.shipping, false) : { ...billing };
      delete shipping.email;
      delete shipping.phone;
      await withTransaction(this.database, async (tx) => {
        await this.orders.update(
          order.id,
          {
            customer_id: customerId,
            billing: JSON.stringify(billing),
            shipping: JSON.stringify(shipping),
          },
          tx,
        );
        for (const [i, l] of lines.entries()) {
          const t = totals.lines[i]!;
          let subscriptionId: number | null = null;
          if (l.line.subscription && customerId !== null) {
            subscriptionId = await this.subscriptions.createForOrder(
              {
                user_id: customerId,
                product_id: l.product.id,
                variation_id: l.variationId,
                quantity: t.quantity,
                period: (l.product.subscription?.period ?? 'month') as BillingPeriod,
                interval: l.product.subscription?.interval ?? 1,
                currency: ctx.code,
                recurring_total: t.total + t.total_tax,
                payment_method: gateway.id,
                order_id: order.id,
              },
              tx,
            );
          }
          await this.orders.addItem(
            {
              order_id: order.id,
              product_id: t.product_id,
              variation_id: t.variation_id,
              name: t.name,
              quantity: t.quantity,
              price: t.unit_price,
              subtotal: t.subtotal,
              subtotal_tax: t.subtotal_tax,
              total: t.total,
              total_tax: t.total_tax,
              meta: JSON.stringify(l.meta),
              subscription_id: subscriptionId,
            },
            tx,
          );
        }
        if (customerId !== null) {
          await this.orders.saveAddresses(
            customerId,
            JSON.stringify(billing),
            JSON.stringify(shipping),
            stamp,
            tx,
          );
        }
      });
    } catch (e) {
      return { status: 500, body: await this.failed(order, e), session, login };
    }

    // 9. Coupons against the persisted order: every use claimed atomically, or the order goes.
    try {
      await withTransaction(this.database, async (tx) => {
        if (missing.length > 0 || totals.rejected_coupons.length > 0) throw COUPON_FAILED;
        for (const { coupon } of found) {
          if (!totals.coupons.some((c) => c.code === coupon.code)) continue;
          if (!(await this.orders.claimCoupon(coupon.id, tx))) throw COUPON_FAILED;
          if (coupon.usage_limit_per_user !== null) {
            const uses = await this.orders.couponUses(coupon.id, customerId, email, tx);
            if (uses >= coupon.usage_limit_per_user) throw COUPON_FAILED;
          }
          await this.orders.recordCouponUse(
            { coupon_id: coupon.id, user_id: customerId, email, order_id: order.id, created_at: stamp },
            tx,
          );
        }
      });
    } catch (e) {
      if (e !== COUPON_FAILED) return { status: 500, body: await this.failed(order, e), session, login };
      await this.deleteOrder(order.id);
      const code = missing[0] ?? totals.rejected_coupons[0]?.code ?? '';
      throw fail(409, `Coupon "${code}" could not be applied to this order.`, {
        error_code: 'coupon_failed',
      });
    }

    // 10. Order-creation hooks: the multi-currency audit snapshot, checked against the live rate.
    try {
      const live = resolveCurrency(await this.checkout.settings.get(), ctx.code);
      if (!live || live.rate_id !== ctx.rate_id) {
        await this.deleteOrder(order.id);
        throw fail(409, 'The exchange rate changed while the order was placed; please try again.', {
          error_code: 'order_currency_failed',
        });
      }
      const audit = {
        currency: ctx.code,
        base_currency: ctx.base_currency,
        rate: ctx.rate,
        rate_id: ctx.rate_id,
        rate_updated_at: ctx.rate_updated_at,
        decimals: currencyDecimals(ctx.code, settings),
        locked_at: stamp,
      };
      await this.orders.update(order.id, { audit: JSON.stringify(audit), updated_at: iso(now()) });
    } catch (e) {
      if (e instanceof CheckoutFailure) throw e;
      return { status: 500, body: await this.failed(order, e), session, login };
    }

    // 11. Success: the cart is emptied (a guest's session purged).
    await this.checkout.cart.purge(session).catch((err) => this.log.warn({ err }, 'cart not purged'));
    // 13. No payment here: the client goes on to pay_url, or thankyou_url for offline methods.
    return {
      status: 200,
      body: { ...this.result(order, login !== null), ...(login ? { nonce: login.nonce } : {}) },
      session,
      login,
    };
  }

  /** Order processing failed after creation: the order stays, failed, with stock and coupons given back. */
  private async failed(order: OrderRow, err: unknown): Promise<Record<string, unknown>> {
    this.log.error({ err, order_id: order.id }, 'order processing failed');
    await withTransaction(this.database, async (tx) => {
      await this.orders.markFailed(order.id, tx);
      await this.orders.releaseCoupons(order.id, tx);
    }).catch((e) => this.log.error({ err: e, order_id: order.id }, 'failed order not released'));
    return {
      ok: false,
      error: 'The order could not be processed.',
      order_id: order.id,
      order_key: order.order_key,
      status: 'failed',
    };
  }

  /** Undoes an order that must not exist (coupon or currency failure): stock, coupons, subscriptions, row. */
  private async deleteOrder(id: number): Promise<void> {
    await withTransaction(this.database, async (tx) => {
      await this.orders.releaseCoupons(id, tx);
      await this.orders.discard(id, tx);
      await this.subscriptions.deletePendingOfOrder(id, tx);
    });
  }
}
