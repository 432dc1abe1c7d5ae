import type { Product } from '../catalogue/catalogue.model.js';
import type { PricingCoupon } from '../catalogue/coupons.pricing.js';
import type { Coupon } from '../catalogue/coupons.service.js';
import type { CurrencyContext } from '../catalogue/currency.js';
import { regimeRates } from '../catalogue/digital-rates.js';
import type { ShippingZone } from '../catalogue/shipping.service.js';
import type { TaxRate } from '../catalogue/tax.service.js';
import { type CartTotals, calculateTotals, type PricingLine } from '../pricing/totals.js';
import type { Settings } from '../settings/settings.schemas.js';
import { toPricingLine } from './cart.items.js';
import type { CartState } from './cart.model.js';

/** Everything the pricing engine reads besides the cart itself, loaded before the cart is locked. */
export interface PricingData {
  settings: Settings;
  currency: CurrencyContext;
  /** By product id; null = no such product. */
  products: Map<number, Product | null>;
  /** By lower-case code; null = no such coupon. */
  coupons: Map<string, Coupon | null>;
  /** The cart owner's claimed uses by coupon id; null for a guest's cart. */
  customerUses: Map<number, number> | null;
  /** Loaded only when the cart has a destination (no destination, no taxes or shipping). */
  taxRates: TaxRate[] | null;
  zones: ShippingZone[] | null;
  now: Date;
}

/** Whether `data` holds every product and coupon the state refers to (else it is reloaded). */
export function covers(data: PricingData, state: CartState): boolean {
  return (
    state.items.every((l) => data.products.has(l.product_id)) &&
    state.coupons.every((c) => data.coupons.has(c)) &&
    (state.destination === null || (data.taxRates !== null && data.zones !== null))
  );
}

/**
 * Prices a cart state. Lines that can no longer be bought and coupons that no longer exist or no
 * longer apply are left out of the totals, and out of `cleaned`, which is what gets stored.
 */
export function priceState(state: CartState, data: PricingData): { totals: CartTotals; cleaned: CartState } {
  const lines: PricingLine[] = [];
  const items = state.items.filter((item) => {
    const line = toPricingLine(item, data.products.get(item.product_id));
    if (line) lines.push(line);
    return line !== null;
  });
  const coupons: PricingCoupon[] = [];
  for (const code of state.coupons) {
    const c = data.coupons.get(code);
    if (c)
      coupons.push({ ...c, customer_uses: data.customerUses ? (data.customerUses.get(c.id) ?? 0) : null });
  }
  const totals = calculateTotals({
    currency: data.currency,
    prices_include_tax: data.settings.prices_include_tax,
    coupons_enabled: data.settings.coupons_enabled,
    lines,
    coupons,
    tax_rates: regimeRates(data.settings.tax_regime, data.taxRates ?? [], state.destination),
    destination: state.destination,
    shipping_zones: data.zones ?? [],
    shipping_method: state.shipping_method,
    fees: [],
    now: data.now,
  });
  const applied = new Set(totals.coupons.map((c) => c.code));
  return { totals, cleaned: { ...state, items, coupons: state.coupons.filter((c) => applied.has(c)) } };
}
