import { fromBase } from '../catalogue/currency.js';
import { fromMinor } from '../catalogue/money.js';
import type { CartTotals } from '../pricing/totals.js';
import type { Cart } from './cart.schemas.js';

/** The product page's path (docs/storefront.md); "" for a product without a slug. */
export const productPath = (slug: string | null | undefined): string => (slug ? `/products/${slug}` : '');

/** The image's path at a width (400 or 1200); the store's placeholder for a product without one. */
export const imagePath = (image: string | null | undefined, width: 400 | 1200 = 400): string =>
  image ? `/media/${image}-${width}.webp` : '/media/placeholder.svg';

/**
 * The cart object (docs/cart.md, 'The cart object') from the engine's totals: amounts as decimal
 * strings in the active currency, item subtotal and total as numbers; `permalink` and `image` are
 * absolute URLs on `origin` (the store's PUBLIC_URL) of the product's page and its 400 px image.
 */
export function toCartObject(t: CartTotals, origin: string): Cart {
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
      image: `${origin}${imagePath(l.image)}`,
      permalink: l.slug ? `${origin}${productPath(l.slug)}` : '',
      attributes: l.attributes,
      subscription: l.subscription,
      tiers: (l.tiers ?? []).map((tier) => ({
        variation_id: tier.variation_id,
        name: tier.name,
        price: money(fromBase(tier.price_base, t.currency)),
      })),
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
