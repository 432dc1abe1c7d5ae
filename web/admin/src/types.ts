/** The shapes of the /v1 answers the console reads (the OpenAPI document at /v1/openapi.json has them all). */

export interface User {
  id: number;
  email: string;
  role: 'administrator' | 'customer';
  first_name: string;
  last_name: string;
}

export interface Session {
  user: User;
  nonce: string;
}

export interface Activation {
  id: number;
  license_id: number;
  domain: string;
  domain_normalized: string;
  installation_id: string;
  ip_address: string;
  user_agent: string;
  status: string;
  activated_at: string;
  deactivated_at: string | null;
  /** Only on a staging site (docs/licensing.md, '2.3 Staging and development sites'). */
  environment?: 'staging';
  /** 'reinstalled', with its successor, when a reinstall took the activation over; 'stale' when released unseen. */
  deactivation_reason?: string;
  /** When the site was last heard from, to within an hour (YYYY-MM-DD HH:MM:SS UTC). */
  last_seen_at: string | null;
  replaced_by?: number;
}

export interface License {
  id: number;
  /** Issued for an order placed in test mode. */
  test: boolean;
  license_key: string;
  product_id: number;
  variation_id: number;
  product_name: string;
  variation_name: string;
  order_id: number;
  user_id: number;
  user_email: string;
  user_name: string;
  subscription_id: number | null;
  status: string;
  activation_limit: number;
  activation_count: number;
  activations_remaining: number;
  expires_at: string | null;
  usage_expires_at_utc: string;
  is_expired: boolean;
  entitlements: {
    license_active: boolean;
    update_entitled: boolean;
    updates_expires_at: string | null;
    support_expires_at: string | null;
    policy_mode: string;
  };
  created_at: string;
  updated_at: string;
}

export interface LicenseWithActivations extends License {
  activations: Activation[];
}

export interface LicenseList {
  licenses: License[];
  total: number;
  page: number;
  per_page: number;
}

export interface PolicyPart {
  mode: string;
  days?: number;
}

export interface Policy {
  usage: PolicyPart;
  updates: PolicyPart;
  support: PolicyPart;
  historical_downloads: boolean;
}

export interface Variation {
  id: number;
  product_id: number;
  name: string;
  price: string;
  activation_limit: number | null;
}

/** A product carries its software configuration's fields too. */
export interface Product extends Omit<SoftwareConfig, 'product_id'> {
  id: number;
  name: string;
  status: string;
  type: string;
  price: string;
  virtual: boolean;
  activation_limit: number | null;
  activation_mode: string | null;
  subscription: { period: string; interval: number } | null;
  entitlement_policy: Policy | null;
  variations: Variation[];
  short_description: string;
  description: string;
  /** The image's hash: /media/<image>-400.webp and -1200.webp (docs/storefront.md). */
  image: string | null;
  created_at: string;
  updated_at: string;
}

export interface SoftwareConfig {
  product_id: number;
  slug: string | null;
  filename_template: string;
  storage_driver: string;
  licensing_enabled: string | null;
  software_enabled: string;
  /** WordPress's icon and banner: hashes of /media/<hash>-icon-128.webp and the others (docs/catalogue.md). */
  icon: string | null;
  banner: string | null;
}

export interface Release {
  version_id: number;
  product_id: number;
  version: string;
  status: 'draft' | 'published' | 'withdrawn';
  is_current: boolean;
  published_at: string | null;
  release_date: string;
  withdrawn_at: string | null;
  download_count: number;
  file_name: string;
  file_size: number | null;
  file_sha256: string;
  storage_driver: string;
  external_url: string | null;
  /** `available`, or where its deletion is: `delete_pending`, `delete_failed`, `deleted`. */
  artifact_state: string;
  /** What WordPress shows (docs/releases.md, 'Metadata WordPress shows'). */
  requires: string | null;
  tested: string | null;
  requires_php: string | null;
  /** docs/releases.md, 'Channels and staged rollouts'. */
  channel: Channel;
  rollout_percent: number;
  /** The releases list only: distinct sites whose download of it is on record. */
  sites_taken?: number;
}

export type Channel = 'stable' | 'rc' | 'beta' | 'alpha';

export interface Versions {
  product_id: number;
  automatic_storage_driver: string | null;
  releases: Release[];
}

export interface AppPassword {
  uuid: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export interface OrderItem {
  id: number;
  product_id: number;
  variation_id: number;
  name: string;
  quantity: number;
  price: string;
  subtotal: string;
  total: string;
  total_tax: string;
  subscription_id: number | null;
}

export interface Order {
  id: number;
  /** Placed in test mode: no money was taken. */
  test: boolean;
  number: string;
  order_key: string;
  status: string;
  created_via: string;
  customer_id: number | null;
  currency: string;
  currency_symbol: string;
  prices_include_tax: boolean;
  subtotal: string;
  subtotal_tax: string;
  discount_total: string;
  discount_tax: string;
  shipping_total: string;
  shipping_tax: string;
  total_tax: string;
  total: string;
  payment_method: string;
  payment_method_title: string;
  billing: Record<string, string>;
  shipping: Record<string, string>;
  shipping_lines: { id: number; method_title: string; method_id: string; total: string }[];
  coupons: { code: string; discount_total: string; discount_tax: string }[];
  customer_note: string;
  subscription_id: number | null;
  /** A renewal order's due payment. */
  renewal_due_at: string | null;
  paid_at: string | null;
  /** What the order's refunds add up to (docs/payments.md). */
  refunded_total: string;
  /** When a chargeback was first opened against the order (docs/payments.md, 'Disputes'). */
  disputed_at: string | null;
  items: OrderItem[];
  created_at: string;
  updated_at: string;
}

/** Someone who acted: the administrator, or null for Tollgate itself. */
export type OrderActor = { user_id: number; email: string } | null;

export interface OrderRefund {
  id: number;
  order_id: number;
  amount: string;
  reason: string;
  full: boolean;
  restock: boolean;
  created_at: string;
  actor: OrderActor;
}

export interface RefundList {
  refunds: OrderRefund[];
  refunded_total: string;
  remaining: string;
}

export interface OrderNote {
  id: number;
  order_id: number;
  kind: 'payment' | 'refund' | 'dispute' | 'note';
  body: string;
  created_at: string;
  actor: OrderActor;
}

export interface MailMessage {
  id: number;
  kind: string;
  recipient: string;
  subject: string;
  status: 'pending' | 'sent' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  sent_at: string | null;
  created_at: string;
}

export interface WebhookAttempt {
  event_id: string;
  event: string;
  attempt: number;
  response_code: number | null;
  delivered: boolean;
  error: string | null;
  attempted_at: string;
}

export interface Currency {
  code: string;
  symbol: string;
  decimals: number;
  rate: string | number;
  rate_updated_at: string;
}

export interface Settings {
  store_mode: 'test' | 'live';
  licensing_enabled: boolean;
  software_enabled: boolean;
  activation_mode: 'simple' | 'oauth';
  default_activation_limit: number;
  customer_deactivation_enabled: boolean;
  token_expiry: number;
  rate_limit: number;
  webhook_url: string;
  webhook_secret: string;
  coupons_enabled: boolean;
  auto_registration: boolean;
  captcha_provider: 'none' | 'turnstile' | 'recaptcha';
  captcha_site_key: string;
  captcha_secret: string;
  captcha_verify_url: string;
  stripe_publishable_key: string;
  /** The two Stripe secrets are shown as ******** when set, '' when not (docs/payments.md). */
  stripe_secret_key: string;
  stripe_webhook_secret: string;
  stripe_statement_descriptor: string;
  renewal_url: string | null;
  base_currency: string;
  currencies: Currency[];
  currency_rate_max_age: number;
  renewal_window_days: number;
  checkout_rate_limit: number;
  prices_include_tax: boolean;
  store_name: string;
  store_accent_color: string;
  store_terms_url: string;
  store_logo: string;
  /** The SMTP password is shown as ******** (docs/email.md). */
  smtp_url: string;
  mail_from: string;
  mail_order_receipt: boolean;
  mail_order_on_hold: boolean;
  mail_payment_received: boolean;
  mail_renewal_due: boolean;
  mail_renewal_paid: boolean;
  mail_renewal_failed: boolean;
  mail_subscription_status: boolean;
  mail_license_expiring: boolean;
  mail_license_expired: boolean;
  mail_account_created: boolean;
  license_expiring_days: number;
  /** Days an offline receipt stays good after it is issued (docs/licensing.md, 'Offline receipts'). */
  receipt_grace_days: number;
  renewal_grace_days: number;
  /** Staging sites and reinstalls (docs/licensing.md, '2.3 Staging and development sites', '2.4 Reinstalls'). */
  staging_patterns: string[];
  staging_activation_limit: number;
  reinstall_takeover: boolean;
  /** Days a site may go unseen before it is released; null = never (docs/licensing.md, 'Last seen and stale activations'). */
  stale_activation_days: number | null;
  /** What a full refund does to the order's licenses (docs/payments.md, 'Refunds'). */
  refund_license_action: 'revoke' | 'suspend' | 'keep';
}

export interface Coupon {
  id: number;
  code: string;
  discount_type: 'percent' | 'fixed_cart' | 'fixed_product';
  amount: string;
  expires_at: string | null;
  usage_limit: number | null;
  usage_limit_per_user: number | null;
  usage_count: number;
  minimum_amount: string | null;
  maximum_amount: string | null;
  individual_use: boolean;
  product_ids: number[];
  excluded_product_ids: number[];
  currency: string | null;
  free_shipping: boolean;
  created_at: string;
}

export interface TaxRate {
  id: number;
  country: string;
  state: string;
  postcode: string;
  rate: string;
  name: string;
  shipping: boolean;
  compound: boolean;
  priority: number;
}

export interface ShippingZone {
  id: number;
  name: string;
  regions: { country: string; state: string }[];
  methods: {
    instance_id: number;
    method_id: string;
    title: string;
    cost: string | null;
    min_amount: string | null;
  }[];
}

export interface Gateway {
  id: string;
  title: string;
  enabled: boolean;
  currencies: string[];
  instructions: string;
}

/** One administrator change (GET /v1/audit-events, docs/api.md). */
export interface AuditEvent {
  id: number;
  /**
   * A person, a site whose reinstall took an activation over (kind 'site', its domain as name), or
   * Tollgate itself (kind 'system', the job's name, e.g. 'stale_activations').
   */
  actor:
    | { user_id: number; email: string }
    | { kind: 'site' | 'system'; name: string; user_id: null; email: null };
  entity_type: string;
  entity_id: number;
  action: string;
  changes: Record<string, { before: unknown; after: unknown }>;
  created_at: string;
}

/** GET /v1/subscriptions/{id} (docs/checkout.md, 'Subscriptions and renewals'). */
export interface Subscription {
  id: number;
  user_id: number;
  product_id: number;
  variation_id: number;
  status: string;
  billing_period: string | null;
  billing_interval: number | null;
  quantity: number;
  currency: string | null;
  recurring_total: string | null;
  payment_method: string;
  parent_order_id: number | null;
  next_payment_at: string | null;
  created_at: string;
  updated_at: string;
}

/** An item of GET /v1/subscriptions: the subscription with its customer's and product's names. */
export interface SubscriptionListItem extends Subscription {
  user_email: string;
  user_name: string;
  product_name: string;
}

/** An order's invoice or credit note (docs/invoices.md). */
export interface OrderInvoice {
  id: number;
  kind: 'invoice' | 'credit_note';
  number: string;
  order_id: number;
  refund_id: number | null;
  invoice_number: string | null;
  total: string;
  currency: string;
  issued_at: string;
}
