import { lineKey } from '../cart/cart.model.js';
import { isSubscriptionType, isVariableType, type Product } from '../catalogue/catalogue.model.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { PricingCoupon } from '../catalogue/coupons.pricing.js';
import type { Coupon } from '../catalogue/coupons.service.js';
import type { CurrencyContext } from '../catalogue/currency.js';
import { regimeRates } from '../catalogue/digital-rates.js';
import type { Destination } from '../catalogue/tax.pricing.js';
import type { StockHold } from '../orders/orders.model.js';
import { type CartTotals, calculateTotals, type PricingLine } from '../pricing/totals.js';
import type { Settings } from '../settings/settings.schemas.js';
import { refusal } from './checkout.errors.js';

export interface RequestItem {
  product_id: number;
  variation_id?: number;
  qty?: number;
  quantity?: number;
  meta?: unknown[];
}

export interface Address {
  country?: string;
  state?: string;
  postcode?: string;
  [field: string]: unknown;
}

/** A request's lines resolved against the catalogue. */
export interface ResolvedLine {
  line: PricingLine;
  product: Product;
  variationId: number;
  meta: unknown[];
}

/** Loads the products the request names (published only); unknown or draft ones are refused. */
export async function resolveItems(
  catalogue: CatalogueService,
  items: RequestItem[],
): Promise<ResolvedLine[]> {
  const ids = [...new Set(items.map((i) => i.product_id))];
  const products = new Map(
    await Promise.all(ids.map(async (id) => [id, await catalogue.getProduct(id)] as const)),
  );
  const byKey = new Map<string, ResolvedLine>();
  for (const item of items) {
    const product = products.get(item.product_id);
    if (product?.status !== 'publish') {
      // The catalogue's status (404), as the cart answers it: one code, one status.
      throw refusal('invalid_product', { message: `Product ${item.product_id} is not available.` });
    }
    const variationId = item.variation_id ?? 0;
    const variation = variationId > 0 ? product.variations.find((v) => v.id === variationId) : null;
    if ((variationId > 0 && !variation) || (variationId === 0 && isVariableType(product.type))) {
      throw refusal('invalid_variation', {
        status: 400,
        message: `Choose a valid option of ${product.name}.`,
      });
    }
    const quantity = item.qty ?? item.quantity ?? 1;
    const attributes = variation ? { ...variation.attributes } : {};
    const key = lineKey(product.id, variationId, attributes);
    const same = byKey.get(key);
    if (same) {
      same.line.quantity += quantity;
      continue;
    }
    byKey.set(key, {
      product,
      variationId,
      meta: item.meta ?? [],
      line: {
        key,
        product_id: product.id,
        variation_id: variationId,
        quantity,
        name: variation ? `${product.name} - ${variation.name}` : product.name,
        attributes,
        unit_price_base: variation ? variation.price_minor : product.price_minor,
        needs_shipping: !product.virtual,
        subscription: isSubscriptionType(product.type),
      },
    });
  }
  return [...byKey.values()];
}

/** The stock each line draws on (the variation's own, else the product's), summed per pool. */
export function stockHolds(lines: ResolvedLine[]): StockHold[] {
  const holds = new Map<string, StockHold>();
  for (const { product, variationId, line } of lines) {
    const variation = product.variations.find((v) => v.id === variationId);
    const hold: StockHold | null =
      variation && variation.stock_quantity !== null
        ? { pool: 'variation', id: variation.id, quantity: line.quantity }
        : product.stock_quantity !== null
          ? { pool: 'product', id: product.id, quantity: line.quantity }
          : null;
    if (!hold) continue;
    const key = `${hold.pool}:${hold.id}`;
    const same = holds.get(key);
    if (same) same.quantity += hold.quantity;
    else holds.set(key, hold);
  }
  return [...holds.values()];
}

/** Refuses a request for more than the stock shows right now (the order re-checks atomically). */
export function assertStockAvailable(lines: ResolvedLine[]): void {
  for (const hold of stockHolds(lines)) {
    const product = lines.find((l) =>
      hold.pool === 'product' ? l.product.id === hold.id : l.variationId === hold.id,
    )!.product;
    const stock =
      hold.pool === 'product'
        ? product.stock_quantity
        : (product.variations.find((v) => v.id === hold.id)?.stock_quantity ?? null);
    if (stock !== null && hold.quantity > stock) {
      throw refusal('out_of_stock', { message: `${product.name} is out of stock.` });
    }
  }
}

export const destinationOf = (addr: Address | undefined | null): Destination | null => {
  const country = typeof addr?.country === 'string' ? addr.country.trim().toUpperCase() : '';
  if (!country) return null;
  return {
    country,
    state: typeof addr?.state === 'string' ? addr.state.trim() : '',
    postcode: typeof addr?.postcode === 'string' ? addr.postcode.trim() : '',
  };
};

export interface PriceInput {
  settings: Settings;
  currency: CurrencyContext;
  lines: ResolvedLine[];
  coupons: { coupon: Coupon; uses: number | null }[];
  destination: Destination | null;
  shippingMethod: string | null;
  taxRates: Parameters<typeof calculateTotals>[0]['tax_rates'];
  zones: Parameters<typeof calculateTotals>[0]['shipping_zones'];
  /** A business buyer's valid VAT number of another member state: no VAT (docs/taxes.md). */
  reverseCharge?: boolean;
  now: Date;
}

/** The one totals engine (docs/pricing.md), on a request's lines instead of a stored cart. */
export function priceRequest(input: PriceInput): CartTotals {
  const coupons: PricingCoupon[] = input.coupons.map(({ coupon, uses }) => ({
    ...coupon,
    customer_uses: uses,
  }));
  return calculateTotals({
    currency: input.currency,
    prices_include_tax: input.settings.prices_include_tax,
    coupons_enabled: input.settings.coupons_enabled,
    lines: input.lines.map((l) => l.line),
    coupons,
    tax_rates: regimeRates(input.settings.tax_regime, input.taxRates, input.destination, input.reverseCharge),
    destination: input.destination,
    shipping_zones: input.zones,
    shipping_method: input.shippingMethod,
    fees: [],
    now: input.now,
  });
}
