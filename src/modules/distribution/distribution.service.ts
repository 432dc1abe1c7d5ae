import type { Clock } from '../../clock.js';
import { ApiError, type ErrorCode } from '../../http/errors.js';
import { sha256 } from '../../random.js';
import { type Product, softwareImageUrls } from '../catalogue/catalogue.model.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { normaliseDomain } from '../identity/domain.js';
import type { Identity } from '../identity/identity.js';
import { identityKey, isInstallationId } from '../identity/identity.js';
import type { LicenseLookupService } from '../licensing/license-lookup.service.js';
import type { LicenseForIdentity } from '../licensing/licensing.model.js';
import type { RenewalLinks } from '../licensing/renewal-links.js';
import { CHANNELS, channelAllows, channelRank, inRollout, isChannel } from '../releases/channels.js';
import type { Changelog, Release } from '../releases/releases.model.js';
import type { Candidate, ReleasesService } from '../releases/releases.service.js';
import type { ReleaseChannel } from '../releases/releases.tables.js';
import { isNewerVersion, versionCompare } from '../releases/version-compare.js';
import type { SettingsService } from '../settings/settings.service.js';
import {
  authorizeRelease,
  type EntitlementSubset,
  entitlementSubset,
  PUBLIC_ENTITLEMENT,
  PURPOSES,
} from './authorize.js';
import type { TokenPurpose } from './distribution.tables.js';
import { customerMessage, RENEWABLE } from './messages.js';
import { type Grant, type LicenseInput, LicenseRefusal, type Preflight } from './preflight.js';
import type { MintedToken, TokenIssuer } from './tokens.js';

export interface PackageBody extends LicenseInput {
  slug?: unknown;
  purpose?: unknown;
  current_version?: unknown;
  channel?: unknown;
  [field: string]: unknown;
}

export interface CheckInput extends LicenseInput {
  slug?: unknown;
  version?: unknown;
  channel?: unknown;
}

const PACKAGE_FIELDS = new Set([
  'slug',
  'purpose',
  'current_version',
  'license_key',
  'site_url',
  'installation_id',
  'channel',
]);

const missing = (v: unknown) => v === undefined || v === null || v === '';
const str = (v: unknown, field: string): string => {
  if (typeof v !== 'string')
    throw new ApiError('rest_invalid_param', { data: { params: { [field]: 'string' } } });
  return v;
};

/** The request's `channel`: absent (or empty) is stable; anything but a channel name is 400 `invalid_channel`. */
function askedChannel(v: unknown): ReleaseChannel {
  if (missing(v)) return 'stable';
  if (!isChannel(v))
    throw new ApiError('invalid_channel', { data: { params: { channel: CHANNELS.join(', ') } } });
  return v;
}

/**
 * Which releases a request may be given (docs/distribution.md, 'Channels and staged rollouts'):
 * the channel it is served (the one asked, narrowed to what the license allows), the license's
 * channels (null: every one) and the key that places the site in a staged rollout (null: outside
 * every rollout below 100).
 */
interface Reach {
  asked: ReleaseChannel;
  channel: ReleaseChannel;
  licensed: readonly string[] | null;
  siteKey: string | null;
}

/**
 * The site's rollout key: a protected product's installation id; for a public product the
 * installation id it sends (a UUIDv4), else the normalised domain of its `site_url`, else none.
 */
function siteKeyOf(grant: Grant, input: LicenseInput): string | null {
  if (grant.kind === 'protected') return grant.identity.installation_id;
  if (typeof input.installation_id === 'string' && isInstallationId(input.installation_id))
    return input.installation_id;
  if (typeof input.site_url === 'string' && input.site_url.trim() !== '') {
    try {
      return normaliseDomain(input.site_url);
    } catch {
      return null;
    }
  }
  return null;
}

function reachOf(grant: Grant, asked: ReleaseChannel, input: LicenseInput): Reach {
  const licensed = grant.kind === 'protected' ? grant.evaluation.channels : null;
  let channel = asked;
  // Narrowed to the least stable channel the license lists that is no less stable than the one
  // asked; stable is always allowed.
  if (licensed !== null) {
    while (channel !== 'stable' && !licensed.includes(channel)) channel = CHANNELS[channelRank(channel) - 1]!;
  }
  return { asked, channel, licensed, siteKey: siteKeyOf(grant, input) };
}

/** Whether the request reaches a release: its channel, then (hashing only below 100) its rollout. */
function reaches(reach: Reach, release: Release): boolean {
  const channel = release.channel;
  if (channel !== 'stable') {
    if (!channelAllows(reach.channel, channel)) return false;
    if (reach.licensed !== null && !reach.licensed.includes(channel)) return false;
  }
  return (
    release.rollout_percent >= 100 || inRollout(release.version_id, release.rollout_percent, reach.siteKey)
  );
}

/** True when some candidate is not a stable release fully rolled out (else no filter is needed). */
const staged = (candidates: readonly Candidate[]): boolean =>
  candidates.some((c) => c.release.channel !== 'stable' || c.release.rollout_percent < 100);

/**
 * For a site on rc, beta or alpha: the highest version first (PHP version_compare), the more
 * stable channel first among equal versions, then candidate order (the sort is stable).
 */
function byVersion(candidates: readonly Candidate[]): Candidate[] {
  return [...candidates].sort(
    (a, b) =>
      versionCompare(b.release.version, a.release.version) ||
      channelRank(a.release.channel) - channelRank(b.release.channel),
  );
}

/** A stable site's reach when nothing else is known (the refusal's `available_version`). */
const STABLE_PUBLIC: Reach = { asked: 'stable', channel: 'stable', licensed: null, siteKey: null };

/** A public product's site: the identity key of the pair it sends, else a hash of its address. */
function publicSite(input: CheckInput, ip: string): string {
  const id = input.installation_id;
  const url = input.site_url;
  if (typeof id === 'string' && typeof url === 'string' && isInstallationId(id)) {
    try {
      return identityKey(id, normaliseDomain(url));
    } catch {
      // Not a domain: the address stands for the site.
    }
  }
  return sha256(`ip|${ip}`);
}

/** The effective publication time: published_at, falling back to release_date. */
const releaseDate = (r: Release) => r.published_at ?? r.release_date;

function narrativeOf(c: Changelog | null): string {
  if (c === null) return '';
  return typeof c === 'string' ? c : c.narrative;
}

/**
 * What WordPress shows of the release being offered (docs/distribution.md, 'Release metadata'):
 * the release's own fields, the name falling back to the product's, and the product's icon and
 * banner as absolute URLs on the store's public origin (the product row already read carries them).
 */
function shown(release: Release | null, product: Product, origin: string) {
  return {
    name: release?.name ?? product.name,
    icons: softwareImageUrls(origin, 'icon', product.icon),
    banners: softwareImageUrls(origin, 'banner', product.banner),
    description: release?.description ?? null,
    homepage: release?.homepage ?? null,
    author: release?.author ?? null,
    requires: release?.requires ?? null,
    tested: release?.tested ?? null,
    requires_php: release?.requires_php ?? null,
  };
}

/**
 * A product the storefront sells: its page `/products/<slug>` shows it (published, with a slug)
 * and it has a price to pay. A product priced 0 is sold elsewhere, if anywhere (the setting
 * `renewal_url`).
 */
const soldOnStorefront = (p: Product): boolean =>
  p.status === 'publish' && !!p.slug && (p.price_minor > 0 || p.variations.some((v) => v.price_minor > 0));

/** A valid term license's check answer carries its renewal link from this many days before its end. */
export const RENEWAL_SOON_DAYS = 30;

/** A licensed site's grant: what the check's `issue` option is given. */
export type ProtectedGrant = Extract<Grant, { kind: 'protected' }>;

/** What candidate selection found (docs/distribution.md, 'Which release'). */
type Selection = { release: Release } | { error: ErrorCode; status?: number; available?: Release };

/**
 * Server-selected package issuance, update checks, the public changelog and gated external links
 * (docs/distribution.md). Redemption of tokens lives in download.service.ts.
 */
export class DistributionService {
  constructor(
    private readonly preflight: Preflight,
    private readonly catalogue: CatalogueService,
    private readonly releases: ReleasesService,
    private readonly tokens: TokenIssuer,
    private readonly licenses: Pick<LicenseLookupService, 'hasLicenseFor'>,
    private readonly urls: { base: () => string; origin: () => string },
    private readonly settings: Pick<SettingsService, 'get'>,
    private readonly renewalLinks: Pick<RenewalLinks, 'url'>,
    private readonly clock: Pick<Clock, 'now'>,
  ) {}

  // ---- what a vendor can show (docs/distribution.md, 'Messages a vendor can show') ----

  /**
   * A term license's one-click renewal link (signed, no query: docs/selling.md, 'Renewals'), else
   * the storefront's page of the product when it sells it there, else the setting `renewal_url`.
   */
  private async renewalUrl(product: Product, license?: LicenseForIdentity): Promise<string | null> {
    const link = license ? await this.renewalLinks.url(license) : null;
    if (link) return link;
    if (soldOnStorefront(product)) return `${this.urls.origin()}/products/${product.slug}`;
    return (await this.settings.get()).renewal_url ?? null;
  }

  /**
   * A term license that ends within RENEWAL_SOON_DAYS: its renewal link, so that a site can offer
   * the renewal before the end (docs/distribution.md, 'Messages a vendor can show'); otherwise
   * null (not a promise: the common answer). A date comparison on every check, and an HMAC only
   * for those licenses.
   */
  private renewalSoon(grant: Grant): Promise<string | null> | null {
    if (grant.kind !== 'protected' || grant.license.usage_expires_at === null) return null;
    const end = Date.parse(grant.license.usage_expires_at);
    if (!(end - this.clock.now().getTime() <= RENEWAL_SOON_DAYS * 86_400_000)) return null;
    return this.renewalLinks.url(grant.license);
  }

  /**
   * A refusal of the package route or the update check with what the customer can be shown:
   * `message` from the one catalogue (messages.ts), and in `data`, `renewal_url` and
   * `available_version` (null when buying or renewing would not help, or nothing newer exists).
   * `input` is the request's body or query: the product and the running version are read from it
   * again, because a refusal may come before either was resolved. Errors that are not the
   * service's (an unexpected failure) are given back unchanged, for the error handler to log.
   */
  async explain(error: unknown, input: unknown, route: 'check' | 'package'): Promise<unknown> {
    if (!(error instanceof ApiError) || error.shape !== 'rest') return error;
    const fields = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
    const renewable =
      RENEWABLE.has(error.code) && !(error.code === 'no_eligible_release' && error.status === 404);
    let availableVersion: string | null = null;
    let renewalUrl: string | null = null;
    if (renewable && typeof fields.slug === 'string' && fields.slug !== '') {
      try {
        const products = await this.catalogue.findPublishedBySlug(fields.slug);
        const product = products.length === 1 ? products[0]! : null;
        if (product) {
          // The check names the running version `version`; an install or reinstall takes any version.
          const current =
            route === 'check' ? fields.version : fields.purpose === 'update' ? fields.current_version : null;
          availableVersion = await this.availableVersion(
            product.id,
            typeof current === 'string' ? current : null,
          );
          renewalUrl = await this.renewalUrl(
            product,
            error instanceof LicenseRefusal && error.license.product_id === product.id
              ? error.license
              : undefined,
          );
        }
      } catch {
        // The refusal stands without its links: a failed lookup must not turn it into a 500.
        availableVersion = null;
        renewalUrl = null;
      }
    }
    return new ApiError(error.code, {
      status: error.status,
      message: customerMessage(error.code, error.message, availableVersion, error.status),
      data: { ...error.data, renewal_url: renewalUrl, available_version: availableVersion },
    });
  }

  /** The version a license could take: the first valid candidate, newer than `current` when given. */
  private async availableVersion(productId: number, current: string | null): Promise<string | null> {
    for (const { release, problem } of await this.releases.issuanceCandidates(productId)) {
      if (problem || release.status !== 'published' || !reaches(STABLE_PUBLIC, release)) continue;
      if (current !== null && !isNewerVersion(release.version, current)) continue;
      return release.version;
    }
    return null;
  }

  // ---- POST /software/package ----

  async package(body: PackageBody, ip: string) {
    const settings = await this.preflight.requireModule();
    if (missing(body.slug) || missing(body.purpose)) throw new ApiError('missing_params');
    const unknown = Object.keys(body).filter((k) => !PACKAGE_FIELDS.has(k));
    if (unknown.length > 0) {
      throw new ApiError('unsupported_parameter', {
        data: { params: Object.fromEntries(unknown.map((k) => [k, 'unsupported'])) },
      });
    }
    const slug = str(body.slug, 'slug');
    const purpose = body.purpose as TokenPurpose;
    if (!PURPOSES.includes(purpose)) throw new ApiError('invalid_purpose');
    let current: string | null = null;
    if (purpose === 'update') {
      if (typeof body.current_version !== 'string' || body.current_version === '')
        throw new ApiError('current_version_required');
      current = body.current_version;
    } else if (Object.hasOwn(body, 'current_version')) {
      throw new ApiError('current_version_not_allowed');
    }
    const asked = askedChannel(body.channel);
    const grant = await this.preflight.resolve(settings, { slug }, body, ip);
    const reach = reachOf(grant, asked, body);
    const selection = await this.select(grant, purpose, current, reach);
    if ('error' in selection) throw new ApiError(selection.error, { status: selection.status });
    return this.packageResponse(grant, selection.release, purpose, reach);
  }

  private async packageResponse(grant: Grant, release: Release, purpose: TokenPurpose, reach: Reach) {
    const product = grant.product;
    const external = release.manual_download_only;
    const token: MintedToken | null = external ? null : await this.tokens.mint(grant, release, purpose);
    return {
      success: true as const,
      purpose,
      product: { id: product.id, name: product.name, slug: product.slug ?? '' },
      version_id: release.version_id,
      version: release.version,
      artifact_download_id: release.artifact_download_id,
      file_name: release.file_name,
      file_size: release.file_size,
      file_sha256: release.file_sha256,
      signature: release.signature,
      signing_key_id: release.signing_key_id,
      signed_at: release.signed_at,
      release_date: releaseDate(release),
      manual_download_only: external,
      download_url: token?.download_url ?? null,
      token_expires_at: token?.token_expires_at ?? null,
      token_binding_version: token?.token_binding_version ?? null,
      ...(external ? { external_link_url: this.externalLinkUrl(product.id, release.version_id) } : {}),
      entitlement: this.entitlementOf(grant),
      channel: reach.channel,
      channel_reason: reach.channel === reach.asked ? null : ('not_entitled' as const),
      release_channel: release.channel,
      ...shown(release, product, this.urls.origin()),
    };
  }

  private externalLinkUrl(productId: number, versionId: number) {
    return `${this.urls.base()}/software/products/${productId}/versions/${versionId}/external-link`;
  }

  private entitlementOf(grant: Grant): EntitlementSubset {
    return grant.kind === 'public' ? PUBLIC_ENTITLEMENT : entitlementSubset(grant.evaluation.entitlements);
  }

  /**
   * The first candidate (current first, newest publication, highest id; for a site on rc, beta or
   * alpha the highest version first) that the request reaches (its channel and the release's
   * rollout), is newer for an update, has a valid artifact and, for a protected product, is
   * entitled. 404 when there is nothing to choose from; 403 when everything failed, naming the
   * authorization error if any.
   */
  private async select(
    grant: Grant,
    purpose: TokenPurpose,
    current: string | null,
    reach: Reach,
  ): Promise<Selection> {
    let candidates = await this.releases.issuanceCandidates(grant.product.id);
    if (current !== null) candidates = candidates.filter((c) => isNewerVersion(c.release.version, current));
    // A release the request does not reach is left out as if it did not exist; a store whose
    // releases are all stable and fully rolled out skips this (and every hash) entirely.
    if (staged(candidates)) candidates = candidates.filter((c) => reaches(reach, c.release));
    if (reach.channel !== 'stable' && candidates.length > 1) candidates = byVersion(candidates);
    if (candidates.length === 0) return { error: 'no_eligible_release', status: 404 };
    let authError: ErrorCode | null = null;
    let available: Release | undefined;
    for (const { release, problem } of candidates) {
      if (release.product_id !== grant.product.id || release.status !== 'published') continue;
      if (problem) continue;
      available ??= release;
      if (grant.kind === 'protected') {
        const problem = authorizeRelease(
          grant.evaluation.entitlements,
          release,
          grant.license.product_id,
          purpose,
        );
        if (problem) {
          authError ??= problem;
          continue;
        }
      }
      return { release };
    }
    return authError
      ? { error: authError, available }
      : { error: 'no_eligible_release', status: 403, available };
  }

  // ---- GET|POST /software/check ----

  /**
   * `seen`, when given, is told the product and the site of an answered check (the installed-base report,
   * docs/distribution.md, 'What runs in the field'): the identity key of a licensed site; for a
   * public product, the key of the identity it sends, else a hash of its address; and the request's
   * fields, which say what the site runs.
   */
  async check(
    input: CheckInput,
    ip: string,
    seen?: (productId: number, site: string, input: CheckInput) => void,
    /** A site known by its URL alone (src/modules/legacy; Preflight.resolve). */
    legacy?: Identity,
    /**
     * In place of minting a token for a licensed site's eligible release: what its
     * `download_url` is made of instead (the signed package link of src/modules/legacy, which
     * mints at download time through updateTokenFor). Never given by the check's own routes.
     */
    issue?: (grant: ProtectedGrant, release: Release) => Promise<MintedToken>,
  ) {
    const settings = this.preflight.cachedModule() ?? (await this.preflight.requireModule());
    if (missing(input.slug) || input.version === undefined || input.version === null)
      throw new ApiError('missing_params');
    const slug = str(input.slug, 'slug');
    const current = str(input.version, 'version');
    if (current === '') throw new ApiError('current_version_required');
    const asked = askedChannel(input.channel);
    const grant = await this.preflight.resolve(settings, { slug }, input, ip, legacy);
    const reach = reachOf(grant, asked, input);
    const selection = await this.select(grant, 'update', current, reach);
    const eligible = 'release' in selection ? selection.release : null;
    const available = eligible ?? ('available' in selection ? (selection.available ?? null) : null);
    const offered = available;
    const local = eligible !== null && !eligible.manual_download_only;
    const token = local
      ? await (issue && grant.kind === 'protected'
          ? issue(grant, eligible)
          : this.tokens.mint(grant, eligible, 'update'))
      : null;
    const product = grant.product;
    const reason = eligible || !available ? null : 'error' in selection ? selection.error : null;
    const renewable = reason !== null && RENEWABLE.has(reason);
    const origin = this.urls.origin();
    // Null, with no promise to wait for, for the common answer: a license far from its end.
    const soon = renewable ? null : this.renewalSoon(grant);
    if (seen)
      seen(
        product.id,
        grant.kind === 'protected' ? grant.identity.identity_key : publicSite(input, ip),
        input,
      );
    return {
      success: true as const,
      update_available: eligible !== null,
      available: available !== null,
      eligible: eligible !== null,
      update_eligible: eligible !== null,
      product: { id: product.id, name: product.name, slug: product.slug ?? '' },
      current_version: current,
      latest_version: eligible?.version ?? available?.version ?? current,
      available_version: available?.version ?? null,
      eligible_version: eligible?.version ?? null,
      eligibility_reason: reason,
      changelog: offered ? narrativeOf(offered.changelog) : '',
      release_date: offered ? releaseDate(offered) : null,
      file_size: offered?.file_size ?? null,
      file_sha256: offered?.file_sha256 ?? null,
      signature: offered?.signature ?? null,
      signing_key_id: offered?.signing_key_id ?? null,
      signed_at: offered?.signed_at ?? null,
      download_url: token?.download_url ?? null,
      token_expires_at: token?.token_expires_at ?? null,
      token_binding_version: token?.token_binding_version ?? null,
      manual_download_only: offered?.manual_download_only ?? false,
      entitlement: this.entitlementOf(grant),
      changelog_url: `${this.urls.base()}/software/changelog?slug=${encodeURIComponent(slug)}`,
      message:
        reason === null
          ? null
          : customerMessage(reason, new ApiError(reason).message, available?.version ?? null),
      renewal_url: renewable
        ? await this.renewalUrl(product, grant.kind === 'protected' ? grant.license : undefined)
        : soon === null
          ? null
          : await soon,
      // Written out rather than spread from shown(): every check answers them, and each property
      // added after a spread costs about a microsecond (docs/performance.md, 'Object literals').
      name: offered?.name ?? product.name,
      icons: softwareImageUrls(origin, 'icon', product.icon),
      banners: softwareImageUrls(origin, 'banner', product.banner),
      description: offered?.description ?? null,
      homepage: offered?.homepage ?? null,
      author: offered?.author ?? null,
      requires: offered?.requires ?? null,
      tested: offered?.tested ?? null,
      requires_php: offered?.requires_php ?? null,
      channel: reach.channel,
      channel_reason: reach.channel === asked ? null : ('not_entitled' as const),
      release_channel: offered?.channel ?? null,
      // The one optional field last, so that no property follows a spread.
      ...(eligible?.manual_download_only
        ? { external_link_url: this.externalLinkUrl(product.id, eligible.version_id) }
        : {}),
    };
  }

  /**
   * A fresh single-use update token for one release, for a site known by its URL alone: what the
   * signed package link of the updaters in the field mints when it is downloaded (src/modules/legacy,
   * docs/migrating.md). First the update check's preflight (its issuance limits, the product, the
   * license and that site's activation, which must still be `activationId`, else 403
   * `domain_not_activated`), then the release as the account's download checks one: of the product
   * (404 `release_not_found`), published (410 `release_withdrawn` / `release_not_published`), not an
   * external link, its artifact without a problem, and entitled to the license; then minted as the
   * update check mints it.
   */
  async updateTokenFor(
    product: Product,
    licenseKey: string,
    site: Identity,
    activationId: number,
    releaseId: number,
    ip: string,
  ): Promise<MintedToken> {
    const settings = await this.preflight.requireModule();
    const grant = await this.preflight.resolve(settings, { product }, { license_key: licenseKey }, ip, site);
    if (grant.kind !== 'protected' || grant.activationId !== activationId) {
      throw new ApiError('domain_not_activated');
    }
    const release = await this.releases.getRelease(releaseId);
    if (!release || release.product_id !== product.id) throw new ApiError('release_not_found');
    this.releases.assertPublished(release);
    if (release.manual_download_only) throw new ApiError('updater_external_link_prohibited');
    const problem = await this.releases.candidateProblem(release);
    if (problem) throw new ApiError(problem);
    const denied = authorizeRelease(
      grant.evaluation.entitlements,
      release,
      grant.license.product_id,
      'update',
    );
    if (denied) throw new ApiError(denied);
    return this.tokens.mint(grant, release, 'update');
  }

  // ---- GET /software/changelog ----

  async changelog(query: { slug?: string; version?: string }) {
    if (!query.slug) throw new ApiError('missing_slug');
    const products = await this.catalogue.findPublishedBySlug(query.slug);
    if (products.length === 0) throw new ApiError('product_not_found');
    if (products.length > 1) throw new ApiError('software_slug_ambiguous');
    const product = products[0]!;
    let releases: Release[];
    if (query.version !== undefined) {
      const one = await this.releases.findPublishedVersion(product.id, query.version);
      if (!one) throw new ApiError('version_not_found');
      releases = [one];
    } else {
      releases = await this.releases.listPublishedCandidates(product.id);
    }
    const origin = this.urls.origin();
    return {
      slug: query.slug,
      versions: releases.map((r) => ({
        version: r.version,
        release_date: releaseDate(r),
        changelog:
          r.changelog !== null && typeof r.changelog === 'object'
            ? { narrative: r.changelog.narrative, points: r.changelog.points }
            : { narrative: r.changelog ?? '', points: [] },
        download_count: r.download_count,
        file_size: r.file_size ?? 0,
        file_sha256: r.file_sha256,
        signature: r.signature,
        signing_key_id: r.signing_key_id,
        signed_at: r.signed_at,
        channel: r.channel,
        ...shown(r, product, origin),
      })),
    };
  }

  // ---- GET external-link ----

  async externalLink(
    productId: number,
    versionId: number,
    query: LicenseInput & { purpose?: string },
    caller: { ip: string; user: { id: number; role: string } | null },
  ) {
    const settings = await this.preflight.requireModule();
    const purpose = (
      query.purpose === undefined || query.purpose === '' ? 'reinstall' : query.purpose
    ) as TokenPurpose;
    if (!PURPOSES.includes(purpose)) throw new ApiError('invalid_purpose');
    const product: Product | null = await this.catalogue.getProduct(productId);
    const grant = await this.preflight.resolve(settings, { product }, query, caller.ip);
    const release = await this.releases.getRelease(versionId);
    if (!release || release.product_id !== productId) throw new ApiError('release_not_found');
    this.releases.assertPublished(release);
    // A driver we do not know is neither local nor external: say so rather than guess.
    const problem = await this.releases.candidateProblem(release);
    if (problem === 'unsupported_storage_driver') throw new ApiError(problem);
    if (!release.manual_download_only) throw new ApiError('not_external_version');
    if (problem) throw new ApiError(problem);
    if (grant.kind === 'protected') {
      const denied = authorizeRelease(
        grant.evaluation.entitlements,
        release,
        grant.license.product_id,
        purpose,
      );
      if (denied) throw new ApiError(denied);
    } else {
      if (!caller.user) throw new ApiError('authentication_required');
      if (
        caller.user.role !== 'administrator' &&
        !(await this.licenses.hasLicenseFor(caller.user.id, productId))
      ) {
        throw new ApiError('customer_not_entitled');
      }
    }
    return {
      success: true as const,
      download_url: release.external_url!,
      version: release.version,
      file_name: release.file_name,
      file_sha256: release.file_sha256,
      purpose,
      manual_download: true as const,
    };
  }
}
