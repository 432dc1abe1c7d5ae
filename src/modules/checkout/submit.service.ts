import type { FastifyBaseLogger } from 'fastify';
import { iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { withTransaction } from '../../db/transaction.js';
import { runFlow, type Step } from '../../flow.js';
import { ApiError } from '../../http/errors.js';
import type { RateCounter } from '../../http/rate-limit.js';
import { sha256 } from '../../random.js';
import { type AccountsService, normaliseEmail } from '../accounts/accounts.service.js';
import type { CartSession } from '../cart/cart.service.js';
import { type CurrencyContext, rateAgeSeconds, resolveCurrency } from '../catalogue/currency.js';
import { TEST_GATEWAY } from '../catalogue/gateways.model.js';
import { currencyDecimals } from '../catalogue/money.js';
import { acceptsCurrency } from '../orders/gateways.js';
import type { NewOrder, OrderRow, TaxEvidence, TaxLine } from '../orders/orders.model.js';
import { newOrderBasis, type OrdersService } from '../orders/orders.service.js';
import type { CartTotals } from '../pricing/totals.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { BillingPeriod } from '../subscriptions/subscriptions.model.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { ipCountry } from '../tax/evidence.js';
import type { TaxModule } from '../tax/tax.module.js';
import { decideVat, type VatDecision } from '../tax/vat.js';
import { verifyCaptcha } from './captcha.js';
import { refusal } from './checkout.errors.js';
import {
  type Address,
  assertStockAvailable,
  destinationOf,
  type RequestItem,
  type ResolvedLine,
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
  payment_data?: Record<string, unknown>;
  customer_note?: string;
  custom_fields?: Record<string, unknown>;
  referral_code?: string;
  captcha_token?: string;
  /** A business buyer's VAT number (docs/taxes.md, 'VAT numbers'). */
  vat_number?: string;
  /** The billing country, confirmed by the buyer when the IP's country differs (docs/taxes.md). */
  confirm_country?: string;
}

/** What submit answers when it does not refuse (a refusal is thrown: an ApiError in checkout's shape). */
export interface SubmitOutcome {
  /** HTTP status: 200, or 500 when processing failed once the order existed. */
  status: 200 | 500;
  body: Record<string, unknown>;
  /** A customer created and signed in by auto-registration: the routes set the sign-in cookie. */
  login: { sessionId: string; nonce: string } | null;
}

/** What the steps of placing an order share: the request, then what each step made. */
interface Placing {
  body: SubmitBody;
  caller: CheckoutCaller;
  settings: Settings;
  email: string;
  idem: string | null;
  session: CartSession;
  lines: ResolvedLine[];
  ctx: CurrencyContext;
  gateway: { id: string; title: string };
  coupons: Awaited<ReturnType<CheckoutService['coupons']>>;
  totals: CartTotals;
  /** The buyer's VAT number and what it came to; null = none given. */
  vat: VatDecision | null;
  /** Sold with reverse charge: a valid VAT number of another member state, under `digital_services`. */
  reverseCharge: boolean;
  evidence: TaxEvidence;
  /** The time the order is stamped with (created, addresses saved, coupons claimed, currency locked). */
  stamp: string;
  order: OrderRow | null;
  customerId: number | null;
  login: SubmitOutcome['login'];
  /** A step refused the placed order (coupons, currency): its undo deletes it instead of keeping it failed. */
  refused?: boolean;
}

/** Another request with the same Idempotency-Key placed its order first: answer with that one. */
class AlreadyPlaced {
  constructor(readonly order: OrderRow) {}
}

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
 * `POST /checkout/submit` in the 13 steps of docs/checkout.md, 'Submit', in order: the request's
 * checks and the rate limit here, then the order placed as one flow of named steps, each opening
 * its own transaction and with its undo beside it (docs/development.md, 'Flows'). Stock is held
 * when the order is created (one conditional update per stock pool) and coupon uses are claimed
 * atomically against the persisted order.
 */
export class SubmitService {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly checkout: CheckoutService,
    private readonly orders: OrdersService,
    private readonly accounts: AccountsService,
    private readonly subscriptions: SubscriptionsService,
    private readonly rates: RateCounter,
    private readonly tax: TaxModule,
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

  /** Step 1, the cart session, is the route's: it is kept whatever the answer. */
  async submit(
    body: SubmitBody,
    caller: CheckoutCaller,
    session: CartSession,
    idempotencyKey: string | undefined,
  ): Promise<SubmitOutcome> {
    if (!body.items || body.items.length === 0) throw refusal('no_items');
    const idem = idempotencyKey ? sha256(`checkout:${idempotencyKey}`) : null;
    if (idem) {
      const first = await this.orders.findByIdempotency(idem);
      if (first) return { status: 200, body: this.result(first, false), login: null };
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
      throw refusal('rate_limited', {
        message: 'Too many orders have been placed recently; please try again later.',
        data: { retry_after: over.retryAfter },
      });
    }
    try {
      return await this.place({ body, caller, settings, email, idem, session, order: null, login: null });
    } finally {
      // 12. Record the attempt, whatever its outcome.
      await Promise.all(buckets.map((b) => this.rates.hit(b, ATTEMPT_WINDOW_S))).catch((err) =>
        this.log.warn({ err }, 'order attempt not recorded'),
      );
    }
  }

  /**
   * Steps 3 to 11 of docs/checkout.md, 'Submit'. Once the order exists, a failure takes the steps
   * back in reverse: a refusal (coupons, currency) deletes the order, any other failure keeps it,
   * `failed`, and answers 500; either way its stock and coupon uses are given back.
   */
  private readonly steps: Step<Placing>[] = [
    { name: 'check the CAPTCHA', run: (s) => this.checkCaptcha(s) },
    { name: 'resolve the items', run: (s) => this.resolveItems(s) },
    { name: 'check the currency and the gateway', run: (s) => this.checkCurrency(s) },
    { name: 'check the tax country and the VAT number', run: (s) => this.checkTax(s) },
    { name: 'price the order', run: (s) => this.price(s) },
    {
      name: 'create the order and hold its stock',
      run: (s) => this.createOrder(s),
      undo: (s) => this.takeBackOrder(s),
    },
    // No undo: the new account stays, and even a failed order's answer signs its owner in.
    { name: 'register the customer', run: (s) => this.register(s) },
    // Its own transaction: a failure leaves no item, address or subscription behind.
    { name: 'add the items, addresses and subscriptions', run: (s) => this.addItems(s) },
    { name: 'claim the coupons', run: (s) => this.claimCoupons(s), undo: (s) => this.releaseCoupons(s) },
    { name: 'lock the currency', run: (s) => this.lockCurrency(s) },
    { name: 'empty the cart', run: (s) => this.emptyCart(s) },
  ];

  private async place(
    state: Pick<Placing, 'body' | 'caller' | 'settings' | 'email' | 'idem' | 'session' | 'order' | 'login'>,
  ): Promise<SubmitOutcome> {
    // The steps fill in the rest.
    const s = state as Placing;
    try {
      await runFlow(this.steps, s, {
        onUndoFailure: (step, err) =>
          this.log.error({ err, order_id: s.order?.id, step }, 'failed order not released'),
      });
    } catch (e) {
      if (e instanceof AlreadyPlaced) return { status: 200, body: this.result(e.order, false), login: null };
      // A refusal is answered as it is: before the order exists, or once a step refused it.
      if (!s.order || s.refused) throw e;
      this.log.error({ err: e, order_id: s.order.id }, 'order processing failed');
      const body = {
        ok: false,
        error: 'The order could not be processed.',
        order_id: s.order.id,
        order_key: s.order.order_key,
        status: 'failed',
      };
      return { status: 500, body, login: s.login };
    }
    // 13. No payment here: the client goes on to pay_url, or thankyou_url for offline methods.
    const order = s.order!;
    const { login } = s;
    return {
      status: 200,
      body: { ...this.result(order, login !== null), ...(login ? { nonce: login.nonce } : {}) },
      login,
    };
  }

  /** 3. CAPTCHA, when the store asks for one. */
  private async checkCaptcha({ settings, body, caller }: Placing): Promise<void> {
    if (settings.captcha_provider === 'none') return;
    const token = body.captcha_token?.trim() ?? '';
    if (token === '' || !(await verifyCaptcha(settings, token, caller.ip))) {
      throw new ApiError('captcha_missing', { shape: 'checkout_not_ok' });
    }
  }

  /** 4. The items against the catalogue; a subscription needs an account the renewals can belong to. */
  private async resolveItems(s: Placing): Promise<void> {
    s.lines = await resolveItems(this.checkout.catalogue, s.body.items!);
    if (s.caller.user === null && s.lines.some((l) => l.line.subscription)) {
      throw refusal('login_required');
    }
  }

  /** 5. Multi-currency: a fresh rate, and a gateway that takes the currency. */
  private async checkCurrency(s: Placing): Promise<void> {
    s.ctx = await this.checkout.currency(s.settings, s.caller.currency);
    if (rateAgeSeconds(s.ctx, this.checkout.clock.now()) > s.settings.currency_rate_max_age) {
      throw refusal('currency_rate_stale');
    }
    // A live store refuses the test card by name, whatever its switch (docs/payments.md).
    if (s.body.payment_method === TEST_GATEWAY && s.settings.store_mode === 'live') {
      throw refusal('test_mode_only');
    }
    const gateway = await this.checkout.catalogue.gateways.find(s.body.payment_method ?? '');
    const impl = gateway?.enabled ? this.orders.gateway(gateway.id) : null;
    if (!gateway || !impl) throw refusal('invalid_payment_method');
    // A card number that cannot be one is refused here, before there is an order to fail.
    const malformed = s.body.payment_data ? impl.paymentDataError?.(s.body.payment_data) : null;
    if (malformed) throw refusal(malformed.code, { data: { params: { [malformed.field]: 'invalid' } } });
    if (!acceptsCurrency(gateway, s.ctx.code)) {
      throw refusal('currency_gateway_mismatch', {
        message: `${gateway.title} is not available for ${s.ctx.code}.`,
      });
    }
    s.gateway = gateway;
  }

  /**
   * The evidence of where the buyer is, and their VAT number (docs/taxes.md). Under
   * `digital_services` a billing country the IP address contradicts must be confirmed
   * (`confirm_country`), since it decides the rate. A VAT number failing its checksum, or one VIES
   * says does not exist, is refused; one VIES cannot check in time is kept, VAT charged.
   */
  private async checkTax(s: Placing): Promise<void> {
    const given = s.body.billing?.country;
    const billing = typeof given === 'string' && given.trim() !== '' ? given.trim().toUpperCase() : null;
    const ip = ipCountry(s.caller.ip);
    const disagree = billing !== null && ip !== null && ip !== billing;
    const confirmed = disagree && s.body.confirm_country?.trim().toUpperCase() === billing;
    if (s.settings.tax_regime === 'digital_services' && disagree && !confirmed) {
      throw refusal('tax_country_unconfirmed', { data: { billing_country: billing, ip_country: ip } });
    }
    const raw = s.body.vat_number?.trim() ?? '';
    s.vat = null;
    if (raw !== '') {
      const now = iso(this.checkout.clock.now());
      s.vat = await decideVat(this.tax.vies, raw, s.settings.tax_seller_country, now);
      if (!s.vat || s.vat.check.status === 'invalid') {
        throw refusal('invalid_vat_number', { data: { params: { vat_number: 'invalid' } } });
      }
    }
    s.reverseCharge = s.settings.tax_regime === 'digital_services' && s.vat?.reverseCharge === true;
    s.evidence = {
      billing_country: billing,
      ip_country: ip,
      card_country: null,
      country_confirmed: confirmed,
      vat_check: s.vat?.check ?? null,
    };
  }

  /** Stock as it shows now (the order re-checks atomically), coupons and the totals. */
  private async price(s: Placing): Promise<void> {
    assertStockAvailable(s.lines);
    s.customerId = s.caller.user?.id ?? null;
    s.coupons = await this.checkout.coupons(s.body.coupons, s.customerId, s.email);
    s.totals = await this.checkout.price({
      settings: s.settings,
      currency: s.ctx,
      lines: s.lines,
      coupons: s.coupons.found,
      billing: s.body.billing,
      shipping: s.body.shipping,
      shippingMethod: s.body.shipping_method,
      reverseCharge: s.reverseCharge,
    });
  }

  /** 6. The order (created_via checkout, currency and rate locked) and its stock, in one transaction. */
  private async createOrder(s: Placing): Promise<void> {
    const { body, totals, gateway } = s;
    const holds = stockHolds(s.lines);
    const chosen = totals.shipping.chosen;
    s.stamp = iso(this.checkout.clock.now());
    const values: NewOrder = {
      ...newOrderBasis(s.ctx, s.settings),
      customer_id: s.customerId,
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
          coupon_id: s.coupons.found.find((f) => f.coupon.code === c.code)?.coupon.id ?? 0,
          discount_total: c.discount_total,
          discount_tax: c.discount_tax,
        })),
      ),
      customer_note: body.customer_note ?? '',
      custom_fields: JSON.stringify(body.custom_fields ?? {}),
      referral_code: body.referral_code ?? '',
      ip_address: s.caller.ip,
      stock_held: JSON.stringify(holds),
      audit: null,
      subscription_id: null,
      renewal_of: null,
      renewal_due_at: null,
      idempotency_hash: s.idem,
      tracking_number: '',
      tracking_url: '',
      paid_at: null,
      buyer_tax_id: s.vat?.number.value ?? '',
      reverse_charge: s.reverseCharge ? 1 : 0,
      // The country whose rates applied: the destination the totals were priced for.
      tax_country:
        s.settings.tax_regime === 'none'
          ? ''
          : (destinationOf(body.shipping?.ship_to_different ? body.shipping : body.billing)?.country ?? ''),
      tax_lines: JSON.stringify(
        totals.taxes.map(
          (t): TaxLine => ({ rate_id: t.rate_id, name: t.name, rate: t.rate, amount: t.amount }),
        ),
      ),
      tax_evidence: JSON.stringify(s.evidence),
      created_at: s.stamp,
      updated_at: s.stamp,
    };
    try {
      s.order = await withTransaction(this.database, async (tx) => {
        const order = await this.orders.create(values, [], tx);
        if (!(await this.orders.takeStock(holds, tx))) {
          throw refusal('out_of_stock');
        }
        if (s.vat?.check.status === 'unverified') {
          const note = `VAT number ${s.vat.number.value} could not be checked with VIES (no answer in time, or the member state's system unavailable): VAT charged. Check it again before refunding the VAT.`;
          await this.orders.addStoreNote(order.id, note, s.stamp, tx);
        }
        return order;
      });
    } catch (e) {
      if (s.idem && isUniqueViolation(e)) {
        const first = await this.orders.findByIdempotency(s.idem);
        if (first) throw new AlreadyPlaced(first);
      }
      throw e;
    }
  }

  /**
   * Undo of 6: a refused order must not exist (its stock given back, its row, items and pending
   * subscriptions deleted); an order that failed stays, `failed`, with its stock given back.
   */
  private async takeBackOrder(s: Placing): Promise<void> {
    const id = s.order!.id;
    await withTransaction(this.database, async (tx) => {
      if (!s.refused) return this.orders.markFailed(id, tx);
      await this.orders.discard(id, tx);
      await this.subscriptions.deletePendingOfOrder(id, tx);
    });
  }

  /** 7. Auto-registration, or linking to the existing customer of that email. */
  private async register(s: Placing): Promise<void> {
    if (s.customerId !== null || !s.email) return;
    const existing = await this.accounts.findByEmail(s.email);
    if (existing) {
      s.customerId = existing.id;
      return;
    }
    if (!s.settings.auto_registration) return;
    try {
      const user = await this.accounts.createUser({
        email: s.email,
        // No password: the customer sets one from the account mail; hashing a random one cost scrypt.
        password: null,
        first_name: s.body.billing?.first_name?.slice(0, 100) ?? '',
        last_name: s.body.billing?.last_name?.slice(0, 100) ?? '',
        via: 'checkout',
      });
      s.customerId = user.id;
      s.login = await this.accounts.startSession(user.id);
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 'email_exists')) throw e;
      s.customerId = (await this.accounts.findByEmail(s.email))?.id ?? null;
    }
  }

  /** 8. Items and addresses (saved to the customer); one subscription per subscription line. */
  private async addItems(s: Placing): Promise<void> {
    const order = s.order!;
    const { customerId } = s;
    const billing = cleanAddress(s.body.billing, true);
    const shipping = s.body.shipping?.ship_to_different
      ? cleanAddress(s.body.shipping, false)
      : { ...billing };
    delete shipping.email;
    delete shipping.phone;
    await withTransaction(this.database, async (tx) => {
      await this.orders.update(
        order.id,
        { customer_id: customerId, billing: JSON.stringify(billing), shipping: JSON.stringify(shipping) },
        tx,
      );
      for (const [i, l] of s.lines.entries()) {
        const t = s.totals.lines[i]!;
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
              currency: s.ctx.code,
              recurring_total: t.total + t.total_tax,
              payment_method: s.gateway.id,
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
          s.stamp,
          tx,
        );
      }
    });
  }

  /** 9. Coupons against the persisted order: every use claimed atomically, or the order is refused. */
  private async claimCoupons(s: Placing): Promise<void> {
    const { found, missing } = s.coupons;
    const order = s.order!;
    const refused = () => {
      s.refused = true;
      const code = missing[0] ?? s.totals.rejected_coupons[0]?.code ?? '';
      return refusal('coupon_failed', {
        status: 409,
        message: `Coupon "${code}" could not be applied to this order.`,
      });
    };
    await withTransaction(this.database, async (tx) => {
      if (missing.length > 0 || s.totals.rejected_coupons.length > 0) throw refused();
      for (const { coupon } of found) {
        if (!s.totals.coupons.some((c) => c.code === coupon.code)) continue;
        if (!(await this.orders.claimCoupon(coupon.id, tx))) throw refused();
        if (coupon.usage_limit_per_user !== null) {
          const uses = await this.orders.couponUses(coupon.id, s.customerId, s.email, tx);
          if (uses >= coupon.usage_limit_per_user) throw refused();
        }
        await this.orders.recordCouponUse(
          {
            coupon_id: coupon.id,
            user_id: s.customerId,
            email: s.email,
            order_id: order.id,
            created_at: s.stamp,
          },
          tx,
        );
      }
    });
  }

  /** Undo of 9: the order's coupon uses are given back. */
  private async releaseCoupons(s: Placing): Promise<void> {
    await this.orders.releaseCoupons(s.order!.id);
  }

  /** 10. The multi-currency audit snapshot, written once the live rate is still the locked one. */
  private async lockCurrency(s: Placing): Promise<void> {
    const { ctx } = s;
    const live = resolveCurrency(await this.checkout.settings.get(), ctx.code);
    if (!live || live.rate_id !== ctx.rate_id) {
      s.refused = true;
      throw refusal('order_currency_failed');
    }
    const audit = {
      currency: ctx.code,
      base_currency: ctx.base_currency,
      rate: ctx.rate,
      rate_id: ctx.rate_id,
      rate_updated_at: ctx.rate_updated_at,
      decimals: currencyDecimals(ctx.code, s.settings),
      locked_at: s.stamp,
    };
    await this.orders.update(s.order!.id, {
      audit: JSON.stringify(audit),
      updated_at: iso(this.checkout.clock.now()),
    });
  }

  /** 11. Success: the cart is emptied (a guest's session purged); the order stands if this fails. */
  private async emptyCart(s: Placing): Promise<void> {
    await this.checkout.cart.purge(s.session).catch((err) => this.log.warn({ err }, 'cart not purged'));
  }
}
