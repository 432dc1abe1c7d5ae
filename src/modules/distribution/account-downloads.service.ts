import type { Clock } from '../../clock.js';
import { ApiError, type ErrorCode } from '../../http/errors.js';
import { isPublicProduct } from '../catalogue/catalogue.model.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { evaluateLicense } from '../licensing/entitlements.js';
import { factsOf } from '../licensing/license.view.js';
import type { LicenseLookupService } from '../licensing/license-lookup.service.js';
import type { LicenseRecord } from '../licensing/licensing.model.js';
import type { Release } from '../releases/releases.model.js';
import type { Candidate, ReleasesService } from '../releases/releases.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { authorizeRelease } from './authorize.js';
import type { Preflight } from './preflight.js';
import type { MintedToken, TokenIssuer } from './tokens.js';

/** What the Downloads page shows of a release. */
export interface DownloadRelease {
  version_id: number;
  version: string;
  /** The effective publication time: published_at, else release_date. */
  release_date: string | null;
  file_name: string;
  file_size: number | null;
}

/**
 * One row of the account's Downloads page (docs/storefront.md, 'Downloads'): a license of a
 * protected software product and the release it may install now, or why it may not.
 * - `ready`: `release` is a local release the license is entitled to install (Download mints an
 *   account token for it);
 * - `external`: the entitled release is an external link, which needs a site identity
 *   (docs/distribution.md, '5. External links'): the customer downloads it from the vendor's site;
 * - `refused`: `code` says why (`revoked`, `expired`, `subscription_inactive`, `license_inactive`,
 *   `invalid_usage_expiry`, `licensing_unavailable`, `release_not_entitled`, `no_eligible_release`,
 *   …); `release` is then the newest published release, if there is one.
 */
export interface AccountDownload {
  license_id: number;
  license_key: string;
  product: { id: number; name: string; slug: string | null };
  variation_name: string | null;
  state: 'ready' | 'external' | 'refused';
  code: ErrorCode | null;
  release: DownloadRelease | null;
}

const releaseDate = (r: Release) => r.published_at ?? r.release_date;

const shown = (r: Release): DownloadRelease => ({
  version_id: r.version_id,
  version: r.version,
  release_date: releaseDate(r),
  file_name: r.file_name,
  file_size: r.file_size,
});

/**
 * A signed-in customer's downloads of what they bought, without a site (docs/storefront.md,
 * 'Downloads'): the list of their licenses with the release each may install, and the mint of an
 * account token (docs/distribution.md, 'What a token is bound to'), which re-checks everything the
 * list showed. The token is then redeemed by GET /software/download like any other.
 */
export class AccountDownloadsService {
  constructor(
    private readonly catalogue: Pick<CatalogueService, 'softwareStatuses' | 'softwareStatus'>,
    private readonly releases: Pick<
      ReleasesService,
      'issuanceCandidates' | 'getRelease' | 'candidateProblem'
    >,
    private readonly licenses: Pick<LicenseLookupService, 'ownedBy' | 'record'>,
    private readonly settings: SettingsService,
    private readonly tokens: TokenIssuer,
    private readonly clock: Clock,
    private readonly limits: Pick<Preflight, 'limitLicense'>,
  ) {}

  /**
   * For each of the customer's licenses whose product is a published, distributing, protected
   * product, oldest license first: the newest release (in the package's candidate order,
   * docs/distribution.md 'Which release') it is entitled to install, or why not. Three reads for
   * the whole page, whatever the number of licenses: the licenses (with their terms), their
   * products' switches, and the products' candidates (one statement on PostgreSQL, where the calls
   * of one turn are batched; kept in memory on SQLite while no release changes).
   */
  async accountDownloads(userId: number): Promise<AccountDownload[]> {
    const settings = await this.settings.get();
    if (!settings.software_enabled) throw new ApiError('module_disabled');
    const owned = await this.licenses.ownedBy(userId);
    if (owned.length === 0) return [];
    const products = new Map(
      (await this.catalogue.softwareStatuses([...new Set(owned.map((l) => l.product_id))])).map((p) => [
        p.id,
        p,
      ]),
    );
    const listed = owned.filter((l) => {
      const p = products.get(l.product_id);
      return p?.status === 'publish' && p.software_enabled === 'yes' && !isPublicProduct(p);
    });
    const ids = [...new Set(listed.map((l) => l.product_id))];
    const candidates = new Map(
      await Promise.all(ids.map(async (id) => [id, await this.releases.issuanceCandidates(id)] as const)),
    );
    const now = this.clock.now();
    return listed.map((l) => rowOf(l, candidates.get(l.product_id) ?? [], settings.licensing_enabled, now));
  }

  /**
   * Mints an account token for the customer's license and one release, after the checks the
   * download will make again (docs/distribution.md, 'Account downloads'), first failure wins:
   * `module_disabled`; `license_not_found` (unknown, or another customer's: the same answer);
   * `software_product_unavailable` (unpublished or not distributing); `license_policy_changed`
   * (the product is public now); `licensing_unavailable`; the license's effective status
   * (`revoked`, `expired`, …); `release_not_found` (unknown, or of another product);
   * `release_withdrawn` / `release_not_published`; `updater_external_link_prohibited` (an external
   * link); the artifact's problem; the authorization (`release_not_entitled`, …).
   */
  async mintAccountToken(
    userId: number,
    licenseId: number,
    releaseId: number,
    ip: string,
  ): Promise<MintedToken> {
    const settings = await this.settings.get();
    if (!settings.software_enabled) throw new ApiError('module_disabled');
    const license = await this.licenses.record(licenseId);
    if (!license || license.user_id !== userId) throw new ApiError('license_not_found');
    // Each click mints a token: counted in the license's issuance bucket, as an update check is.
    await this.limits.limitLicense(settings, license.id, ip);
    const product = await this.catalogue.softwareStatus(license.product_id);
    if (product?.status !== 'publish' || product.software_enabled !== 'yes') {
      throw new ApiError('software_product_unavailable');
    }
    if (isPublicProduct(product)) throw new ApiError('license_policy_changed');
    if (!settings.licensing_enabled) throw new ApiError('licensing_unavailable');
    const ev = evaluateLicense(factsOf(license), this.clock.now());
    if (ev.effective_status !== 'valid') throw new ApiError(ev.effective_status);
    const release = await this.releases.getRelease(releaseId);
    if (!release || release.product_id !== license.product_id) throw new ApiError('release_not_found');
    if (release.status !== 'published') {
      throw new ApiError(release.status === 'withdrawn' ? 'release_withdrawn' : 'release_not_published');
    }
    if (release.manual_download_only) throw new ApiError('updater_external_link_prohibited');
    const problem = await this.releases.candidateProblem(release);
    if (problem) throw new ApiError(problem);
    const denied = authorizeRelease(ev.entitlements, release, license.product_id, 'install');
    if (denied) throw new ApiError(denied);
    return this.tokens.mintForAccount(
      { productId: license.product_id, licenseId: license.id, userId },
      release,
    );
  }
}

/** One license's row: its effective status, then the first entitled candidate (package's order). */
function rowOf(
  l: LicenseRecord,
  candidates: readonly Candidate[],
  licensingEnabled: boolean,
  now: Date,
): AccountDownload {
  const row = (state: AccountDownload['state'], code: ErrorCode | null, release: Release | undefined) => ({
    license_id: l.id,
    license_key: l.license_key,
    product: { id: l.product_id, name: l.product_name ?? '', slug: l.product_slug },
    variation_name: l.variation_name,
    state,
    code,
    release: release ? shown(release) : null,
  });
  let available: Release | undefined;
  const valid: Release[] = [];
  for (const { release, problem } of candidates) {
    if (release.product_id !== l.product_id || release.status !== 'published' || problem) continue;
    // What every stable site is offered: no test channel, no release still rolling out
    // (docs/distribution.md, 'Channels and staged rollouts').
    if (release.channel !== 'stable' || release.rollout_percent < 100) continue;
    available ??= release;
    valid.push(release);
  }
  if (!licensingEnabled) return row('refused', 'licensing_unavailable', available);
  const ev = evaluateLicense(factsOf(l), now);
  if (ev.effective_status !== 'valid') return row('refused', ev.effective_status, available);
  let denied: ErrorCode | null = null;
  for (const release of valid) {
    const problem = authorizeRelease(ev.entitlements, release, l.product_id, 'install');
    if (problem) {
      denied ??= problem;
      continue;
    }
    return release.manual_download_only ? row('external', null, release) : row('ready', null, release);
  }
  return row('refused', denied ?? 'no_eligible_release', available);
}
