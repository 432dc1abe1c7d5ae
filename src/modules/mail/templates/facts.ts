/** The facts each message is made of, stored as the outbox row's `data` (numbers, names and keys; never a password token). */

export interface OrderFacts {
  order_id: number;
  order_key: string;
  first_name: string;
  payment_method_title: string;
  /** Formatted with its currency, e.g. "49.00 USD". */
  total: string;
  items: { name: string; quantity: number; total: string }[];
  licenses: { key: string; product: string }[];
}

/** An order waiting on hold for a bank transfer or cheque: the order and how to pay it. */
export interface OnHoldFacts extends OrderFacts {
  /** The gateway's payment instructions as the owner wrote them ('' = none set). */
  instructions: string;
}

export interface RenewalFacts {
  order_id: number;
  order_key: string;
  first_name: string;
  subscription_id: number | null;
  product: string;
  total: string;
  due_at: string | null;
  /**
   * renewal_due only: the kept card that will be charged ("Visa ending in 4242"), null when none is
   * kept, absent when the store takes no cards.
   */
  card?: string | null;
}

export interface SubscriptionFacts {
  subscription_id: number;
  first_name: string;
  product: string;
  status: string;
  reason: string;
}

export interface LicenseExpiryFacts {
  license_id: number;
  first_name: string;
  product: string;
  /** The last characters of the key, enough to tell licenses apart (the account shows it whole). */
  key_end: string;
  expires_at: string;
  days: number;
}

export interface AccountFacts {
  user_id: number;
  first_name: string;
}

/** A license offered to the account of an email (docs/selling.md, 'Transfers'); the link is minted when sent. */
export interface TransferFacts {
  transfer_id: number;
  product: string;
  /** The license's owner, as the receiver may know them; '' when unknown. */
  from_email: string;
  keep_activations: boolean;
  expires_at: string;
}

export interface MessageData {
  order_receipt: OrderFacts;
  order_on_hold: OnHoldFacts;
  payment_received: OrderFacts;
  renewal_due: RenewalFacts;
  renewal_paid: RenewalFacts;
  renewal_failed: RenewalFacts;
  subscription_status: SubscriptionFacts;
  license_expiring: LicenseExpiryFacts;
  license_expired: LicenseExpiryFacts;
  renewal_reminder: LicenseExpiryFacts;
  password_reset: AccountFacts;
  account_created: AccountFacts;
  sign_in_link: AccountFacts;
  license_transfer: TransferFacts;
}

export type MessageKind = keyof MessageData;

export const MESSAGE_KINDS = [
  'order_receipt',
  'order_on_hold',
  'payment_received',
  'renewal_due',
  'renewal_paid',
  'renewal_failed',
  'subscription_status',
  'license_expiring',
  'license_expired',
  'renewal_reminder',
  'password_reset',
  'account_created',
  'sign_in_link',
  'license_transfer',
] as const satisfies readonly MessageKind[];

export const receiptUrl = (origin: string, f: { order_id: number; order_key: string }) =>
  `${origin}/checkout/order-received/${f.order_id}?key=${encodeURIComponent(f.order_key)}`;

export const payUrl = (origin: string, f: { order_id: number; order_key: string }) =>
  `${origin}/checkout/pay/${f.order_id}?key=${encodeURIComponent(f.order_key)}`;

/** A date for people: `2026-11-24` of an ISO or RFC 3339 timestamp (UTC). */
export const day = (at: string | null) => (at ? at.slice(0, 10) : '');
