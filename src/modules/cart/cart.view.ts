import { fromMinor } from '../catalogue/money.js';
import type { CartTotals } from '../pricing/totals.js';
import type { Cart } from './cart.schemas.js';

/**
 * The cart object (docs/cart.md, 'The cart object') from the engine's totals: amounts as decimal
 * strings in the active currency, item subtotal and total as numbers. The catalogue has no product
 * images or pages yet, so `image` and `permalink` are empty strings.
 */
export function toCartObject(t: CartTotals): Cart {
  const d = t.currency.decimals;
  const money = (minor: number) => fromMinor(minor, d);
  return {
    currency: t.currency.code,
    currency_symbol: t.currency.symbol,
    decimals: d,
    rate_id: t.currency.rate_id,
    items: t.lines.map((l) => ({
      key: l.key,
      product_id: l.product_id,
      variation_id: l.variation_id,
      quantity: l.quantity,
      name: l.name,
      price: money(l.unit_price),
      subtotal: Number(money(l.subtotal)),
      total: Number(money(l.total)),
      image: '',
      permalink: '',
      attributes: l.attributes,
    })),
    subtotal: money(t.subtotal),
    subtotal_tax: money(t.subtotal_tax),
    discount_total: money(t.discount_total),
    discount_tax: money(t.discount_tax),
    shipping_total: money(t.shipping_total),
    shipping_tax: money(t.shipping_tax),
    cart_contents_tax: money(t.cart_contents_tax),
    fee_total: money(t.fee_total),
    fee_tax: money(t.fee_tax),
    total: money(t.total),
    total_tax: money(t.total_tax),
    coupons: t.coupons.map((c) => ({
      code: c.code,
      discount_type: c.discount_type,
      discount_total: money(c.discount_total),
      discount_tax: money(c.discount_tax),
      free_shipping: c.free_shipping,
    })),
    needs_shipping: t.needs_shipping,
    needs_payment: t.needs_payment,
  };
}
