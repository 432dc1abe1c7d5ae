import {
  type CouponRejection,
  checkCoupon,
  type DiscountLine,
  discountMatrix,
  type PricingCoupon,
} from '../catalogue/coupons.pricing.js';
import { type CurrencyContext, fromBase } from '../catalogue/currency.js';
import { allocate } from '../catalogue/money.js';
import { matchZone, type ShippingRate, zoneRates } from '../catalogue/shipping.pricing.js';
import type { ShippingZone } from '../catalogue/shipping.service.js';
import { type Destination, exclusiveTaxes, inclusiveTaxes, matchTaxRates } from '../catalogue/tax.pricing.js';
import type { TaxRate } from '../catalogue/tax.service.js';

/**
 * The pricing engine: one pure function from a cart's contents and the store's rules to every
 * amount the cart shows. No I/O, no clock (the caller passes `now`), no floats: amounts are
 * integers in minor units of the active currency; big.js appears only where rates and
 * percentages meet amounts. docs/pricing.md states every rule.
 */

export interface PricingLine {
  key: string;
  product_id: number;
  /** 0 for a simple product. */
  variation_id: number;
  quantity: number;
  name: string;
  attributes: Record<string, string>;
  /** Unit price in base-currency minor units, as entered (with tax when prices include tax). */
  unit_price_base: number;
  needs_shipping: boolean;
  subscription: boolean;
  /** The product's storefront slug and image hash, passed through to the cart's item (docs/cart.md). */
  slug?: string | null;
  image?: string | null;
  /** A variable product's tiers, base-currency minor units, passed through to the cart's item (docs/selling.md, 'Tiers'). */
  tiers?: { variation_id: number; name: string; price_base: number }[];
}

/** An extra charge (e.g. a payment surcharge), in active-currency minor units without tax. */
export interface PricingFee {
  id: string;
  name: string;
  amount: number;
  taxable: boolean;
}

export interface TotalsInput {
  currency: CurrencyContext;
  prices_include_tax: boolean;
  coupons_enabled: boolean;
  lines: PricingLine[];
  /** In the order they were applied. */
  coupons: PricingCoupon[];
  tax_rates: TaxRate[];
  destination: Destination | null;
  shipping_zones: ShippingZone[];
  /** The chosen rate id (`flat_rate:1`); the first available rate when null or unavailable. */
  shipping_method: string | null;
  fees: PricingFee[];
  now: Date;
}

export interface TaxAmount {
  rate_id: number;
  amount: number;
}

export interface LineTotals
  extends Pick<
    PricingLine,
    | 'key'
    | 'product_id'
    | 'variation_id'
    | 'quantity'
    | 'name'
    | 'attributes'
    | 'slug'
    | 'image'
    | 'subscription'
    | 'tiers'
  > {
  /** Unit price in the active currency, entry basis. */
  unit_price: number;
  /** Without tax, before discounts. */
  subtotal: number;
  subtotal_tax: number;
  /** Without tax, after discounts. */
  total: number;
  total_tax: number;
  /** Tax per rate on `total`. */
  taxes: TaxAmount[];
}

export interface CouponTotals {
  code: string;
  discount_type: string;
  /** Without tax. */
  discount_total: number;
  discount_tax: number;
  free_shipping: boolean;
}

export interface TaxTotals {
  rate_id: number;
  name: string;
  rate: string;
  compound: boolean;
  /** Items, shipping and fees together. */
  amount: number;
}

/** The subtotal, discount and shipping, each with its tax, in minor units: a cart's, and an order's columns. */
export interface SubtotalsWithTax {
  subtotal: number;
  subtotal_tax: number;
  discount_total: number;
  discount_tax: number;
  shipping_total: number;
  shipping_tax: number;
}

export interface CartTotals extends SubtotalsWithTax {
  currency: CurrencyContext;
  lines: LineTotals[];
  coupons: CouponTotals[];
  rejected_coupons: { code: string; reason: CouponRejection }[];
  fees: { id: string; name: string; amount: number; tax: number }[];
  shipping: { zone: { id: number; name: string } | null; rates: ShippingRate[]; chosen: ShippingRate | null };
  taxes: TaxTotals[];
  cart_contents_total: number;
  cart_contents_tax: number;
  fee_total: number;
  fee_tax: number;
  total: number;
  total_tax: number;
  needs_shipping: boolean;
  needs_payment: boolean;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** Decides which coupons apply, in the order given; an `individual_use` coupon excludes all others. */
function acceptCoupons(input: TotalsInput, lines: readonly DiscountLine[]) {
  const accepted: PricingCoupon[] = [];
  const rejected: { code: string; reason: CouponRejection }[] = [];
  for (const c of input.coupons) {
    let reason: CouponRejection | null = input.coupons_enabled
      ? checkCoupon(c, lines, input.currency, input.now)
      : 'coupons_disabled';
    if (
      reason === null &&
      accepted.length > 0 &&
      (c.individual_use || accepted.some((a) => a.individual_use))
    )
      reason = 'individual_use';
    if (reason === null) accepted.push(c);
    else rejected.push({ code: c.code, reason });
  }
  return { accepted, rejected };
}

export function calculateTotals(input: TotalsInput): CartTotals {
  const ctx = input.currency;
  const inclusive = input.prices_include_tax;
  const rates = matchTaxRates(input.tax_rates, input.destination);
  const shippingRates = matchTaxRates(
    input.tax_rates.filter((r) => r.shipping),
    input.destination,
  );
  const taxOf = (amount: number) =>
    inclusive ? inclusiveTaxes(amount, rates) : exclusiveTaxes(amount, rates);

  // 1. Line amounts in the active currency, entry basis: the unit price converts, then × quantity.
  const units = input.lines.map((l) => fromBase(l.unit_price_base, ctx));
  const discountLines: DiscountLine[] = input.lines.map((l, i) => ({
    product_id: l.product_id,
    quantity: l.quantity,
    amount: units[i]! * l.quantity,
  }));

  // 2. Coupons: which apply, and what each takes off each line (entry basis).
  const { accepted, rejected } = acceptCoupons(input, discountLines);
  const matrix = discountMatrix(accepted, discountLines, ctx);

  // 3. Taxes per line, before and after discounts; the discount's tax is the difference.
  const couponEx = accepted.map(() => 0);
  const couponTax = accepted.map(() => 0);
  const taxByRate = new Map<number, number>();
  const addTax = (rateList: readonly { id: number }[], amounts: readonly number[]) =>
    amounts.forEach((a, i) => {
      const id = rateList[i]!.id;
      taxByRate.set(id, (taxByRate.get(id) ?? 0) + a);
    });
  const lines: LineTotals[] = input.lines.map((l, j) => {
    const gross = discountLines[j]!.amount;
    const perCoupon = matrix.map((row) => row[j]!);
    const discounted = gross - sum(perCoupon);
    const before = taxOf(gross);
    const after = taxOf(discounted);
    const subtotalTax = sum(before);
    const totalTax = sum(after);
    const subtotal = inclusive ? gross - subtotalTax : gross;
    const total = inclusive ? discounted - totalTax : discounted;
    // The line's discount tax is shared over its coupons in proportion to their discounts.
    const taxShares = allocate(subtotalTax - totalTax, perCoupon);
    perCoupon.forEach((d, c) => {
      couponTax[c]! += taxShares[c]!;
      couponEx[c]! += inclusive ? d - taxShares[c]! : d;
    });
    addTax(rates, after);
    return {
      key: l.key,
      product_id: l.product_id,
      variation_id: l.variation_id,
      quantity: l.quantity,
      name: l.name,
      attributes: l.attributes,
      slug: l.slug,
      image: l.image,
      subscription: l.subscription,
      tiers: l.tiers,
      unit_price: units[j]!,
      subtotal,
      subtotal_tax: subtotalTax,
      total,
      total_tax: totalTax,
      taxes: after.map((amount, i) => ({ rate_id: rates[i]!.id, amount })),
    };
  });

  // 4. Shipping: only for carts with something to ship and a destination in a zone.
  const needsShipping = input.lines.some((l) => l.needs_shipping);
  const zone = needsShipping ? matchZone(input.shipping_zones, input.destination) : null;
  const itemsAfterDiscounts = sum(discountLines.map((l) => l.amount)) - sum(matrix.flat());
  const offered = zone
    ? zoneRates(
        zone,
        ctx,
        itemsAfterDiscounts,
        accepted.some((c) => c.free_shipping),
      )
    : [];
  const chosen = offered.find((r) => r.id === input.shipping_method) ?? offered[0] ?? null;
  const shippingTotal = chosen?.cost ?? 0;
  const shippingTaxes = exclusiveTaxes(shippingTotal, shippingRates);
  addTax(shippingRates, shippingTaxes);

  // 5. Fees, taxed like items entered without tax when taxable.
  const fees = input.fees.map((f) => {
    const taxes = f.taxable ? exclusiveTaxes(f.amount, rates) : [];
    if (f.taxable) addTax(rates, taxes);
    return { id: f.id, name: f.name, amount: f.amount, tax: sum(taxes) };
  });

  const subtotal = sum(lines.map((l) => l.subtotal));
  const subtotalTax = sum(lines.map((l) => l.subtotal_tax));
  const contentsTotal = sum(lines.map((l) => l.total));
  const contentsTax = sum(lines.map((l) => l.total_tax));
  const shippingTax = sum(shippingTaxes);
  const feeTotal = sum(fees.map((f) => f.amount));
  const feeTax = sum(fees.map((f) => f.tax));
  const totalTax = contentsTax + shippingTax + feeTax;
  const total = contentsTotal + shippingTotal + feeTotal + totalTax;
  const allRates = [...rates, ...shippingRates.filter((r) => !rates.includes(r))];

  return {
    currency: ctx,
    lines,
    coupons: accepted.map((c, i) => ({
      code: c.code,
      discount_type: c.discount_type,
      discount_total: couponEx[i]!,
      discount_tax: couponTax[i]!,
      free_shipping: c.free_shipping,
    })),
    rejected_coupons: rejected,
    fees,
    shipping: { zone: zone ? { id: zone.id, name: zone.name } : null, rates: offered, chosen },
    taxes: allRates.map((r) => ({
      rate_id: r.id,
      name: r.name,
      rate: r.rate,
      compound: r.compound,
      amount: taxByRate.get(r.id) ?? 0,
    })),
    subtotal,
    subtotal_tax: subtotalTax,
    discount_total: subtotal - contentsTotal,
    discount_tax: subtotalTax - contentsTax,
    shipping_total: shippingTotal,
    shipping_tax: shippingTax,
    cart_contents_total: contentsTotal,
    cart_contents_tax: contentsTax,
    fee_total: feeTotal,
    fee_tax: feeTax,
    total,
    total_tax: totalTax,
    needs_shipping: needsShipping,
    needs_payment: total > 0 || input.lines.some((l, j) => l.subscription && units[j]! > 0),
  };
}
