import type { ErrorCode } from '../../http/errors.js';
import { type Entitlements, parseTimestamp } from '../licensing/entitlements.js';
import type { Release } from '../releases/releases.model.js';
import type { TokenPurpose } from './distribution.tables.js';

export const PURPOSES: readonly TokenPurpose[] = ['install', 'reinstall', 'update'];

/**
 * The entitlements subset of package and check responses (`entitlement` in docs/distribution.md).
 */
export type EntitlementSubset = Omit<Entitlements, 'history_access' | 'usage_expires_at_utc'> & {
  license_required: boolean;
};

export function entitlementSubset(e: Entitlements): EntitlementSubset {
  return {
    license_required: true,
    license_active: e.license_active,
    update_entitled: e.update_entitled,
    support_active: e.support_active,
    usage_expires_at: e.usage_expires_at,
    updates_expires_at: e.updates_expires_at,
    support_expires_at: e.support_expires_at,
    policy_mode: e.policy_mode,
    historical_downloads: e.historical_downloads,
    updates_mode: e.updates_mode,
    support_mode: e.support_mode,
    usage_expiry_valid: e.usage_expiry_valid,
    policy_valid: e.policy_valid,
    policy_error: e.policy_error,
    issued_at: e.issued_at,
    subscription_status: e.subscription_status,
    subscription_active: e.subscription_active,
    subscription_linked: e.subscription_linked,
  };
}

/** A public product: no license, so no license-bound limits; every release is open to everyone. */
export const PUBLIC_ENTITLEMENT: EntitlementSubset = {
  license_required: false,
  license_active: true,
  update_entitled: true,
  support_active: null,
  usage_expires_at: null,
  updates_expires_at: null,
  support_expires_at: null,
  policy_mode: 'legacy',
  historical_downloads: false,
  updates_mode: 'license',
  support_mode: 'unspecified',
  usage_expiry_valid: true,
  policy_valid: true,
  policy_error: null,
  issued_at: '',
  subscription_status: null,
  subscription_active: false,
  subscription_linked: false,
};

/**
 * The effective publication time of a release: published_at, else release_date
 * (docs/distribution.md).
 */
export function publicationOf(release: Pick<Release, 'published_at' | 'release_date'>): Date | null {
  const text = release.published_at ?? release.release_date;
  return text ? parseTimestamp(text) : null;
}

/**
 * Entitlement authorization of one release for one purpose (docs/distribution.md, 'Which release').
 * The update window decides: while it is open every release is entitled; once it has closed, only a
 * license with historical_downloads may take a release published on or before updates_expires_at.
 * Answers null when authorized, else the specific error code.
 */
export function authorizeRelease(
  e: Entitlements,
  release: Pick<Release, 'product_id' | 'published_at' | 'release_date'>,
  licenseProductId: number,
  purpose: string,
): ErrorCode | null {
  if (!PURPOSES.includes(purpose as TokenPurpose)) return 'invalid_release_purpose';
  if (release.product_id !== licenseProductId) return 'release_product_not_entitled';
  if (!e.license_active) return 'license_usage_inactive';
  const published = publicationOf(release);
  if (!published) return 'invalid_release_date';
  if (!e.policy_valid) return 'release_not_entitled';
  const cutoff = e.updates_expires_at === null ? null : parseTimestamp(e.updates_expires_at);
  if (cutoff && published.getTime() > cutoff.getTime()) return 'release_not_entitled';
  if (e.update_entitled) return null;
  if (e.historical_downloads && cutoff) return null;
  return 'release_not_entitled';
}
