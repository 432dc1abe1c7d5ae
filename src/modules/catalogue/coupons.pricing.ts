import Big from 'big.js';
import type { Coupon, DiscountType } from './coupons.service.js';
import { amountIn, type CurrencyContext } from './currency.js';
import { allocate, roundHalfUp } from './money.js';

/** A coupon as the engine reads it: the catalogue's coupon plus this customer's claimed uses. */
export interface PricingCoupon extends Coupon {
  /** Uses claimed by the current customer; null when the customer is unknown (a guest). */
  customer_uses: number | null;
}

/** Why a coupon does not apply; `coupon_failed` carries it as `data.reason`. */
export type CouponRejection =
  | 'coupons_disabled'
  | 'currency_mismatch'
  | 'expired'
  | 'usage_limit_reached'
  | 'usage_limit_per_user_reached'
  | 'minimum_amount'
  | 'maximum_amount'
  | 'not_applicable'
  | 'individual_use';

/** What coupon checks read of one cart line. */
export interface DiscountLine {
  product_id: number;
  quantity: number;
  /** Unit price times quantity, in the basis prices are entered in (with or without tax). */
  amount: number;
}

export const isEligible = (c: Coupon, productId: number): boolean =>
  (c.product_ids.length === 0 || c.product_ids.includes(productId)) &&
  !c.excluded_product_ids.includes(productId);

/**
 * Checks one coupon against the cart, in this order: currency restriction, expiry, overall usage
 * limit, this customer's usage limit, minimum and maximum spend (against the items subtotal before
 * discounts, in the entry basis), and at least one eligible line.
 */
export function checkCoupon(
  c: PricingCoupon,
  lines: readonly DiscountLine[],
  ctx: CurrencyContext,
  now: Date,
): CouponRejection | null {
  if (c.currency !== null && c.currency !== ctx.code) return 'currency_mismatch';
  if (c.expires_at !== null && now.getTime() >= Date.parse(c.expires_at)) return 'expired';
  if (c.usage_limit !== null && c.usage_count >= c.usage_limit) return 'usage_limit_reached';
  if (
    c.usage_limit_per_user !== null &&
    c.customer_uses !== null &&
    c.customer_uses >= c.usage_limit_per_user
  )
    return 'usage_limit_per_user_reached';
  const subtotal = lines.reduce((s, l) => s + l.amount, 0);
  if (c.minimum_amount !== null && subtotal < amountIn(c.minimum_amount, c.currency, ctx))
    return 'minimum_amount';
  if (c.maximum_amount !== null && subtotal > amountIn(c.maximum_amount, c.currency, ctx))
    return 'maximum_amount';
  if (!lines.some((l) => isEligible(c, l.product_id))) return 'not_applicable';
  return null;
}

/** Coupons apply in this order of type (then in the order they were applied). */
const TYPE_ORDER: Record<DiscountType, number> = { fixed_product: 0, percent: 1, fixed_cart: 2 };

/**
 * Discounts of accepted coupons, per coupon (aligned with `coupons`) per line (aligned with
 * `lines`), in minor units of the entry basis. A line never goes below zero: each discount is
 * capped at what earlier coupons left of the line.
 * - fixed_product: amount × quantity on each eligible line;
 * - percent: the percentage of the line's undiscounted amount, rounded half-up per line;
 * - fixed_cart: the amount (capped at what is left of the eligible lines) split over the eligible
 *   lines in proportion to what is left of each, largest remainder.
 */
export function discountMatrix(
  coupons: readonly PricingCoupon[],
  lines: readonly DiscountLine[],
  ctx: CurrencyContext,
): number[][] {
  const left = lines.map((l) => l.amount);
  const matrix = coupons.map(() => lines.map(() => 0));
  const order = coupons
    .map((c, i) => ({ c, i }))
    .sort((a, b) => TYPE_ORDER[a.c.discount_type] - TYPE_ORDER[b.c.discount_type] || a.i - b.i);
  for (const { c, i } of order) {
    const row = matrix[i]!;
    const eligible = lines.map((l) => isEligible(c, l.product_id));
    if (c.discount_type === 'fixed_cart') {
      const weights = lines.map((_, j) => (eligible[j] ? left[j]! : 0));
      const available = weights.reduce((a, b) => a + b, 0);
      const parts = allocate(Math.min(amountIn(c.amount, c.currency, ctx), available), weights);
      parts.forEach((p, j) => {
        row[j] = p;
        left[j]! -= p;
      });
      continue;
    }
    lines.forEach((l, j) => {
      if (!eligible[j]) return;
      const want =
        c.discount_type === 'percent'
          ? roundHalfUp(new Big(l.amount).times(c.amount).div(100))
          : amountIn(c.amount, c.currency, ctx) * l.quantity;
      const d = Math.min(want, left[j]!);
      row[j] = d;
      left[j]! -= d;
    });
  }
  return matrix;
}
