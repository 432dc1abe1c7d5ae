import type { Insertable, Selectable } from 'kysely';
import type { OrdersTables } from './orders.tables.js';

/** An order and its items as stored; other modules use these types, never the repository. */
export type OrderRow = Selectable<OrdersTables['orders']>;
export type OrderItemRow = Selectable<OrdersTables['order_items']>;
export type NewOrder = Insertable<OrdersTables['orders']>;
export type NewOrderItem = Insertable<OrdersTables['order_items']>;

/** What an order holds back from stock: a variation's own stock or its product's. */
export interface StockHold {
  pool: 'product' | 'variation';
  id: number;
  quantity: number;
}

/** One rate's tax on an order, as charged (orders.tax_lines; docs/taxes.md). */
export interface TaxLine {
  rate_id: number;
  name: string;
  /** Percent with four places, e.g. "19.0000". */
  rate: string;
  /** Minor units of the order's currency. */
  amount: number;
}

/** What a business buyer's VAT number came to at checkout (docs/taxes.md, 'VAT numbers'). */
export interface VatCheck {
  /**
   * valid: VIES confirmed it; invalid: VIES refused it; unverified: VIES did not answer in time
   * (VAT charged); not_checked: a country VIES does not cover (VAT charged).
   */
  status: 'valid' | 'invalid' | 'unverified' | 'not_checked';
  country: string;
  name: string | null;
  checked_at: string;
}

/** The evidence of where the buyer is (orders.tax_evidence; docs/taxes.md, 'Evidence of location'). */
export interface TaxEvidence {
  billing_country: string | null;
  /** From the offline IP database; null when the address is private or unknown. */
  ip_country: string | null;
  /** The paying card's country, when the gateway gives it (Stripe). */
  card_country: string | null;
  /** The buyer confirmed the billing country although the IP pointed elsewhere. */
  country_confirmed: boolean;
  vat_check: VatCheck | null;
}

/** An order placed before evidence was kept, or with none. */
export const NO_EVIDENCE: TaxEvidence = {
  billing_country: null,
  ip_country: null,
  card_country: null,
  country_confirmed: false,
  vat_check: null,
};
