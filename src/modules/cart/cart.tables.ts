import type { Id } from '../../db/schema.js';

export interface CartTables {
  carts: {
    id: Id;
    /** null = a guest's cart; a customer has at most one. */
    user_id: number | null;
    /** JSON array of CartLine. */
    items: string;
    /** JSON array of lower-case coupon codes, in the order applied. */
    coupons: string;
    /** JSON {country, state, postcode} or null. */
    destination: string | null;
    shipping_method: string | null;
    version: number;
    created_at: string;
    updated_at: string;
    expires_at: string;
  };
  cart_sessions: { id_hash: string; cart_id: number; created_at: string; expires_at: string };
  coupon_usages: {
    id: Id;
    coupon_id: number;
    user_id: number | null;
    email: string | null;
    order_id: number | null;
    created_at: string;
  };
}
