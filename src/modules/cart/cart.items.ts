import { ApiError } from '../../http/errors.js';
import {
  isSubscriptionType,
  isVariableType,
  type Product,
  type Variation,
} from '../catalogue/catalogue.model.js';
import type { PricingLine } from '../pricing/totals.js';
import type { CartLine, CartState } from './cart.model.js';

/** The rules for what can be in a cart, given the catalogue data: purchasability, variations, stock. */

export interface AddRequest {
  product_id: number;
  quantity: number;
  variation_id: number;
  /** Chosen attributes; keys `attribute_<name>` (or the bare name), values as sent. */
  attributes: Record<string, string>;
}

/** `attribute_` + the name in lower case with runs of spaces as hyphens: "Site Count" → attribute_site-count. */
export const attributeSlug = (name: string): string =>
  `attribute_${name.trim().toLowerCase().replace(/\s+/g, '-')}`;

const slugOfKey = (key: string): string => attributeSlug(key.startsWith('attribute_') ? key.slice(10) : key);

const failed = (reason: string, extra: Record<string, unknown> = {}) =>
  new ApiError('add_to_cart_failed', { data: { reason, ...extra } });

/** Whether the variation carries every chosen attribute with the chosen value. */
function matchesChoice(variation: Variation, chosen: Map<string, string>): boolean {
  const own = new Map(Object.entries(variation.attributes).map(([k, v]) => [attributeSlug(k), v]));
  for (const [slug, value] of chosen) if (own.get(slug) !== value) return false;
  return true;
}

/**
 * Resolves what an add request buys. `variationById` is the variation named by `variation_id`
 * wherever it belongs (null when none has that id). Errors are the rows of docs/cart.md, 'Errors'.
 */
export function resolveAddition(
  product: Product | null,
  variationById: Variation | null,
  req: AddRequest,
): { product: Product; variation: Variation | null; attributes: Record<string, string> } {
  // Drafts cannot be bought: to a shopper they do not exist.
  if (product?.status !== 'publish') throw new ApiError('invalid_product');
  const chosen = new Map(Object.entries(req.attributes).map(([k, v]) => [slugOfKey(k), v.trim()]));
  let variation: Variation | null = null;
  if (req.variation_id > 0) {
    if (!variationById) throw new ApiError('invalid_variation');
    if (variationById.product_id !== product.id) throw new ApiError('invalid_variation', { status: 400 });
    variation = product.variations.find((v) => v.id === variationById.id) ?? variationById;
    if (!matchesChoice(variation, chosen)) throw failed('invalid_attributes');
  } else if (isVariableType(product.type)) {
    const candidates = product.variations.filter((v) => matchesChoice(v, chosen));
    if (candidates.length !== 1) throw failed('choose_options');
    variation = candidates[0]!;
  }
  return { product, variation, attributes: variation ? { ...variation.attributes } : {} };
}

/** The stock a line draws on: the variation's own, else the product's; null when not tracked. */
function stockPool(product: Product, variation: Variation | null) {
  if (variation && variation.stock_quantity !== null) {
    const id = variation.id;
    return { stock: variation.stock_quantity, shares: (l: CartLine) => l.variation_id === id };
  }
  if (product.stock_quantity === null) return null;
  const ownStock = new Set(product.variations.filter((v) => v.stock_quantity !== null).map((v) => v.id));
  return {
    stock: product.stock_quantity,
    shares: (l: CartLine) => l.product_id === product.id && !ownStock.has(l.variation_id),
  };
}

/** Refuses an out-of-stock product before anything else is looked at. */
export function assertInStock(product: Product, variation: Variation | null): void {
  const pool = stockPool(product, variation);
  if (!pool || pool.stock > 0) return;
  if (variation) throw new ApiError('variation_not_available');
  throw failed('out_of_stock');
}

/**
 * Refuses a quantity change that would take the cart past the stock the line draws on. Lowering a
 * quantity is always allowed, even where stock has since fallen below it.
 */
export function assertStock(
  state: CartState,
  product: Product,
  variation: Variation | null,
  key: string,
  quantity: number,
  code: 'add_to_cart_failed' | 'update_failed',
): void {
  const pool = stockPool(product, variation);
  if (!pool) return;
  const current = state.items.find((l) => l.key === key)?.quantity ?? 0;
  if (quantity <= current) return;
  const others = state.items
    .filter((l) => l.key !== key && pool.shares(l))
    .reduce((s, l) => s + l.quantity, 0);
  if (others + quantity > pool.stock) {
    throw new ApiError(code, {
      data: { reason: 'stock_limit', max_quantity: Math.max(0, pool.stock - others) },
    });
  }
}

/**
 * A stored line priced against the current catalogue, or null when it can no longer be bought
 * (product gone or drafted, variation gone): such lines leave the cart.
 */
export function toPricingLine(line: CartLine, product: Product | null | undefined): PricingLine | null {
  if (product?.status !== 'publish') return null;
  let variation: Variation | null = null;
  if (line.variation_id > 0) {
    variation = product.variations.find((v) => v.id === line.variation_id) ?? null;
    if (!variation) return null;
  } else if (isVariableType(product.type)) {
    return null;
  }
  return {
    key: line.key,
    product_id: line.product_id,
    variation_id: line.variation_id,
    quantity: line.quantity,
    name: variation ? `${product.name} - ${variation.name}` : product.name,
    attributes: variation ? { ...variation.attributes } : {},
    unit_price_base: variation ? variation.price_minor : product.price_minor,
    needs_shipping: !product.virtual,
    subscription: isSubscriptionType(product.type),
    slug: product.slug,
    image: product.image,
    tiers: product.variations.map((v) => ({ variation_id: v.id, name: v.name, price_base: v.price_minor })),
  };
}
