import type { Generated } from 'kysely';
import type { Id } from '../../db/schema.js';

/**
 * The minimal subscription record licensing reads: id and status (docs/licensing.md, section 5).
 * Created by the licensing migration; the subscriptions module builds its behaviour on it.
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
    /** Added by the orders migration: the billing schedule and what a renewal charges. */
    billing_period: string | null;
    billing_interval: number | null;
    quantity: number | null;
    currency: string | null;
    recurring_total: number | null;
    payment_method: string | null;
    parent_order_id: number | null;
    status_reason: string | null;
    /** The gateway's id of a subscription imported from another store (`sub_…`); '' otherwise. */
    gateway_profile_id: Generated<string>;
    /** When Stripe was seen no longer billing that `sub_…` (null: not yet; renewals ask first). */
    gateway_profile_ended_at: string | null;
    created_at: string;
    updated_at: string;
  };
}
