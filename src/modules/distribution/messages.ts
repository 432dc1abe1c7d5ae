import type { ErrorCode } from '../../http/errors.js';

/**
 * The one catalogue of what a vendor's updater can show its customer next to each eligibility or
 * error code of the update check and the package route (docs/distribution.md, 'Messages a vendor
 * can show'). Written for the site's owner, not for the integrator: the error catalogue's
 * `message` (src/http/errors.ts) says what went wrong in the request; these say what it means to
 * the customer and what to do. A code missing here keeps the error catalogue's message.
 */
export const CUSTOMER_MESSAGES: Partial<Record<ErrorCode, string>> = {
  // the store
  module_disabled: 'Updates are unavailable right now. Please try again later.',
  licensing_unavailable: 'License checks are unavailable right now. Please try again later.',
  rate_limited: 'Too many update requests from this site. Please try again in a minute.',
  server_busy: 'The update server is busy. Please try again in a moment.',
  internal_error: 'The update server had a problem. Please try again later.',
  token_generation_failed: 'The download could not be prepared. Please try again later.',
  token_write_failed: 'The download could not be prepared. Please try again later.',
  product_not_found: 'The update server does not know this product.',
  software_slug_ambiguous: 'The update server cannot tell which product this is. Please contact the vendor.',
  software_disabled: 'Updates for this product are switched off by the vendor.',
  // the request (a fault of the updater, not of the customer)
  missing_params: 'The update request is incomplete. Please contact the vendor.',
  missing_slug: 'The update request is incomplete. Please contact the vendor.',
  unsupported_parameter: 'The update request was not understood. Please contact the vendor.',
  invalid_purpose: 'The update request was not understood. Please contact the vendor.',
  current_version_required: 'The update request is incomplete. Please contact the vendor.',
  current_version_not_allowed: 'The update request was not understood. Please contact the vendor.',
  rest_invalid_param: 'The update request was not understood. Please contact the vendor.',
  rest_invalid_json: 'The update request was not understood. Please contact the vendor.',
  missing_identity: 'This site could not identify itself to the update server.',
  invalid_identity: 'This site could not identify itself to the update server.',
  // the license
  license_required: 'Enter a license key to receive updates.',
  invalid_license: 'This license key is not valid. Check it, or buy a license to receive updates.',
  license_product_mismatch:
    'This license key is for another product. Buy a license for this one to receive updates.',
  revoked: 'This license has been revoked. Please contact the vendor.',
  license_inactive: 'This license is not active. Please contact the vendor.',
  expired: 'Your license has expired. Renew it to receive updates.',
  trial_ended: 'Your trial has ended. Buy a license to keep receiving updates.',
  subscription_inactive: 'Your subscription is not active. Renew it to receive updates.',
  invalid_usage_expiry: 'This license could not be read. Please contact the vendor.',
  license_usage_inactive: 'This license is not active. Please contact the vendor.',
  domain_not_activated: 'This site is not activated for the license. Activate it to receive updates.',
  // the release
  no_eligible_release: 'No version is available for this license. Renew it to receive newer versions.',
  release_not_entitled: 'Your license does not cover this version. Renew it to receive updates.',
  release_product_not_entitled: 'This license key is for another product.',
  invalid_release_purpose: 'The update request was not understood. Please contact the vendor.',
  invalid_release_date: 'This version cannot be delivered right now. Please contact the vendor.',
};

/** The message when nothing newer exists: a 404 `no_eligible_release` is "up to date", not a refusal. */
export const UP_TO_DATE = 'You have the latest version.';

/**
 * Codes for which buying or renewing a license would help: their answers carry `renewal_url`
 * (docs/distribution.md, 'Messages a vendor can show').
 */
export const RENEWABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'license_required',
  'invalid_license',
  'license_product_mismatch',
  'expired',
  'trial_ended',
  'subscription_inactive',
  'no_eligible_release',
  'release_not_entitled',
]);

/**
 * What to show for a code: the catalogue's sentence, led by the version that exists when one does
 * ("Version 1.1.0 is available. Your license has expired. Renew it to receive updates.").
 */
export function customerMessage(
  code: ErrorCode,
  fallback: string,
  availableVersion: string | null,
  status?: number,
): string {
  if (code === 'no_eligible_release' && status === 404) return UP_TO_DATE;
  const text = CUSTOMER_MESSAGES[code] ?? fallback;
  return availableVersion ? `Version ${availableVersion} is available. ${text}` : text;
}
