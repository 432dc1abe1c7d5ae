import { mysqlTime } from '../../clock.js';
import { type Evaluation, evaluateLicense, type LicenseFacts } from './entitlements.js';
import type { ActivationRow, LicenseRecord, LicenseTerms } from './licensing.model.js';

/**
 * The license and activation objects the API answers, built from stored rows. Legacy timestamps are
 * `YYYY-MM-DD HH:MM:SS` UTC (docs/api.md, 'Timestamps and money').
 */

const legacyTime = (isoText: string | null): string | null => {
  if (isoText === null) return null;
  const d = new Date(isoText);
  return Number.isNaN(d.getTime()) ? isoText : mysqlTime(d);
};

/**
 * The license's own limit, else the variation's, else the product's, else the global default
 * (docs/licensing.md, '2.1 Activation limit').
 */
export function resolveActivationLimit(license: LicenseTerms, globalDefault: number): number {
  if (license.activation_limit !== null) return license.activation_limit;
  const variation = license.variation_found !== null ? license.variation_activation_limit : null;
  return variation ?? license.product_activation_limit ?? globalDefault;
}

/**
 * -1 when unlimited (docs/licensing.md, '2. Activate'); never negative otherwise, even after a
 * limit was lowered.
 */
export const remainingOf = (limit: number, count: number): number =>
  limit === 0 ? -1 : Math.max(0, limit - count);

export function factsOf(license: LicenseTerms): LicenseFacts {
  return {
    status: license.status,
    usage_expires_at: license.usage_expires_at,
    entitlement_policy: license.entitlement_policy,
    created_at: license.created_at,
    subscription_linked: license.subscription_id !== null,
    subscription_status: license.subscription_found !== null ? license.subscription_status : null,
    trial: license.trial === 1,
  };
}

/** What a view adds to an activation only when it applies, so a production row reads as it always did. */
export interface ActivationExtras {
  /** 'staging' on a staging site (docs/licensing.md, '2.3 Staging and development sites'). */
  environment?: 'staging';
  /**
   * 'reinstalled' and the successor, on an activation a reinstall took over ('2.4 Reinstalls');
   * 'stale' on one released for not being seen ('Last seen and stale activations').
   */
  deactivation_reason?: string;
  replaced_by?: number;
}

export function activationView(a: ActivationRow) {
  // The row's columns, its times in the legacy format; the three optional ones only when set.
  const view: Omit<ActivationRow, keyof ActivationExtras> & ActivationExtras = {
    id: a.id,
    license_id: a.license_id,
    identity_key: a.identity_key,
    domain: a.domain,
    domain_normalized: a.domain_normalized,
    installation_id: a.installation_id,
    ip_address: a.ip_address,
    machine_id: a.machine_id,
    user_agent: a.user_agent,
    status: a.status,
    activated_at: legacyTime(a.activated_at)!,
    deactivated_at: legacyTime(a.deactivated_at),
    activation_revision: a.activation_revision,
    updated_at: legacyTime(a.updated_at)!,
    last_seen_at: legacyTime(a.last_seen_at),
  };
  if (a.environment === 'staging') view.environment = 'staging';
  if (a.deactivation_reason !== null) view.deactivation_reason = a.deactivation_reason;
  if (a.replaced_by !== null) view.replaced_by = a.replaced_by;
  return view;
}
export type ActivationView = ReturnType<typeof activationView>;

export function licenseView(
  license: LicenseRecord,
  globalDefault: number,
  now: Date,
  evaluation?: Evaluation,
) {
  const ev = evaluation ?? evaluateLicense(factsOf(license), now);
  const limit = resolveActivationLimit(license, globalDefault);
  return {
    id: license.id,
    license_key: license.license_key,
    product_id: license.product_id,
    variation_id: license.variation_id,
    product_name: license.product_name ?? '',
    variation_name: license.variation_found !== null ? (license.variation_name ?? '') : '',
    order_id: license.order_id ?? 0,
    order_item_id: license.order_item_id ?? 0,
    user_id: license.user_id,
    user_email: license.user_email ?? '',
    user_name: `${license.user_first_name ?? ''} ${license.user_last_name ?? ''}`.trim(),
    subscription_id: license.subscription_id,
    status: license.status,
    activation_limit: limit,
    activation_count: license.activation_count,
    activations_remaining: remainingOf(limit, license.activation_count),
    expires_at: ev.expires_at,
    usage_expires_at_utc: ev.usage_expires_at_utc,
    is_expired: ev.is_expired,
    entitlement_policy: license.entitlement_policy ?? '',
    entitlements: ev.entitlements,
    test: license.test === 1,
    trial: license.trial === 1,
    created_at: legacyTime(license.created_at)!,
    updated_at: legacyTime(license.updated_at)!,
  };
}
export type LicenseView = ReturnType<typeof licenseView>;
