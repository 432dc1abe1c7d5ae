import type { Clock } from '../../clock.js';
import type { AppSecrets } from '../../db/app-secrets.js';
import { ApiError } from '../../http/errors.js';
import { safeEqual } from '../../random.js';
import { linkMac } from '../licensing/renewal-links.js';

/**
 * How long a package link works: longer than WordPress keeps an update offer (12 hours in its
 * `update_plugins` transient) and EDD_SL_Plugin_Updater its answer (3 hours), so that *Update now*
 * clicked from any offer still shown installs (docs/migrating.md, 'The package link').
 */
export const PACKAGE_LINK_HOURS = 24;
const KIND = 'edd-package';
const ID = /^[1-9][0-9]{0,9}$/;
const EXPIRES = /^[1-9][0-9]{0,11}$/;
const MAC = /^[A-Za-z0-9_-]{43}$/;

/** What a package link names: the site's activation, the release, and when the link ends (epoch seconds). */
export interface PackageLinkClaim {
  activation_id: number;
  release_id: number;
  expires: number;
}

/**
 * The `package` that get_version answers the updaters in the field with:
 * `/edd-sl/package?a=<activation id>&r=<release id>&e=<expiry, epoch seconds>&s=<HMAC>`, signed
 * with the store's link secret (linkMac), naming no license key, stored nowhere. It is not a
 * download token: opening it checks everything again and mints one (LegacyService.package).
 */
export class PackageLinks {
  constructor(
    private readonly secrets: AppSecrets,
    private readonly clock: Pick<Clock, 'now'>,
    private readonly page: () => string,
  ) {}

  /** The link for the activation and the release, valid PACKAGE_LINK_HOURS from now. */
  async url(activationId: number, releaseId: number): Promise<{ url: string; expires: Date }> {
    const expires = Math.floor(this.clock.now().getTime() / 1000) + PACKAGE_LINK_HOURS * 3600;
    const mac = await linkMac(this.secrets, KIND, [activationId, releaseId, expires]);
    return {
      url: `${this.page()}?a=${activationId}&r=${releaseId}&e=${expires}&s=${mac}`,
      expires: new Date(expires * 1000),
    };
  }

  /**
   * What a link made here names. Anything else (a field missing, repeated, of another form, or a
   * signature that does not match) is 403 `invalid_package_link`; a link past its time, 410
   * `package_link_expired`.
   */
  async verify(query: Record<string, unknown>): Promise<PackageLinkClaim> {
    const { a, r, e, s } = query;
    if (
      typeof a !== 'string' ||
      typeof r !== 'string' ||
      typeof e !== 'string' ||
      typeof s !== 'string' ||
      !ID.test(a) ||
      !ID.test(r) ||
      !EXPIRES.test(e) ||
      !MAC.test(s)
    ) {
      throw new ApiError('invalid_package_link');
    }
    const claim = { activation_id: Number(a), release_id: Number(r), expires: Number(e) };
    const mac = await linkMac(this.secrets, KIND, [claim.activation_id, claim.release_id, claim.expires]);
    if (!safeEqual(s, mac)) throw new ApiError('invalid_package_link');
    if (this.clock.now().getTime() / 1000 >= claim.expires) throw new ApiError('package_link_expired');
    return claim;
  }
}
