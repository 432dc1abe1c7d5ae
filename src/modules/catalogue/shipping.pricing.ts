import { amountIn, type CurrencyContext } from './currency.js';
import type { ShippingMethodId, ShippingZone } from './shipping.service.js';
import type { Destination } from './tax.pricing.js';

/** One way to ship an order, priced in the active currency (minor units, without tax). */
export interface ShippingRate {
  /** `method_id:instance_id`, e.g. "flat_rate:1": what a client sends back as its choice. */
  id: string;
  label: string;
  method_id: ShippingMethodId;
  instance_id: number;
  cost: number;
}

/**
 * The first zone (in creation order) with a region of the destination's country whose state is
 * empty (the whole country) or equal to the destination's, ignoring case.
 */
export function matchZone(zones: readonly ShippingZone[], where: Destination | null): ShippingZone | null {
  if (!where) return null;
  const country = where.country.toUpperCase();
  const state = where.state.toUpperCase();
  return (
    zones.find((z) =>
      z.regions.some((r) => r.country === country && (r.state === '' || r.state.toUpperCase() === state)),
    ) ?? null
  );
}

/**
 * The zone's methods as rates. `flat_rate` and `local_pickup` cost their `cost` (none = free).
 * `free_shipping` is offered when it has no `min_amount`, when the items total after discounts
 * reaches it, or when an applied coupon grants free shipping.
 */
export function zoneRates(
  zone: ShippingZone,
  ctx: CurrencyContext,
  itemsAfterDiscounts: number,
  freeShippingCoupon: boolean,
): ShippingRate[] {
  const out: ShippingRate[] = [];
  for (const m of zone.methods) {
    if (m.method_id === 'free_shipping') {
      const min = m.min_amount === null ? null : amountIn(m.min_amount, null, ctx);
      if (!(min === null || itemsAfterDiscounts >= min || freeShippingCoupon)) continue;
    }
    out.push({
      id: `${m.method_id}:${m.instance_id}`,
      label: m.title,
      method_id: m.method_id,
      instance_id: m.instance_id,
      cost: m.method_id === 'free_shipping' || m.cost === null ? 0 : amountIn(m.cost, null, ctx),
    });
  }
  return out;
}
