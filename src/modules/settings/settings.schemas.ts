import { type Static, Type } from 'typebox';
import { PlainText } from '../../http/schemas.js';

const Decimal = Type.String({ pattern: '^\\d{1,12}(\\.\\d{1,12})?$' });

export const Currency = Type.Object(
  {
    code: Type.String({ pattern: '^[A-Z]{3}$' }),
    symbol: PlainText({ minLength: 1, maxLength: 8 }),
    decimals: Type.Integer({ minimum: 0, maximum: 4 }),
    rate: Type.Union([Decimal, Type.Number({ exclusiveMinimum: 0 })]),
    rate_updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

/** One DNS label as normalised domains spell it (src/modules/identity/domain.ts), either case. */
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const HOST = `${LABEL}(?:\\.${LABEL})*`;
/**
 * A host pattern: `host`, `*.suffix` or `prefix.*`, ASCII (an international name in punycode), no
 * port, no other wildcard (docs/licensing.md, '2.3 Staging and development sites'). Stored
 * lower-case.
 */
export const StagingPattern = Type.String({
  maxLength: 253,
  pattern: `^(?:\\*\\.${HOST}|${HOST}(?:\\.\\*)?)$`,
  description: 'host, *.suffix or prefix.*',
});

const properties = {
  store_mode: Type.Union([Type.Literal('test'), Type.Literal('live')], {
    description:
      "test: only the test card pays and orders are marked test; live: real payments, the test card refused (docs/payments.md, 'Test mode and live mode')",
  }),
  licensing_enabled: Type.Boolean(),
  software_enabled: Type.Boolean(),
  activation_mode: Type.Union([Type.Literal('simple'), Type.Literal('oauth')]),
  default_activation_limit: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  customer_deactivation_enabled: Type.Boolean(),
  token_expiry: Type.Integer({ description: 'Download token lifetime in minutes, clamped 1 to 60' }),
  rate_limit: Type.Integer({ description: 'Issuance requests a minute, clamped 1 to 100' }),
  webhook_url: Type.Union([
    Type.Literal(''),
    Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000 }),
  ]),
  webhook_secret: PlainText({ maxLength: 500 }),
  coupons_enabled: Type.Boolean(),
  auto_registration: Type.Boolean(),
  captcha_provider: Type.Union([Type.Literal('none'), Type.Literal('turnstile'), Type.Literal('recaptcha')]),
  captcha_site_key: PlainText({ maxLength: 500 }),
  captcha_secret: PlainText({ maxLength: 500 }),
  captcha_verify_url: Type.Union([
    Type.Literal(''),
    Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000 }),
  ]),
  base_currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  currencies: Type.Array(Currency, { maxItems: 50 }),
  currency_rate_max_age: Type.Integer({ minimum: 1, maximum: 31_536_000 }),
  renewal_window_days: Type.Integer({ minimum: 0, maximum: 3650 }),
  checkout_rate_limit: Type.Integer({ minimum: 1, maximum: 1000 }),
  prices_include_tax: Type.Boolean(),
  tax_regime: Type.Union([Type.Literal('none'), Type.Literal('manual'), Type.Literal('digital_services')], {
    description:
      "none: no tax; manual: the tax rates entered; digital_services: the buyer's country's rate for electronically supplied services (docs/taxes.md)",
  }),
  tax_seller_country: Type.String({
    pattern: '^([A-Z]{2})?$',
    description:
      "The seller's country (ISO 3166-1 alpha-2): a valid VAT number of another EU member state buys with reverse charge (docs/taxes.md); empty = none",
  }),
  store_name: PlainText({ minLength: 1, maxLength: 100 }),
  invoice_seller_name: PlainText({
    maxLength: 200,
    description: 'Legal name on invoices; empty = store_name',
  }),
  invoice_seller_address: Type.String({
    maxLength: 1000,
    pattern: '^[^\\u0000-\\u0009\\u000b-\\u001f\\u007f]*$',
    description: 'Postal address on invoices; line breaks allowed',
  }),
  invoice_seller_tax_number: PlainText({ maxLength: 100 }),
  invoice_number_prefix: Type.String({ pattern: '^[A-Za-z0-9/_-]{0,20}$' }),
  invoice_number_yearly_reset: Type.Boolean({
    description: 'true: the year follows the prefix and the numbers start at 1 each year (docs/invoices.md)',
  }),
  credit_note_number_prefix: Type.String({ pattern: '^[A-Za-z0-9/_-]{0,20}$' }),
  credit_note_number_yearly_reset: Type.Boolean(),
  store_logo: Type.String({
    pattern: '^([0-9a-f]{32})?$',
    description: 'The logo image uploaded with POST /v1/settings/logo (docs/storefront.md); empty = none',
  }),
  store_accent_color: Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: 'CSS colour #rrggbb' }),
  store_terms_url: Type.Union([
    Type.Literal(''),
    Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000 }),
  ]),
  // Email (docs/email.md). The API shows smtp_url with its password masked (SMTP_PASSWORD_MASK).
  smtp_url: Type.Union([
    Type.Literal(''),
    Type.String({ format: 'uri', pattern: '^smtps?://', maxLength: 2000 }),
  ]),
  mail_from: PlainText({
    maxLength: 300,
    description:
      'From address, e.g. "Store <shop@example.com>"; empty: the store name at no-reply@ the PUBLIC_URL host',
  }),
  mail_order_receipt: Type.Boolean(),
  mail_order_on_hold: Type.Boolean(),
  mail_payment_received: Type.Boolean(),
  mail_renewal_due: Type.Boolean(),
  mail_renewal_paid: Type.Boolean(),
  mail_renewal_failed: Type.Boolean(),
  mail_subscription_status: Type.Boolean(),
  mail_license_expiring: Type.Boolean(),
  mail_license_expired: Type.Boolean(),
  mail_renewal_reminder: Type.Boolean(),
  mail_account_created: Type.Boolean(),
  license_expiring_days: Type.Integer({ minimum: 1, maximum: 365 }),
  receipt_grace_days: Type.Integer({
    minimum: 1,
    maximum: 365,
    description:
      "Days an offline receipt is good for after it is issued (docs/licensing.md, 'Offline receipts')",
  }),
  renewal_grace_days: Type.Integer({
    minimum: 0,
    maximum: 365,
    description:
      "Days after a license's period ends during which update checks and downloads still flow (docs/licensing.md, 'Renewal grace')",
  }),
  renewal_discount_percent: Type.Integer({
    minimum: 0,
    maximum: 100,
    description:
      "Percent off the price when a customer buys the renewal of a term license (docs/selling.md, 'Buying a renewal')",
  }),
  renewal_reminder_days: Type.Array(Type.Integer({ minimum: -60, maximum: 365 }), {
    maxItems: 10,
    description:
      "Days before a term license's end (negative: after it) on which its renewal reminder is sent (docs/selling.md, 'Renewals')",
  }),
  // Staging sites and reinstalls (docs/licensing.md, '2.3 Staging and development sites', '2.4 Reinstalls').
  staging_patterns: Type.Array(StagingPattern, { maxItems: 100 }),
  staging_activation_limit: Type.Integer({
    minimum: 0,
    maximum: 1000,
    description: 'Staging sites per license; 0 = staging sites count as production ones',
  }),
  reinstall_takeover: Type.Boolean(),
  stale_activation_days: Type.Union([Type.Null(), Type.Integer({ minimum: 1, maximum: 3650 })], {
    description:
      "Days a site may go unseen before its activation is released (docs/licensing.md, 'Last seen and stale activations'); null = never",
  }),
  refund_license_action: Type.Union([Type.Literal('revoke'), Type.Literal('suspend'), Type.Literal('keep')], {
    description:
      "What a full refund does to the order's licenses (docs/payments.md, 'Refunds'): revoke, suspend (reversible) or keep",
  }),
  // The Stripe gateway (docs/payments.md, 'Stripe'). The two secrets are stored sealed with the
  // vault key and shown as SECRET_MASK when set, '' when not.
  stripe_publishable_key: Type.Union(
    [Type.Literal(''), Type.String({ pattern: '^pk_(test|live)_[A-Za-z0-9]{1,250}$' })],
    {
      description: 'Stripe publishable key (pk_live_… or pk_test_…); empty = not set',
    },
  ),
  stripe_secret_key: Type.Union(
    [
      Type.Literal(''),
      Type.Literal('********'),
      Type.String({ pattern: '^(sk|rk)_(test|live)_[A-Za-z0-9]{1,250}$' }),
    ],
    {
      description:
        "Stripe secret key; answered as '********' when set, '' when not; '********' in a PATCH keeps it",
    },
  ),
  stripe_webhook_secret: Type.Union(
    [Type.Literal(''), Type.Literal('********'), Type.String({ pattern: '^whsec_[A-Za-z0-9+/=]{1,250}$' })],
    {
      description:
        "Signing secret of the Stripe webhook endpoint; answered as '********' when set, '' when not; '********' in a PATCH keeps it",
    },
  ),
  stripe_statement_descriptor: Type.String({
    pattern: '^([A-Za-z0-9 .,_-]*[A-Za-z][A-Za-z0-9 .,_-]*)?$',
    maxLength: 22,
    description:
      "What the customer's card statement shows after the account's prefix; empty = the account's default",
  }),
  // The old store's WooCommerce REST key, for the License Manager for WooCommerce routes of the
  // plugins already in the field (docs/migrating.md, 'License Manager for WooCommerce'). Only the
  // secret's SHA-256 is kept; both empty = those routes refuse every call.
  lmfwc_consumer_key: Type.Union([Type.Literal(''), Type.String({ pattern: '^ck_[a-f0-9]{40}$' })], {
    description:
      "The old store's WooCommerce REST consumer key (ck_ and 40 hexadecimal digits) the plugins in the field send; empty = the LMFWC routes are closed",
  }),
  lmfwc_consumer_secret_sha256: Type.Union([Type.Literal(''), Type.String({ pattern: '^[a-f0-9]{64}$' })], {
    description:
      "SHA-256 (lowercase hexadecimal) of that key's consumer secret (cs_…); empty = the LMFWC routes are closed",
  }),
  renewal_url: Type.Union(
    [Type.Null(), Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000 })],
    {
      description:
        "Where a customer renews or buys a product the storefront does not sell (docs/distribution.md, 'Messages a vendor can show'); null = none",
    },
  ),
};

/** What GET /settings shows in place of the SMTP password; sent back in a PATCH it keeps the stored one. */
export const SMTP_PASSWORD_MASK = '********';

/** What GET /settings shows in place of a set secret (the Stripe keys); sent back in a PATCH it keeps the stored one. */
export const SECRET_MASK = '********';

/** Settings stored sealed with the vault key: never answered, logged or recorded in the audit trail. */
export const SEALED_SETTINGS = ['stripe_secret_key', 'stripe_webhook_secret'] as const;
export type SealedSetting = (typeof SEALED_SETTINGS)[number];

export const Settings = Type.Object(properties, { additionalProperties: false });
export type Settings = Static<typeof Settings>;

export const SettingsPatch = Type.Partial(Settings, { additionalProperties: false, minProperties: 0 });
export type SettingsPatch = Static<typeof SettingsPatch>;

export const DEFAULT_SETTINGS: Settings = {
  store_mode: 'test',
  licensing_enabled: true,
  software_enabled: true,
  activation_mode: 'simple',
  default_activation_limit: 1,
  customer_deactivation_enabled: true,
  token_expiry: 5,
  rate_limit: 10,
  webhook_url: '',
  webhook_secret: '',
  coupons_enabled: true,
  auto_registration: true,
  captcha_provider: 'none',
  captcha_site_key: '',
  captcha_secret: '',
  captcha_verify_url: '',
  base_currency: 'USD',
  currencies: [],
  currency_rate_max_age: 86400,
  renewal_window_days: 30,
  checkout_rate_limit: 5,
  prices_include_tax: false,
  tax_regime: 'manual',
  tax_seller_country: '',
  store_name: 'Tollgate store',
  invoice_seller_name: '',
  invoice_seller_address: '',
  invoice_seller_tax_number: '',
  invoice_number_prefix: 'INV-',
  invoice_number_yearly_reset: true,
  credit_note_number_prefix: 'CN-',
  credit_note_number_yearly_reset: true,
  store_logo: '',
  store_accent_color: '#1d4ed8',
  store_terms_url: '',
  smtp_url: '',
  mail_from: '',
  mail_order_receipt: true,
  mail_order_on_hold: true,
  mail_payment_received: true,
  mail_renewal_due: true,
  mail_renewal_paid: true,
  mail_renewal_failed: true,
  mail_subscription_status: true,
  mail_license_expiring: true,
  mail_license_expired: true,
  mail_renewal_reminder: true,
  mail_account_created: true,
  license_expiring_days: 7,
  receipt_grace_days: 7,
  renewal_grace_days: 0,
  renewal_discount_percent: 0,
  renewal_reminder_days: [30, 7, 0, -7],
  staging_patterns: [
    'localhost',
    '127.0.0.1',
    '*.local',
    '*.test',
    '*.localhost',
    'staging.*',
    'dev.*',
    '*.wpengine.com',
    '*.wpenginepowered.com',
    '*.kinsta.cloud',
    '*.flywheelstaging.com',
    '*.pantheonsite.io',
    '*.cloudwaysapps.com',
    '*.myftpupload.com',
  ],
  staging_activation_limit: 3,
  reinstall_takeover: false,
  stale_activation_days: null,
  refund_license_action: 'revoke',
  stripe_publishable_key: '',
  stripe_secret_key: '',
  stripe_webhook_secret: '',
  stripe_statement_descriptor: '',
  renewal_url: null,
  lmfwc_consumer_key: '',
  lmfwc_consumer_secret_sha256: '',
};
