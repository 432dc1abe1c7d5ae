import { createHash } from 'node:crypto';
import { type Clock, mysqlTime } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import type { Product } from '../catalogue/catalogue.model.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { DistributionService } from '../distribution/distribution.service.js';
import { BINDING_VERSION } from '../distribution/tokens.js';
import { type Identity, isUrlOnly, legacyIdentity } from '../identity/identity.js';
import type { ActivationService, CallerMeta } from '../licensing/activation.service.js';
import { type EffectiveStatus, evaluateLicense } from '../licensing/entitlements.js';
import { factsOf, resolveActivationLimit } from '../licensing/license.view.js';
import type { LicenseLookupService } from '../licensing/license-lookup.service.js';
import type { LicenseForIdentity } from '../licensing/licensing.model.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { PackageLinkClaim, PackageLinks } from './package-links.js';

/**
 * The compatibility API of the updaters already in the field: Easy Digital Downloads Software
 * Licensing's `edd_action` calls, answered as the old store answered them, so that sites running
 * `EDD_SL_Plugin_Updater` keep activating and updating when the old store's URL points at
 * Tollgate (docs/migrating.md, 'Sites already in the field'). Only for products whose owner turned
 * `legacy_api` on: such an updater names a site by its URL alone (legacyIdentity), a weaker identity
 * than Tollgate's. Everything else is Tollgate's own: the seat is the license's activation for that
 * domain, the update is the update check's answer, and the package a signed link (PackageLinks)
 * that, when the site downloads it, re-checks everything and redirects to a fresh single-use
 * download token bound to the license, that activation and the release.
 */

export const EDD_ACTIONS = [
  'activate_license',
  'deactivate_license',
  'check_license',
  'get_version',
  'get_versions',
] as const;
export type EddAction = (typeof EDD_ACTIONS)[number];

/** One call's fields, as form fields or query parameters (all text, as the updaters send them). */
export type EddParams = Record<string, string | undefined>;

/** The license states EDD's answers name (its `license` field). */
type EddLicenseState = 'valid' | 'invalid' | 'expired' | 'disabled' | 'site_inactive' | 'inactive';

/** An EDD answer: always 200, `success` and EDD's words for what went wrong. */
export type EddAnswer = Record<string, unknown>;

/** Longest text accepted in a field: a key is 32 to 64 characters, a URL a few hundred. */
const MAX_FIELD = 2048;

/** How Tollgate's effective statuses read in EDD's words. */
function eddState(status: EffectiveStatus): EddLicenseState {
  switch (status) {
    case 'valid':
      return 'valid';
    case 'domain_not_activated':
      return 'site_inactive';
    case 'expired':
    case 'trial_ended':
      return 'expired';
    case 'revoked':
    case 'license_inactive':
      return 'disabled';
    default:
      return 'invalid';
  }
}

/** EDD's expiry: `lifetime`, or `Y-m-d H:i:s` in UTC. */
function eddExpires(usageExpiresAt: string | null): string {
  if (usageExpiresAt === null) return 'lifetime';
  const t = new Date(usageExpiresAt);
  if (Number.isNaN(t.getTime())) return usageExpiresAt;
  return t.toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * PHP's serialize() of an array of strings: how EDD sends `sections`, `banners` and `icons`. Every
 * EDD_SL_Plugin_Updater passes them through maybe_unserialize() to get the arrays WordPress
 * expects; older versions then index them as arrays (`$response->sections['changelog']`), which
 * is a fatal error on the object a JSON object would decode to. Lengths are in bytes, as PHP's.
 */
function phpStrings(map: Record<string, string | undefined>): string {
  const str = (s: string) => `s:${Buffer.byteLength(s, 'utf8')}:"${s}";`;
  const entries = Object.entries(map).filter((e): e is [string, string] => e[1] !== undefined);
  return `a:${entries.length}:{${entries.map(([k, v]) => str(k) + str(v)).join('')}}`;
}

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export class LegacyService {
  constructor(
    private readonly catalogue: Pick<CatalogueService, 'getProduct' | 'findPublishedByName'>,
    private readonly activations: ActivationService,
    private readonly lookup: LicenseLookupService,
    private readonly distribution: DistributionService,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly links: PackageLinks,
  ) {}

  /** Answers one `edd_action` call; null when the action is not one of EDD's (the caller's 400). */
  async answer(action: string, params: EddParams, caller: CallerMeta): Promise<EddAnswer | null> {
    for (const value of Object.values(params)) {
      if (value !== undefined && value.length > MAX_FIELD) throw new ApiError('invalid_parameters');
    }
    switch (action) {
      case 'activate_license':
        return this.activate(params, caller);
      case 'deactivate_license':
        return this.deactivate(params);
      case 'check_license':
        return this.check(params);
      case 'get_version':
        return this.version(params, caller.ip);
      case 'get_versions':
        return this.versions(params, caller.ip);
      default:
        return null;
    }
  }

  // ---- the product the call names ----

  /**
   * The product of `item_id` (else `item_name`), if its owner turned the compatibility API on;
   * null otherwise, which EDD answers as an item it does not sell.
   */
  private async item(params: EddParams): Promise<Product | null> {
    const id = params.item_id;
    let product: Product | null = null;
    if (id !== undefined && /^[1-9][0-9]{0,9}$/.test(id) && Number(id) <= 2147483647) {
      product = await this.catalogue.getProduct(Number(id));
    } else if (params.item_name) {
      product = await this.catalogue.findPublishedByName(params.item_name);
    }
    if (product?.status !== 'publish' || !product.legacy_api) return null;
    return product;
  }

  /** EDD's error for a call naming no product it sells: by id, or by name. */
  private static unknownItem(params: EddParams): string {
    return params.item_id ? 'invalid_item_id' : 'item_name_mismatch';
  }

  /** The site the call names, or null for a URL that names no host. */
  private static site(params: EddParams): Identity | null {
    try {
      return params.url ? legacyIdentity(params.url) : null;
    } catch (e) {
      if (e instanceof ApiError) return null;
      throw e;
    }
  }

  // ---- the license and what EDD says of it ----

  private async license(params: EddParams, site: Identity | null): Promise<LicenseForIdentity | undefined> {
    const key = params.license?.trim();
    if (!key) return undefined;
    return this.lookup.forIdentity(key, site ? site.identity_key : null);
  }

  /** The fields every license answer of EDD carries. */
  private async fields(product: Product, license: LicenseForIdentity): Promise<EddAnswer> {
    const settings = await this.settings.get();
    const limit = resolveActivationLimit(license, settings.default_activation_limit);
    const expires = eddExpires(license.usage_expires_at);
    return {
      item_id: product.id,
      item_name: product.name,
      license_limit: limit,
      site_count: license.activation_count,
      expires,
      activations_left: limit === 0 ? 'unlimited' : Math.max(0, limit - license.activation_count),
      price_id: license.variation_id === 0 ? false : String(license.variation_id),
      // EDD's checksum of the answer's license and expiry, which some updaters compare.
      checksum: createHash('md5').update(`${license.license_key}${product.id}${expires}`).digest('hex'),
    };
  }

  private state(license: LicenseForIdentity): EddLicenseState {
    const ev = evaluateLicense(factsOf(license), this.clock.now(), license.identity_activation_id !== null);
    return eddState(ev.effective_status);
  }

  // ---- the actions ----

  private async activate(params: EddParams, caller: CallerMeta): Promise<EddAnswer> {
    const product = await this.item(params);
    if (!product) return { success: false, license: 'invalid', error: LegacyService.unknownItem(params) };
    const site = LegacyService.site(params);
    const license = await this.license(params, site);
    if (!license) return { success: false, license: 'invalid', item_name: product.name, error: 'missing' };
    if (license.product_id !== product.id) {
      return { success: false, license: 'invalid', item_name: product.name, error: 'item_name_mismatch' };
    }
    const state = this.state(license);
    if (state === 'expired' || state === 'disabled' || state === 'invalid') {
      return {
        success: false,
        license: 'invalid',
        ...(await this.fields(product, license)),
        error: state === 'invalid' ? 'invalid' : state,
      };
    }
    if (!site) return { success: false, license: 'invalid', item_name: product.name, error: 'missing_url' };
    try {
      await this.activations.activate({ license_key: license.license_key }, caller, site);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const limited = e.code === 'activation_limit_reached' || e.code === 'staging_activation_limit_reached';
      return {
        success: false,
        license: 'invalid',
        ...(await this.fields(product, license)),
        error: limited ? 'no_activations_left' : 'invalid',
        ...(limited
          ? {
              max_sites: resolveActivationLimit(
                license,
                (await this.settings.get()).default_activation_limit,
              ),
            }
          : {}),
      };
    }
    const after = (await this.license(params, site))!;
    return { success: true, license: 'valid', ...(await this.fields(product, after)) };
  }

  private async deactivate(params: EddParams): Promise<EddAnswer> {
    const product = await this.item(params);
    if (!product) return { success: false, license: 'failed', error: LegacyService.unknownItem(params) };
    const site = LegacyService.site(params);
    const license = await this.license(params, site);
    if (!license || license.product_id !== product.id || !site || license.identity_activation_id === null) {
      return { success: false, license: 'failed', item_name: product.name };
    }
    try {
      await this.activations.deactivate({
        license_key: license.license_key,
        activation_id: license.identity_activation_id,
      });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return { success: false, license: 'failed', ...(await this.fields(product, license)) };
    }
    const after = (await this.license(params, site))!;
    return { success: true, license: 'deactivated', ...(await this.fields(product, after)) };
  }

  private async check(params: EddParams): Promise<EddAnswer> {
    const product = await this.item(params);
    if (!product) return { success: false, license: LegacyService.unknownItem(params) };
    const site = LegacyService.site(params);
    const license = await this.license(params, site);
    if (!license) return { success: false, license: 'invalid', item_name: product.name };
    if (license.product_id !== product.id) {
      return { success: false, license: 'item_name_mismatch', item_name: product.name };
    }
    const state = this.state(license);
    return { success: state === 'valid', license: state, ...(await this.fields(product, license)) };
  }

  /**
   * What EDD's `get_version` answers: the newest version, and a package only for a licensed,
   * activated site entitled to it (Tollgate's update check, with the site's URL as its identity).
   * Every other case answers the version without a package, as EDD does.
   */
  private async version(params: EddParams, ip: string): Promise<EddAnswer> {
    const product = await this.item(params);
    if (!product?.slug) {
      return {
        new_version: '',
        stable_version: '',
        sections: phpStrings({}),
        msg: 'No valid product ID or name provided.',
      };
    }
    const site = LegacyService.site(params);
    const key = params.license?.trim();
    const current = params.version?.trim() || '0';
    let update: Awaited<ReturnType<DistributionService['check']>> | null = null;
    let msg: string | null = null;
    if (key && site) {
      try {
        // The package is a signed link rather than a token: the updater keeps this answer for
        // hours, a token lasts token_expiry minutes (docs/migrating.md, 'The package link').
        update = await this.distribution.check(
          { slug: product.slug, version: current, license_key: key },
          ip,
          undefined,
          site,
          async (grant, release) => {
            const link = await this.links.url(grant.activationId, release.version_id);
            // The token the link mints when opened carries the binding; the expiry is the link's.
            return {
              download_url: link.url,
              token_expires_at: mysqlTime(link.expires),
              token_binding_version: BINDING_VERSION,
            };
          },
        );
      } catch (e) {
        if (!(e instanceof ApiError) || e.code === 'rate_limited') throw e;
        msg = e.message;
      }
    } else {
      msg = 'A license key and the site URL are needed for updates.';
    }
    const changelog = update?.changelog ?? '';
    const version = update?.latest_version ?? current;
    const pkg = update?.download_url ?? '';
    const changelogUrl = update?.changelog_url ?? '';
    return {
      new_version: version,
      stable_version: version,
      name: update?.name ?? product.name,
      slug: product.slug,
      url: changelogUrl,
      homepage: update?.homepage ?? '',
      last_updated: update?.release_date ?? '',
      package: pkg,
      download_link: pkg,
      tested: update?.tested ?? '',
      requires: update?.requires ?? '',
      requires_php: update?.requires_php ?? '',
      sections: phpStrings({
        description: escapeHtml(update?.description ?? ''),
        changelog: changelog === '' ? '' : `<p>${escapeHtml(changelog).replace(/\n/g, '<br>')}</p>`,
      }),
      banners: phpStrings(update?.banners ?? {}),
      icons: phpStrings(update?.icons ?? {}),
      ...(msg !== null ? { msg } : {}),
    };
  }

  /**
   * Opens a package link (`GET /edd-sl/package`): the link's own checks (PackageLinks.verify),
   * then, at this moment, the activation it names still a URL-only site's (else 403
   * `domain_not_activated`), its product's `legacy_api` still on (else 403 `legacy_api_disabled`),
   * and the update check's preflight and the release's checks (DistributionService.updateTokenFor).
   * Answers the URL of a fresh single-use download token for that release.
   */
  async package(query: Record<string, unknown>, ip: string): Promise<string> {
    const claim: PackageLinkClaim = await this.links.verify(query);
    const activation = await this.lookup.activation(claim.activation_id);
    // A site that moved to the Tollgate SDK took a full identity: its old updater's links end.
    if (!activation || !isUrlOnly(activation.installation_id)) throw new ApiError('domain_not_activated');
    const license = await this.lookup.record(activation.license_id);
    if (!license) throw new ApiError('invalid_license');
    const product = await this.catalogue.getProduct(license.product_id);
    if (product && !product.legacy_api) throw new ApiError('legacy_api_disabled');
    if (!product) throw new ApiError('product_not_found');
    const token = await this.distribution.updateTokenFor(
      product,
      license.license_key,
      legacyIdentity(activation.domain_normalized),
      activation.id,
      claim.release_id,
      ip,
    );
    return token.download_url;
  }

  /**
   * EDD's `get_versions`: `products[<slug>][item_id|item_name|license|url|version]` for several
   * products at once, answered per slug as get_version answers each.
   */
  private async versions(params: EddParams, ip: string): Promise<EddAnswer> {
    const asked = new Map<string, EddParams>();
    for (const [name, value] of Object.entries(params)) {
      const m = /^products\[([^\][]{1,200})\]\[([a-z_]{1,20})\]$/.exec(name);
      if (!m) continue;
      const entry = asked.get(m[1]!) ?? {};
      entry[m[2]!] = value;
      asked.set(m[1]!, entry);
    }
    if (asked.size > 50) throw new ApiError('invalid_parameters');
    const out: EddAnswer = {};
    for (const [slug, entry] of asked) out[slug] = await this.version(entry, ip);
    return out;
  }
}
