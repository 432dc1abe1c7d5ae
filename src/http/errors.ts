/**
 * The one error catalogue: every code the service answers with, its default HTTP status and a
 * default message. Domain code throws `new ApiError(code)`; `error-handler.ts` turns it into the
 * REST envelope `{code, message, data:{status, ...}}`, or into checkout's own body
 * `{error, error_code, ...}` for an error thrown with `shape: 'checkout'` (docs/checkout.md,
 * 'Failure bodies and HTTP statuses'). Clients branch on code, never on message.
 */
const catalogue = {
  // transport and framework
  rest_no_route: [404, 'No route was found matching the URL and request method.'],
  rest_invalid_json: [400, 'The request body is not valid JSON.'],
  rest_invalid_param: [400, 'A parameter has the wrong type or format.'],
  rest_missing_param: [400, 'A required parameter is missing.'],
  rest_unsupported_media_type: [415, 'The request body must be application/json.'],
  rest_body_too_large: [413, 'The request body is too large.'],
  rest_bad_request: [400, 'The request is not valid HTTP.'],
  rest_request_timeout: [408, 'The request took too long to arrive.'],
  rest_uri_too_long: [414, 'A path parameter is too long.'],
  rest_headers_too_large: [431, 'The request headers are too large.'],
  invalid_parameters: [400, 'Unrecognised or invalid parameters.'],
  internal_error: [500, 'An unexpected error occurred.'],
  server_busy: [503, 'The server is busy; try again in a moment.'],
  admin_not_built: [503, 'The console is not built: run npm run build (docs/admin.md).'],
  // authentication
  rest_not_logged_in: [401, 'You are not currently logged in.'],
  rest_forbidden: [403, 'Sorry, you are not allowed to do that.'],
  rest_cookie_invalid_nonce: [403, 'Cookie check failed.'],
  invalid_credentials: [401, 'The email or password is incorrect.'],
  too_many_login_attempts: [429, 'Too many failed sign-in attempts; try again later.'],
  email_exists: [409, 'A user with this email already exists.'],
  user_not_found: [404, 'User not found.'],
  // passwords by email (docs/email.md, 'Passwords')
  invalid_password_token: [400, 'The password link is invalid, already used or expired.'],
  invalid_password: [400, 'The password must be 8 to 1024 characters.'],
  // the customer's profile (docs/storefront.md, 'Profile')
  incorrect_current_password: [400, 'The current password is incorrect.'],
  current_password_required: [400, 'This account has a password: give the current one to change it.'],
  invalid_sign_in_token: [400, 'The sign-in link is invalid, already used or expired.'],
  too_many_sign_in_links: [429, 'Too many sign-in link requests; try again later.'],
  invalid_name: [400, 'A name is at most 100 characters, without control characters.'],
  too_many_password_requests: [429, 'Too many password requests; try again later.'],
  // catalogue
  product_not_found: [404, 'Product not found.'],
  variation_not_found: [404, 'Variation not found.'],
  coupon_exists: [409, 'A coupon with this code already exists.'],
  gateway_not_found: [404, 'Payment gateway not found.'],
  // test mode and live mode (docs/payments.md, 'Test mode and live mode')
  gateway_instructions_required: [
    400,
    'Set the payment instructions customers follow before enabling this gateway.',
  ],
  test_mode_only: [403, 'The test card works only while the store is in test mode.'],
  live_gateway_required: [409, 'Enable a payment gateway that takes real payments before going live.'],
  invalid_filename_template: [400, 'The filename template must contain {version} and end in .zip.'],
  invalid_slug: [400, 'The slug must be 1 to 100 characters of a-z, 0-9 and hyphens.'],
  slug_taken: [409, 'Another published product already uses this slug.'],
  // storefront images (docs/storefront.md, 'Images')
  image_required: [400, 'Send the image as the multipart/form-data field "file".'],
  image_not_supported: [415, 'The file is not a JPEG, PNG, WebP or GIF image.'],
  image_too_large: [413, 'The image is larger than 10 MB or 40 megapixels.'],
  invalid_amount: [400, 'The amount has more decimal places than its currency allows or is out of range.'],
  variations_required: [400, 'A variable product needs at least one variation.'],
  variations_not_allowed: [400, 'Only variable products have variations.'],
  subscription_required: [400, 'A subscription product needs a subscription period and interval.'],
  subscription_not_allowed: [400, 'Only subscription products have a subscription.'],
  coupon_not_found: [404, 'Coupon not found.'],
  invalid_currency: [400, 'Unknown currency code.'],
  invalid_product_ids: [400, 'A listed product does not exist.'],
  invalid_country: [400, 'Unknown ISO 3166-1 alpha-2 country code.'],
  invalid_tax_rate: [400, 'The tax rate must be a decimal from 0 to 100 with at most 4 places.'],
  tax_rate_not_found: [404, 'Tax rate not found.'],
  shipping_zone_not_found: [404, 'Shipping zone not found.'],
  // shared by catalogue policies and license snapshots
  invalid_entitlement_policy: [400, 'The entitlement policy is invalid.'],
  // software preflight (docs/distribution.md, 'Errors and what the client should do')
  module_disabled: [503, 'Software distribution is disabled.'],
  missing_params: [400, 'Required parameters are missing.'],
  missing_slug: [400, 'The slug parameter is required.'],
  unsupported_parameter: [400, 'Unsupported parameter.'],
  invalid_purpose: [400, 'Purpose must be install, reinstall or update.'],
  invalid_channel: [400, 'The channel must be stable, rc, beta or alpha.'],
  current_version_required: [400, 'current_version is required for an update.'],
  current_version_not_allowed: [400, 'current_version is not allowed for install or reinstall.'],
  rate_limited: [429, 'Too many requests.'],
  software_slug_ambiguous: [409, 'Several published products share this slug.'],
  software_disabled: [403, 'Software distribution is disabled for this product.'],
  licensing_unavailable: [503, 'Licensing is unavailable.'],
  license_required: [403, 'A license key is required.'],
  missing_identity: [400, 'The site identity (domain and installation_id) is required.'],
  invalid_identity: [400, 'The site identity is malformed.'],
  invalid_license: [403, 'The license key is invalid.'],
  license_product_mismatch: [403, 'The license belongs to a different product.'],
  license_inactive: [403, 'The license is not active.'],
  revoked: [403, 'The license has been revoked.'],
  expired: [403, 'The license has expired.'],
  trial_ended: [403, 'The trial has ended.'],
  trial_not_offered: [400, 'This product offers no trial.'],
  trial_already_used: [409, 'A trial of this product has already been used by this email or site.'],
  subscription_inactive: [403, 'The linked subscription is not active.'],
  invalid_usage_expiry: [403, 'The license usage expiry is unreadable.'],
  license_usage_inactive: [403, 'The license usage right is inactive.'],
  domain_not_activated: [403, 'This site is not activated for the license.'],
  // release candidate and authorization (docs/distribution.md, the same table)
  no_eligible_release: [404, 'No eligible release.'],
  release_not_entitled: [403, 'The license is not entitled to this release.'],
  release_product_not_entitled: [403, 'The release is not of the licensed product.'],
  invalid_release_purpose: [400, 'Invalid release purpose.'],
  invalid_release_date: [500, 'The stored release date is invalid.'],
  release_not_found: [404, 'Release not found.'],
  version_not_found: [404, 'Version not found.'],
  release_not_published: [410, 'The release is not published.'],
  release_withdrawn: [410, 'The release has been withdrawn.'],
  artifact_not_found: [404, 'The package file is missing.'],
  artifact_integrity_missing: [500, 'The package checksum is missing.'],
  artifact_integrity_failed: [500, 'The package failed its integrity check.'],
  source_still_public: [409, 'A public copy of the package still exists.'],
  unsupported_storage_driver: [501, 'Unsupported storage driver.'],
  updater_external_link_prohibited: [403, 'External releases are not served by the token route.'],
  not_external_version: [400, 'The release is not an external link.'],
  authentication_required: [401, 'Authentication required.'],
  customer_not_entitled: [403, 'The customer has not purchased this product.'],
  cross_product_artifact_prohibited: [403, 'The artifact belongs to another product.'],
  unprotected_artifact_prohibited: [403, 'Unprotected artifacts cannot be used for a release.'],
  // download token (docs/distribution.md, the same table)
  download_override_rejected: [400, 'Only the token parameter is accepted.'],
  missing_token: [400, 'The token parameter is required.'],
  head_not_supported: [405, 'HEAD is not supported.'],
  range_not_supported: [416, 'Range requests are not supported.'],
  invalid_token: [403, 'The token is invalid.'],
  token_binding_required: [403, 'The token lacks a complete binding.'],
  token_expired: [403, 'The token has expired.'],
  token_invalidated: [403, 'The token has been invalidated.'],
  token_consumed: [403, 'The token has already been used.'],
  software_product_unavailable: [403, 'The product is no longer available.'],
  activation_inactive: [403, 'The bound activation is inactive.'],
  activation_binding_changed: [403, 'The activation binding changed.'],
  license_policy_changed: [403, 'The licensing policy changed.'],
  release_binding_changed: [403, 'The release binding changed.'],
  artifact_changed: [409, 'The package file changed.'],
  token_generation_failed: [500, 'The download token could not be created.'],
  token_write_failed: [500, 'The download token could not be stored.'],
  // licensing, OAuth, administration (docs/licensing.md, '6. Error codes'; docs/oauth.md, 'Errors')
  missing_key: [400, 'license_key is required.'],
  missing_license_key: [400, 'license_key is required.'],
  missing_state: [400, 'state is required.'],
  invalid_state: [400, 'The state is invalid or expired.'],
  missing_identifier: [400, 'Give an activation_id or both domain and installation_id.'],
  missing_return_url: [400, 'return_url is required.'],
  invalid_return_url: [400, 'return_url must be on the requesting domain.'],
  unauthorized: [403, 'You do not own this license.'],
  activation_limit_reached: [403, 'The activation limit has been reached.'],
  staging_activation_limit_reached: [403, 'The staging activation limit has been reached.'],
  deactivation_disabled: [403, 'Customer deactivation is disabled.'],
  not_found: [404, 'Not found.'],
  license_not_found: [404, 'License not found.'],
  no_activation: [404, 'No matching activation.'],
  activation_transaction_failed: [500, 'Activation failed.'],
  activation_read_failed: [500, 'Activation failed.'],
  activation_write_failed: [500, 'Activation failed.'],
  activation_commit_failed: [500, 'Activation failed.'],
  deactivation_transaction_failed: [500, 'Deactivation failed.'],
  deactivation_read_failed: [500, 'Deactivation failed.'],
  deactivation_write_failed: [500, 'Deactivation failed.'],
  deactivation_commit_failed: [500, 'Deactivation failed.'],
  revoke_failed: [500, 'The revocation was not stored.'],
  license_key_exists: [409, 'A license with this key already exists.'],
  license_revoked: [409, 'The license is revoked; a revocation cannot be taken back.'],
  oauth_unavailable: [501, 'Customer-approval (OAuth) activation is not available on this server yet.'],
  // signing keys and offline receipts (docs/administration.md, 'Signing keys'; docs/licensing.md, 'Offline receipts')
  signing_key_unavailable: [
    500,
    'The active signing key cannot be read: the vault key that sealed it is not configured.',
  ],
  // storage and artifact deletion
  deletion_preview_stale: [409, 'The deletion preview is stale.'],
  deletion_confirmation_required: [400, 'The impact acknowledgement is required.'],
  artifact_delete_in_progress: [409, 'The artifact is already being deleted.'],
  artifact_not_available: [409, 'The artifact is not available.'],
  cross_product_permission_denied: [403, 'No permission on an affected product.'],
  storage_delete_unsupported: [501, 'The storage driver cannot delete.'],
  storage_stat_unsupported: [501, 'The storage driver cannot stat.'],
  storage_delete_failed: [500, 'The file could not be deleted.'],
  invalid_driver_stat_contract: [500, 'Malformed storage stat.'],
  invalid_driver_delete_contract: [500, 'Invalid storage deletion outcome.'],
  missing_targets: [400, 'Give artifact_ids or release_ids.'],
  max_targets_exceeded: [400, 'At most 100 targets.'],
  // release administration and the artifact vault (docs/releases.md)
  upload_too_large: [413, 'The upload exceeds the size limit.'],
  missing_file: [400, 'A file (or, as JSON, external_url or legacy_download_id) is required.'],
  invalid_file_type: [400, 'Only .zip archives are accepted.'],
  invalid_archive: [400, 'The file is not a readable zip archive.'],
  invalid_version: [
    400,
    'The version must be 1 to 64 characters of letters, digits and . + _ -, starting with a letter or digit.',
  ],
  invalid_filename: [400, 'The file name must be a plain .zip file name without paths.'],
  filename_template_mismatch: [
    400,
    "The file name does not match the product's filename template for this version.",
  ],
  invalid_changelog: [400, 'The changelog must be a string or {narrative, points:[{type, text}]}.'],
  invalid_rollout_percent: [400, 'The rollout percentage must be a whole number from 0 to 100.'],
  invalid_release_metadata: [
    400,
    'A metadata field is malformed: versions like 6.1, http(s) URLs, bounded text.',
  ],
  invalid_external_url: [400, 'external_url must be an absolute https URL without credentials.'],
  invalid_file_sha256: [400, 'file_sha256 must be 64 lowercase hexadecimal characters.'],
  version_exists: [409, 'This product already has a release with this version.'],
  release_version_mismatch: [
    400,
    "The version given is not the version in the zip's plugin or theme header; send version_override to publish it anyway.",
  ],
  duplicate_artifact: [409, 'This file is already the artifact of another release of this product.'],
  release_state_conflict: [409, 'The release cannot make this transition from its current status.'],
  software_slug_required: [409, "Configure the product's software slug before publishing releases."],
  vault_not_private: [409, 'The vault lies under a public root; use local_encrypted or move the vault.'],
  storage_unavailable: [503, 'The artifact vault is not writable.'],
  vault_key_unavailable: [500, 'The key that sealed this artifact or secret is not configured.'],
  legacy_download_not_found: [404, 'Catalogue download not found.'],
  no_public_source: [409, 'This release has no public catalogue source.'],
  public_source_mismatch: [409, 'The public file differs from the protected copy; it was left in place.'],
  deletion_job_not_found: [404, 'Deletion job not found.'],
  // License Manager for WooCommerce's REST routes, for the plugins already in the field
  // (docs/migrating.md, 'License Manager for WooCommerce'): its own codes and statuses.
  lmfwc_rest_data_error: [404, 'The license key could not be found or used.'],
  lmfwc_rest_license_expired: [405, 'The license key has expired.'],
  lmfwc_rest_cannot_view: [401, 'Sorry, you cannot view this resource.'],
  lmfwc_rest_cannot_edit: [401, 'Sorry, you are not allowed to edit this resource.'],
  woocommerce_rest_authentication_error: [401, 'Consumer key or secret is invalid.'],
  // outbound webhooks
  webhook_event_not_found: [404, 'Webhook event not found.'],
  // mail outbox (docs/email.md)
  mail_message_not_found: [404, 'Mail message not found.'],
  mail_not_configured: [409, 'No mail server is set: set smtp_url first.'],
  mail_test_failed: [502, 'The mail server refused the test email or could not be reached.'],
  // imports from the console (docs/migrating.md, 'From the console')
  import_not_found: [404, 'Import job not found.'],
  import_running: [409, 'An import is already queued or running; wait for it to end.'],
  invalid_import_arguments: [
    400,
    'csv and freemius take dir; edd and woocommerce take db_url and optionally table_prefix.',
  ],
  import_dir_outside_roots: [400, 'dir must be a folder inside DATA_DIR/imports or an IMPORT_ROOTS folder.'],
  import_dir_not_found: [400, 'dir is not a folder on the server.'],
  // cart (docs/cart.md, 'Errors')
  invalid_product: [404, 'The product does not exist or cannot be bought.'],
  invalid_variation: [404, 'The variation does not exist.'],
  variation_not_available: [400, 'This variation is out of stock.'],
  add_to_cart_failed: [400, 'The product could not be added to the cart.'],
  update_failed: [400, 'The cart item could not be updated.'],
  item_not_found: [404, 'The item is not in the cart.'],
  remove_failed: [400, 'The item could not be removed; try again.'],
  coupon_code_required: [400, 'A coupon code is required.'],
  coupons_disabled: [400, 'Coupons are disabled.'],
  cart_error: [500, 'The cart session could not be initialised.'],
  empty_cart: [400, 'The cart is empty.'],
  coupon_currency_mismatch: [400, 'This coupon is restricted to another currency.'],
  coupon_failed: [400, 'The coupon cannot be applied.'],
  coupon_not_applied: [400, 'This coupon is not applied to the cart.'],
  remove_coupon_failed: [400, 'The coupon could not be removed; try again.'],
  // checkout (docs/checkout.md, 'Failure bodies and HTTP statuses'); also rate_limited, coupon_failed,
  // invalid_product, invalid_variation (400), unauthorized, order_not_found with checkout's own text
  no_items: [400, 'No items provided'],
  captcha_missing: [403, 'Please complete the CAPTCHA check.'],
  login_required: [401, 'You must be logged in to purchase a subscription.'],
  currency_rate_stale: [409, 'The exchange rate has expired; please try again shortly.'],
  invalid_payment_method: [400, 'Please choose an available payment method.'],
  currency_gateway_mismatch: [400, 'The payment method is not available for this currency.'],
  out_of_stock: [409, 'Sorry, some items are no longer in stock.'],
  order_currency_failed: [409, 'The exchange rate changed while the order was placed; please try again.'],
  order_already_paid: [409, 'This order has already been paid.'],
  order_cancelled: [409, 'This order was cancelled.'],
  renewal_window_expired: [409, 'The renewal payment window has closed.'],
  license_not_renewable: [409, 'This license cannot be renewed by a purchase.'],
  // license transfers (docs/selling.md, 'Transfers')
  transfer_not_found: [404, 'No pending transfer matches this link or id.'],
  transfer_already_accepted: [409, 'This transfer has already been accepted.'],
  transfer_expired: [410, 'This transfer link has expired; the sender can send a new one.'],
  transfer_to_self: [400, 'The license already belongs to the account of this email.'],
  license_not_transferable: [409, 'This license cannot be transferred (it is revoked or suspended).'],
  transfer_wrong_account: [403, 'This transfer is for another account: sign out first, then open the link.'],
  too_many_transfers: [429, 'Too many transfers were sent; try again later.'],
  invalid_renewal_link: [400, 'This renewal link is not one this store made, or it was altered.'],
  renewal_link_expired: [410, 'This renewal link has expired.'],
  // the signed package link of the updaters in the field (docs/migrating.md)
  invalid_package_link: [403, 'This package link is not one this store made, or it was altered.'],
  package_link_expired: [410, 'This package link has expired; check for updates again.'],
  legacy_api_disabled: [403, 'This product no longer answers the updaters of its previous store.'],
  license_not_upgradable: [
    409,
    'This license cannot change tier: it is revoked, suspended, expired, a trial, or its subscription is not active or its payment is due.',
  ],
  upgrade_same_tier: [400, 'The license is already on this tier.'],
  invalid_upgrade_target: [400, 'This is not a tier the license can move to.'],
  gateway_mismatch: [400, 'This order must be paid with its original payment method.'],
  gateway_unavailable: [400, 'This payment method is not available for this order.'],
  payment_declined: [402, 'Payment declined'],
  invalid_card_number: [400, 'The card number is not a valid card number.'],
  // taxes at checkout (docs/taxes.md)
  invalid_vat_number: [400, 'The VAT number is not valid; check it, or leave it out to buy with VAT.'],
  tax_country_unconfirmed: [
    409,
    'Your billing country differs from where you appear to be; please confirm your country.',
  ],
  // orders and subscriptions (docs/checkout.md)
  order_not_found: [404, 'Order not found.'],
  subscription_not_found: [404, 'Subscription not found.'],
  // refunds and order notes (docs/payments.md)
  order_not_refundable: [409, 'Only a paid order (processing or completed) can be refunded.'],
  refund_exceeds_total: [409, 'The refund is more than what remains refundable on the order.'],
  invalid_refund_amount: [
    400,
    'amount must be a positive decimal in the order currency, with no more decimal places than it allows.',
  ],
  // invoices and credit notes (docs/invoices.md)
  invoice_not_found: [404, 'The order has no such invoice or credit note.'],
  order_refunded: [409, 'The order was refunded; its status can no longer change.'],
  // the Stripe gateway (docs/payments.md, 'Stripe')
  stripe_not_configured: [503, 'The Stripe gateway is not configured: set its keys in the settings.'],
  stripe_signature_invalid: [400, 'The Stripe-Signature header is missing, wrong or too old.'],
  stripe_unavailable: [502, 'Stripe could not be reached or refused the request; nothing was changed.'],
  card_not_found: [404, 'No card of yours has this id.'],
  // reports (docs/api.md, 'Reports')
  invalid_report_days: [400, 'days must be a whole number from 1 to 366.'],
  invalid_tax_quarter: [400, 'quarter must be a calendar quarter such as 2026-Q4.'],
  invalid_field_range: [
    400,
    'from and to must be UTC days (YYYY-MM-DD), from not after to, at most 400 days.',
  ],
  // what a site says it runs (docs/distribution.md, 'What runs in the field')
  invalid_platform: [400, 'platform must be 1 to 32 of a-z, 0-9, _ and -, starting with a letter.'],
  invalid_platform_version: [
    400,
    'platform_version must be up to 64 of letters, digits and . + _ -, starting with a digit.',
  ],
  invalid_php_version: [
    400,
    'php_version must be up to 64 of letters, digits and . + _ -, starting with a digit.',
  ],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof catalogue;

/**
 * The body an error is answered with: the REST envelope (docs/api.md, 'Errors'), or checkout's own
 * `{error, error_code, ...data}`, led by `ok: false` where checkout's docs give it
 * (docs/checkout.md, 'Failure bodies and HTTP statuses').
 */
export type ErrorShape = 'rest' | 'checkout' | 'checkout_not_ok';

export class ApiError extends Error {
  readonly status: number;
  readonly data: Record<string, unknown> | undefined;
  readonly shape: ErrorShape;
  constructor(
    readonly code: ErrorCode,
    opts: { status?: number; message?: string; data?: Record<string, unknown>; shape?: ErrorShape } = {},
  ) {
    super(opts.message ?? catalogue[code][1]);
    this.status = opts.status ?? catalogue[code][0];
    this.data = opts.data;
    this.shape = opts.shape ?? 'rest';
  }

  toBody(): Record<string, unknown> {
    if (this.shape === 'rest') {
      return { code: this.code, message: this.message, data: { status: this.status, ...this.data } };
    }
    const body = { error: this.message, error_code: this.code, ...this.data };
    return this.shape === 'checkout_not_ok' ? { ok: false, ...body } : body;
  }
}

export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(catalogue, code);

/** Every code with its status and default message, in catalogue order (docs/errors.md is made from it). */
export const errorCodes = (): { code: ErrorCode; status: number; message: string }[] =>
  (Object.entries(catalogue) as [ErrorCode, readonly [number, string]][]).map(
    ([code, [status, message]]) => ({
      code,
      status,
      message,
    }),
  );
export const statusOf = (code: ErrorCode): number => catalogue[code][0];
