import { type Clock, iso } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import type { AuthUser } from '../accounts/accounts.service.js';
import type { CartCaller, CartService, CartSession } from '../cart/cart.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { countriesAndStates } from '../catalogue/countries.js';
import type { Coupon } from '../catalogue/coupons.service.js';
import { type CurrencyContext, resolveCurrency } from '../catalogue/currency.js';
import { fromMinor } from '../catalogue/money.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { CartTotals } from '../pricing/totals.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';
import { decideVat, type ViesClient } from '../tax/vat.js';
import {
  type Address,
  assertStockAvailable,
  destinationOf,
  priceRequest,
  type RequestItem,
  type ResolvedLine,
  resolveItems,
} from './checkout.pricing.js';
import { checkoutFields } from './fields.js';

/** Who is checking out, as the routes resolved it. */
export interface CheckoutCaller {
  ip: string;
  user: AuthUser | null;
  /** The customer-session (cart) cookie, if any. */
  cartToken: string | null;
  browserUser: () => Promise<number | null>;
  /** The currency code from `?currency=` or the shopper's currency cookie, already validated. */
  currency: string;
  /** The live sign-in session's nonce, when the request came with one. */
  nonce: string | null;
}

export const FALLBACK_COUNTRY = 'US';

/**
 * The read-only parts of checkout (docs/checkout.md, 'Routes'): bootstrap, quote, fields, countries
 * and shipping rates. None of them changes a session or a cart; all prices come from the one totals
 * engine.
 */
export class CheckoutService {
  constructor(
    readonly cart: CartService,
    readonly catalogue: CatalogueService,
    readonly settings: SettingsService,
    readonly orders: OrdersService,
    readonly clock: Clock,
    private readonly vies: ViesClient,
  ) {}

  async currency(settings: Settings, code: string): Promise<CurrencyContext> {
    return resolveCurrency(settings, code) ?? resolveCurrency(settings, null)!;
  }

  private cartCaller(caller: CheckoutCaller): CartCaller {
    return { token: caller.cartToken, userId: caller.user?.id ?? null, browserUser: caller.browserUser };
  }

  openCart(caller: CheckoutCaller): Promise<CartSession> {
    return this.cart.open(this.cartCaller(caller));
  }

  /** The caller's cart for a read, without creating a session (CartService.read). */
  readCart(caller: CheckoutCaller) {
    return this.cart.read(this.cartCaller(caller), caller.currency);
  }

  /** Coupons by code (trimmed, lower case, each once): found ones with this customer's claimed uses. */
  async coupons(
    codes: string[] | undefined,
    userId: number | null,
    email: string,
  ): Promise<{ found: { coupon: Coupon; uses: number | null }[]; missing: string[] }> {
    const unique = [...new Set((codes ?? []).map((c) => c.trim().toLowerCase()).filter((c) => c !== ''))];
    const found: { coupon: Coupon; uses: number | null }[] = [];
    const missing: string[] = [];
    for (const code of unique) {
      const coupon = await this.catalogue.coupons.getByCode(code);
      if (!coupon) {
        missing.push(code);
        continue;
      }
      const known = userId !== null || email !== '';
      const uses = known ? await this.orders.couponUses(coupon.id, userId, email) : null;
      found.push({ coupon, uses });
    }
    return { found, missing };
  }

  async price(input: {
    settings: Settings;
    currency: CurrencyContext;
    lines: ResolvedLine[];
    coupons: { coupon: Coupon; uses: number | null }[];
    billing?: Address;
    shipping?: Address & { ship_to_different?: boolean };
    shippingMethod?: string;
    reverseCharge?: boolean;
  }): Promise<CartTotals> {
    const destination = destinationOf(input.shipping?.ship_to_different ? input.shipping : input.billing);
    const [taxRates, zones] = await Promise.all([
      this.catalogue.taxRates.list(),
      this.catalogue.shipping.list(),
    ]);
    return priceRequest({
      settings: input.settings,
      currency: input.currency,
      lines: input.lines,
      coupons: input.coupons,
      destination,
      shippingMethod: input.shippingMethod ?? null,
      reverseCharge: input.reverseCharge,
      taxRates,
      zones,
      now: this.clock.now(),
    });
  }

  async defaultCountry(): Promise<string> {
    const zones = await this.catalogue.shipping.list();
    return zones[0]?.regions[0]?.country ?? FALLBACK_COUNTRY;
  }

  async bootstrap(caller: CheckoutCaller, totals: CartTotals) {
    const settings = await this.settings.get();
    const ctx = await this.currency(settings, caller.currency);
    const money = (m: number) => fromMinor(m, ctx.decimals);
    const digitalOnly = !totals.needs_shipping;
    const { countries, states } = countriesAndStates();
    const saved = caller.user ? await this.orders.savedAddresses(caller.user.id) : undefined;
    const addresses = saved
      ? [
          { type: 'billing', ...(JSON.parse(saved.billing) as Record<string, unknown>) },
          { type: 'shipping', ...(JSON.parse(saved.shipping) as Record<string, unknown>) },
        ]
      : [];
    return {
      ok: true,
      cart: {
        currency: ctx.code,
        items: totals.lines.map((l) => ({
          key: l.key,
          product_id: l.product_id,
          variation_id: l.variation_id,
          name: l.name,
          quantity: l.quantity,
          price: money(l.unit_price),
          subtotal: money(l.subtotal),
          total: money(l.total),
        })),
        subtotal: money(totals.subtotal),
        total: money(totals.total),
        needs_shipping: totals.needs_shipping,
      },
      fields: checkoutFields(digitalOnly).map((f) => ({
        key: f.key,
        fieldset: f.fieldset,
        type: f.type,
        label: f.label,
        required: f.required,
        hidden: f.hidden,
        priority: f.priority,
      })),
      countries,
      states,
      default_country: await this.defaultCountry(),
      addresses,
      customer: { is_logged_in: caller.user !== null, id: caller.user?.id ?? 0 },
      currency: {
        base_currency: ctx.base_currency,
        currency: ctx.code,
        symbol: ctx.symbol,
        decimals: ctx.decimals,
        rate: ctx.rate,
        rate_id: ctx.rate_id,
      },
      requires_shipping: totals.needs_shipping,
      is_digital_only: digitalOnly,
      security: {
        captcha_provider: settings.captcha_provider,
        recaptcha_site_key: settings.captcha_provider === 'recaptcha' ? settings.captcha_site_key : '',
        turnstile_site_key: settings.captcha_provider === 'turnstile' ? settings.captcha_site_key : '',
      },
      ...(caller.user && caller.nonce ? { nonce: caller.nonce } : {}),
    };
  }

  /**
   * A price for a basket that is not the cart; failures are `{error}` with HTTP 200
   * (docs/checkout.md, 'Failure bodies and HTTP statuses').
   */
  async quote(
    body: {
      items?: RequestItem[];
      billing?: Address;
      shipping?: Address;
      coupons?: string[];
      shipping_method?: string;
      vat_number?: string;
    },
    caller: CheckoutCaller,
  ) {
    try {
      if (!body.items || body.items.length === 0) throw new ApiError('no_items');
      const settings = await this.settings.get();
      const ctx = await this.currency(settings, caller.currency);
      const lines = await resolveItems(this.catalogue, body.items);
      assertStockAvailable(lines);
      const email = typeof body.billing?.email === 'string' ? body.billing.email.trim().toLowerCase() : '';
      const { found, missing } = await this.coupons(body.coupons, caller.user?.id ?? null, email);
      if (missing.length > 0) {
        throw new ApiError('coupon_not_found', { message: `Coupon "${missing[0]}" does not exist.` });
      }
      const reverseCharge = await this.reverseCharge(settings, body.vat_number);
      const totals = await this.price({
        settings,
        currency: ctx,
        lines,
        coupons: found,
        billing: body.billing,
        shipping: body.shipping ? { ...body.shipping, ship_to_different: true } : undefined,
        shippingMethod: body.shipping_method,
        reverseCharge,
      });
      const rejected = totals.rejected_coupons[0];
      if (rejected) {
        const message = `Coupon "${rejected.code}" cannot be applied (${rejected.reason}).`;
        throw new ApiError('coupon_failed', { message });
      }
      const money = (m: number) => fromMinor(m, ctx.decimals);
      return {
        ok: true,
        items: totals.lines.map((l) => ({
          product_id: l.product_id,
          variation_id: l.variation_id,
          name: l.name,
          qty: l.quantity,
          price: money(l.unit_price),
          line_total: money(l.subtotal),
        })),
        totals: {
          subtotal: money(totals.subtotal),
          discount_total: money(totals.discount_total),
          shipping_total: money(totals.shipping_total),
          tax_total: money(totals.total_tax),
          grand_total: money(totals.total),
          reverse_charge: reverseCharge,
          currency: ctx.code,
          currency_symbol: ctx.symbol,
          currency_pos: 'left',
          decimals: ctx.decimals,
          decimal_sep: '.',
          thousand_sep: ',',
        },
      };
    } catch (e) {
      if (e instanceof ApiError && e.status < 500) return { error: e.message };
      throw e;
    }
  }

  /**
   * Whether a quote is priced without VAT: as submit decides it (docs/taxes.md, 'VAT numbers'), a
   * number VIES confirms of another member state than the seller's. A number that fails its checks,
   * or that VIES cannot confirm in time, quotes VAT: the summary never promises less than the
   * order will charge, and submit says what is wrong with the number.
   */
  private async reverseCharge(settings: Settings, raw: string | undefined): Promise<boolean> {
    if (settings.tax_regime !== 'digital_services' || !raw || raw.trim() === '') return false;
    const decision = await decideVat(
      this.vies,
      raw.trim(),
      settings.tax_seller_country,
      iso(this.clock.now()),
    );
    return decision?.reverseCharge === true;
  }

  fields(isDigitalOnly: boolean) {
    return { ok: true, fields: checkoutFields(isDigitalOnly), is_digital_only: isDigitalOnly };
  }

  async countries() {
    const { countries, states } = countriesAndStates();
    return { countries, states, default_country: await this.defaultCountry() };
  }

  /**
   * The shipping zone's rates for an address and a basket (no coupons: the request carries none,
   * only the address and the items).
   */
  async shippingRates(body: { shipping: Address; items: RequestItem[] }, caller: CheckoutCaller) {
    const settings = await this.settings.get();
    const ctx = await this.currency(settings, caller.currency);
    const lines = await resolveItems(this.catalogue, body.items);
    const totals = await this.price({
      settings,
      currency: ctx,
      lines,
      coupons: [],
      shipping: { ...body.shipping, ship_to_different: true },
    });
    return {
      ok: true,
      rates: totals.shipping.rates.map((r) => ({
        id: r.id,
        label: r.label,
        cost: Number(fromMinor(r.cost, ctx.decimals)),
        method_id: r.method_id,
        instance_id: r.instance_id,
      })),
      zone_name: totals.shipping.zone?.name ?? '',
    };
  }
}
