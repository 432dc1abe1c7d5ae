import type { Id } from '../../db/schema.js';

/**
 * The minimal subscription record licensing reads (spec 2.10: id and status). Created by the
 * licensing migration; the subscriptions module builds its behaviour on it.
 */
export interface SubscriptionsTables {
  subscriptions: {
    id: Id;
    user_id: number;
    product_id: number;
    variation_id: number | null;
    /** `active`, `on-hold`, `pending-cancel`, `cancelled`, `expired`. */
    status: string;
    next_payment_at: string | null;
    created_at: string;
    updated_at: string;
  };
}
