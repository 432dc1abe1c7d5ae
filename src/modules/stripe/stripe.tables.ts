import type { OutboxColumns } from '../../outbox/outbox.repository.js';

/** The Stripe gateway's own tables (docs/payments.md, 'Stripe'). */
export interface StripeTables {
  /** The one PaymentIntent made for each order: a retried payment finds it again. */
  stripe_payments: {
    order_id: number;
    payment_intent_id: string;
    /** 1 when the customer agreed to keep the card for the subscription's renewals. */
    save_card: number;
    created_at: string;
  };
  /** A customer's Stripe customer, and the card saved for off-session renewals. */
  stripe_customers: {
    user_id: number;
    customer_id: string;
    payment_method_id: string | null;
    updated_at: string;
  };
  /** Every event handled, inserted in the transaction of its effect: an event acts once. */
  stripe_events: { id: string; type: string; received_at: string };
  /** The outbox of off-session renewal charges (docs/development.md, 'Outboxes'). */
  stripe_renewal_charges: OutboxColumns & {
    order_id: number;
    /** pending, charged or failed. */
    status: string;
  };
  /** What a buyer is shown of a card kept with Stripe; never its number. */
  stripe_cards: {
    payment_method_id: string;
    customer_id: string;
    brand: string;
    last4: string;
    exp_month: number;
    exp_year: number;
    updated_at: string;
  };
  /** The card a buyer chose for one subscription's renewals. */
  stripe_subscription_cards: { subscription_id: number; payment_method_id: string; updated_at: string };
}
