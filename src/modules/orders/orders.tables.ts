import type { Generated } from 'kysely';
import type { Id } from '../../db/schema.js';
import type { SubtotalsWithTax } from '../pricing/totals.js';

export type OrderStatus =
  | 'pending'
  | 'processing'
  | 'on-hold'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'refunded';

/** What an order note records (docs/payments.md, 'Order notes'). */
export type OrderNoteKind = 'payment' | 'refund' | 'dispute' | 'note';

export interface OrdersTables {
  orders: SubtotalsWithTax & {
    id: Id;
    order_key: string;
    customer_id: number | null;
    status: OrderStatus;
    /** `checkout`, `admin`, `renewal` or `import` (an order of another store, docs/migrating.md). */
    created_via: string;
    currency: string;
    currency_symbol: string;
    decimals: number;
    base_currency: string;
    /** Units of `currency` per base unit, locked at creation. */
    rate: string;
    rate_id: string;
    rate_updated_at: string | null;
    prices_include_tax: number;
    total_tax: number;
    total: number;
    payment_method: string;
    payment_method_title: string;
    /** JSON address objects. */
    billing: string;
    shipping: string;
    /** JSON [{id, method_title, method_id, total}] (total in minor units). */
    shipping_lines: string;
    /** JSON [{code, coupon_id, discount_total, discount_tax}]. */
    coupons: string;
    customer_note: string;
    custom_fields: string;
    referral_code: string;
    ip_address: string;
    /** JSON [{product_id, variation_id, quantity}] held back from stock; [] once released. */
    stock_held: string;
    audit: string | null;
    subscription_id: number | null;
    renewal_of: string | null;
    renewal_due_at: string | null;
    idempotency_hash: string | null;
    tracking_number: string;
    tracking_url: string;
    paid_at: string | null;
    /** What the order's refunds add up to, in minor units (docs/payments.md). */
    refunded_total: Generated<number>;
    /** When a chargeback was first opened against the order (docs/payments.md, 'Disputes'). */
    disputed_at: string | null;
    /** 1 when the order was placed in test mode (docs/payments.md, 'Test mode and live mode'). */
    test: Generated<number>;
    /** The buyer's VAT number, normalised; '' = none (docs/taxes.md). */
    buyer_tax_id: Generated<string>;
    /** 1 = sold with reverse charge: no VAT, the buyer accounts for it (docs/taxes.md). */
    reverse_charge: Generated<number>;
    /** The country whose tax applied; '' = none. */
    tax_country: Generated<string>;
    /** JSON TaxLine[]: the tax per rate as charged, amounts in minor units. */
    tax_lines: Generated<string>;
    /** JSON TaxEvidence: where the buyer is, by billing address, IP and card (docs/taxes.md). */
    tax_evidence: Generated<string>;
    created_at: string;
    updated_at: string;
  };
  order_refunds: {
    id: Id;
    order_id: number;
    /** Minor units of the order's currency. */
    amount: number;
    reason: string;
    /** 1 when this refund brought the refunds up to the order's total. */
    full_refund: number;
    restock: number;
    actor_user_id: number | null;
    actor_email: string | null;
    created_at: string;
  };
  order_notes: {
    id: Id;
    order_id: number;
    kind: OrderNoteKind;
    body: string;
    actor_user_id: number | null;
    actor_email: string | null;
    created_at: string;
  };
  order_items: {
    id: Id;
    order_id: number;
    product_id: number;
    variation_id: number;
    name: string;
    quantity: number;
    price: number;
    subtotal: number;
    subtotal_tax: number;
    total: number;
    total_tax: number;
    meta: string;
    subscription_id: number | null;
  };
  customer_addresses: { user_id: number; billing: string; shipping: string; updated_at: string };
  /** The pending order a renewal link of one license and period made (docs/selling.md, 'Renewals'). */
  renewal_link_orders: {
    license_id: number;
    /** The end of the period the link renews, epoch seconds (bigint: text from PostgreSQL). */
    period_end: number | string;
    order_id: number | null;
    created_at: string;
  };
}
