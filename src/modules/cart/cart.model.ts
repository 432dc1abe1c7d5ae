import { sha256 } from '../../random.js';
import type { Destination } from '../catalogue/tax.pricing.js';

/** What a cart stores: lines by product, variation and attributes, and the applied coupon codes. */

export interface CartLine {
  key: string;
  product_id: number;
  /** 0 for a simple product. */
  variation_id: number;
  quantity: number;
  /** The variation's attributes ({} for a simple product). */
  attributes: Record<string, string>;
}

export interface CartState {
  items: CartLine[];
  /** Lower-case codes in the order applied. */
  coupons: string[];
  destination: Destination | null;
  shipping_method: string | null;
}

export const MAX_QUANTITY = 9999;
export const MAX_LINES = 100;
export const MAX_COUPONS = 20;

export const emptyState = (): CartState => ({
  items: [],
  coupons: [],
  destination: null,
  shipping_method: null,
});

/** 32 hex digits naming a line: the same product, variation and attributes always give the same key. */
export function lineKey(productId: number, variationId: number, attributes: Record<string, string>): string {
  const attrs = Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return sha256(JSON.stringify([productId, variationId, attrs])).slice(0, 32);
}

/** Whether two states differ in anything stored. */
export const sameState = (a: CartState, b: CartState): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * A guest's cart folded into a customer's: lines with the same key add their quantities (capped at
 * MAX_QUANTITY), other lines are appended up to MAX_LINES, and the guest's coupons follow the
 * customer's (the pricing engine then drops any that no longer apply). The customer's destination
 * and shipping choice win when set.
 */
export function mergeStates(customer: CartState, guest: CartState): CartState {
  const items = customer.items.map((l) => ({ ...l }));
  for (const line of guest.items) {
    const same = items.find((l) => l.key === line.key);
    if (same) same.quantity = Math.min(MAX_QUANTITY, same.quantity + line.quantity);
    else if (items.length < MAX_LINES) items.push({ ...line });
  }
  const coupons = [...customer.coupons];
  for (const c of guest.coupons) if (!coupons.includes(c) && coupons.length < MAX_COUPONS) coupons.push(c);
  return {
    items,
    coupons,
    destination: customer.destination ?? guest.destination,
    shipping_method: customer.shipping_method ?? guest.shipping_method,
  };
}
