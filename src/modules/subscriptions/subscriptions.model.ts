import type { Selectable } from 'kysely';
import { fromMinor } from '../catalogue/money.js';
import type { SubscriptionsTables } from './subscriptions.tables.js';

export type SubscriptionRow = Selectable<SubscriptionsTables['subscriptions']>;
export type BillingPeriod = 'day' | 'week' | 'month' | 'year';

/**
 * A subscription Stripe bills itself (Stripe Billing's `sub_…`), as EDD Recurring's and
 * WooCommerce Subscriptions' with Stripe are: an imported one renews here only once Stripe no
 * longer bills it (docs/migrating.md, 'Subscriptions Stripe still bills').
 */
export const STRIPE_SUBSCRIPTION = /^sub_[A-Za-z0-9]{1,250}$/;

/** Whether Stripe still bills a `sub_…`; undefined when it cannot be asked (Stripe not set up). */
export type OldSubscriptionCheck = (profileId: string) => Promise<'billing' | 'ended' | undefined>;

/**
 * The statuses of docs/checkout.md, 'Subscriptions and renewals'. `pending`: created by checkout,
 * active once its first order is paid.
 */
export const SUBSCRIPTION_STATUSES = [
  'pending',
  'active',
  'on-hold',
  'pending-cancel',
  'cancelled',
  'expired',
] as const;

/**
 * `from` plus `interval` periods, in UTC. A month or year keeps the day of the month where it
 * exists and otherwise ends on the last day (Jan 31 + 1 month = Feb 28/29), as billing expects.
 */
export function addPeriod(from: Date, period: BillingPeriod, interval: number): Date {
  const d = new Date(from.getTime());
  if (period === 'day') return new Date(d.getTime() + interval * 86_400_000);
  if (period === 'week') return new Date(d.getTime() + interval * 7 * 86_400_000);
  const months = period === 'month' ? interval : interval * 12;
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, last));
  return d;
}

export function subscriptionView(s: SubscriptionRow, decimals: number) {
  return {
    id: s.id,
    user_id: s.user_id,
    product_id: s.product_id,
    variation_id: s.variation_id ?? 0,
    status: s.status,
    status_reason: s.status_reason ?? '',
    billing_period: s.billing_period,
    billing_interval: s.billing_interval,
    quantity: s.quantity ?? 1,
    currency: s.currency,
    recurring_total: s.recurring_total === null ? null : fromMinor(Number(s.recurring_total), decimals),
    payment_method: s.payment_method ?? '',
    parent_order_id: s.parent_order_id,
    gateway_profile_id: s.gateway_profile_id,
    next_payment_at: s.next_payment_at,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}
export type SubscriptionView = ReturnType<typeof subscriptionView>;
