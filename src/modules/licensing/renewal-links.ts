import { createHmac } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { AppSecrets } from '../../db/app-secrets.js';
import { ApiError } from '../../http/errors.js';
import { safeEqual } from '../../random.js';
import { parseTimestamp } from './entitlements.js';
import { renewalTerm } from './license.service.js';
import type { LicenseTerms } from './licensing.model.js';

/** A renewal link works until this long after the end of the period it renews (docs/selling.md, 'Renewals'). */
export const RENEWAL_LINK_DAYS = 60;
const DAY_S = 86_400;
const SECRET_KEY = 'renewal_link_secret';
/** `<license id>.<end, epoch seconds>.<43 base64url characters of HMAC-SHA256>` */
const TOKEN = /^([1-9][0-9]{0,15})\.(-?[0-9]{1,12})\.([A-Za-z0-9_-]{43})$/;

/** What a renewal link names: the license, and the end of the period it renews. */
export interface RenewalLinkClaim {
  license_id: number;
  /** The license's usage end when the link was made, epoch seconds. */
  end: number;
}

/**
 * HMAC-SHA256 (43 base64url characters) of a signed link's fields under the store's link secret
 * (AppSecrets `renewal_link_secret`): the renewal link and the signed package link of the
 * updaters in the field (src/modules/legacy) share it. `kind` starts the signed text, so that no
 * link of one kind passes for another with the same numbers.
 */
export async function linkMac(secrets: AppSecrets, kind: string, fields: readonly number[]): Promise<string> {
  return createHmac('sha256', await secrets.get(SECRET_KEY))
    .update(`${kind}.${fields.join('.')}`)
    .digest('base64url');
}

/**
 * The one-click renewal link of a term license (docs/selling.md, 'Renewals'): `/renew?token=…`,
 * the license id and the end of its current period signed with a server secret (AppSecrets), so
 * the renewal emails and the update check's `renewal_url` make it without a query and nothing of
 * it is stored. A link stops working RENEWAL_LINK_DAYS after that end; once the license is
 * renewed its end moves on, and the link shows it renewed instead of charging again.
 */
export class RenewalLinks {
  constructor(
    private readonly secrets: AppSecrets,
    private readonly clock: Clock,
    private readonly page: () => string,
  ) {}

  private mac(licenseId: number, end: number): Promise<string> {
    return linkMac(this.secrets, 'renewal-link', [licenseId, end]);
  }

  /** The link renewing a term license's current period; null for a license a purchase does not renew (or a trial). */
  async url(
    license: Pick<
      LicenseTerms,
      'id' | 'status' | 'usage_expires_at' | 'subscription_id' | 'entitlement_policy' | 'trial'
    >,
  ): Promise<string | null> {
    if (license.trial || renewalTerm(license) === null) return null;
    return this.urlFor(license.id, license.usage_expires_at!);
  }

  /** The link for a license and the end of its period as stored (the renewal reminder's facts). */
  async urlFor(licenseId: number, usageExpiresAt: string): Promise<string | null> {
    const end = parseTimestamp(usageExpiresAt);
    if (end === null) return null;
    const seconds = Math.floor(end.getTime() / 1000);
    return `${this.page()}?token=${licenseId}.${seconds}.${await this.mac(licenseId, seconds)}`;
  }

  /** What a link made here names, else 400 `invalid_renewal_link`; past its time, 410 `renewal_link_expired`. */
  async verify(token: string): Promise<RenewalLinkClaim> {
    const m = token.length <= 80 ? TOKEN.exec(token) : null;
    if (!m) throw new ApiError('invalid_renewal_link');
    const licenseId = Number(m[1]);
    const end = Number(m[2]);
    if (!Number.isSafeInteger(licenseId) || !safeEqual(m[3]!, await this.mac(licenseId, end))) {
      throw new ApiError('invalid_renewal_link');
    }
    if (this.clock.now().getTime() / 1000 >= end + RENEWAL_LINK_DAYS * DAY_S) {
      throw new ApiError('renewal_link_expired');
    }
    return { license_id: licenseId, end };
  }
}
