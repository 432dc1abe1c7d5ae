import type { Clock } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import { safeEqual, sha256 } from '../../random.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { type Identity, isUrlOnly, legacyIdentity } from '../identity/identity.js';
import type { ActivationService, CallerMeta } from '../licensing/activation.service.js';
import { evaluateLicense } from '../licensing/entitlements.js';
import { factsOf, resolveActivationLimit } from '../licensing/license.view.js';
import type { LicenseLookupService } from '../licensing/license-lookup.service.js';
import type { ActivationRow, LicenseRecord } from '../licensing/licensing.model.js';
import type { SettingsService } from '../settings/settings.service.js';

/**
 * The REST routes of License Manager for WooCommerce (LMFWC) that plugins in the field call,
 * answered as LMFWC 2.x answered them, so that they keep working when the old store's URL points
 * at Tollgate (docs/migrating.md, 'License Manager for WooCommerce'). Only for licenses of products
 * whose owner turned `legacy_api` on; every other key is a key LMFWC does not know.
 *
 * The shapes are those of LMFWC's `includes/api/v2/Licenses.php`: every success is
 * `{success: true, data}` (its RestController::response), every failure a WordPress REST error
 * `{code, message, data: {status}}` with LMFWC's codes (`lmfwc_rest_data_error` 404,
 * `lmfwc_rest_license_expired` 405) and WooCommerce's for a wrong REST key.
 *
 * The site: LMFWC's activation names no site. It records the caller's IP address and an optional
 * `label`, and answers a `token` that names the activation in later `deactivate` and `validate`
 * calls. Here a `label` that names a host is the site (a URL-only identity, legacyIdentity, the
 * same seat a later Tollgate SDK activation takes over); without one, the caller's IP address is
 * the site, as LMFWC would have recorded it. The token is that identity's key (sha256 of the
 * URL-only installation and the host): it names the seat without being stored, and it is no
 * secret, since every call also needs the license key and the store's REST key. Where LMFWC makes
 * a new activation on every call, the same site here keeps its one seat.
 */

/** The query parameters LMFWC's routes read (`token` and `label`, LMFWC 2.2); others are ignored, as WordPress does. */
export interface LmfwcParams {
  token?: string;
  label?: string;
}

/** The REST key the call presented: HTTP Basic, or WooCommerce's `consumer_key`/`consumer_secret` query parameters. */
export interface LmfwcCredentials {
  consumer_key: string;
  consumer_secret: string;
}

export type LmfwcAction = 'activate' | 'deactivate' | 'validate' | 'retrieve';

/** LMFWC's `LicenseStatus` enum: SOLD 1, DELIVERED 2, ACTIVE 3, INACTIVE 4, DISABLED 5. */
const LMFWC_ACTIVE = 3;
const LMFWC_INACTIVE = 4;
const LMFWC_DISABLED = 5;
/** LMFWC's `LicenseSource` enum: SALE 1, IMPORT 2, API 3. */
const LMFWC_SALE = 1;
const LMFWC_API = 3;

/** A license key in LMFWC's route (`(?P<license_key>[\w-]+)`), bounded. */
const KEY = /^[\w-]{1,255}$/;
/** Longest `token` or `label` accepted: a token is 64 hexadecimal digits, a URL a few hundred characters. */
const MAX_PARAM = 2048;

/** LMFWC's dates: `Y-m-d H:i:s` in UTC, or null. */
function wpDate(iso: string | null): string | null {
  if (iso === null) return null;
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? iso : t.toISOString().slice(0, 19).replace('T', ' ');
}

const dataError = () => new ApiError('lmfwc_rest_data_error');

export class LmfwcService {
  constructor(
    private readonly catalogue: Pick<CatalogueService, 'getProduct'>,
    private readonly activations: ActivationService,
    private readonly lookup: LicenseLookupService,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
  ) {}

  /**
   * Fails closed: with no REST key configured every call is refused. No credentials is LMFWC's own
   * refusal (`lmfwc_rest_cannot_view`/`_edit`, 401); a wrong key or secret WooCommerce's.
   */
  async authenticate(action: LmfwcAction, credentials: LmfwcCredentials | null): Promise<void> {
    if (credentials === null) {
      throw new ApiError(
        action === 'activate' || action === 'deactivate'
          ? 'lmfwc_rest_cannot_edit'
          : 'lmfwc_rest_cannot_view',
      );
    }
    const s = await this.settings.get();
    // Both comparisons run whatever the first one found, so timing tells nothing of which failed.
    const keyOk = safeEqual(credentials.consumer_key, s.lmfwc_consumer_key);
    const secretOk = safeEqual(sha256(credentials.consumer_secret), s.lmfwc_consumer_secret_sha256);
    if (s.lmfwc_consumer_key === '' || s.lmfwc_consumer_secret_sha256 === '' || !keyOk || !secretOk) {
      throw new ApiError('woocommerce_rest_authentication_error');
    }
  }

  async answer(
    action: LmfwcAction,
    key: string,
    params: LmfwcParams,
    caller: CallerMeta,
  ): Promise<{ success: true; data: Record<string, unknown> }> {
    if (!KEY.test(key)) throw new ApiError('rest_no_route');
    for (const value of [params.token, params.label]) {
      if (value !== undefined && value.length > MAX_PARAM) throw new ApiError('rest_invalid_param');
    }
    const license = await this.license(key);
    switch (action) {
      case 'activate':
        return { success: true, data: await this.activate(license, params, caller) };
      case 'deactivate':
        return { success: true, data: await this.deactivate(license, params) };
      case 'validate':
        return { success: true, data: await this.validate(license, params) };
      case 'retrieve':
        return { success: true, data: await this.retrieve(license) };
    }
  }

  /** The license of the key, if its product turned the compatibility API on; else LMFWC's "could not be found". */
  private async license(key: string): Promise<LicenseRecord> {
    const found = await this.lookup.forIdentity(key, null);
    if (!found) throw dataError();
    const product = await this.catalogue.getProduct(found.product_id);
    if (!product?.legacy_api) throw dataError();
    const record = await this.lookup.record(found.id);
    if (!record) throw dataError();
    return record;
  }

  /** The site a `label` names, or null when it names no host (LMFWC's labels are free text). */
  private static labelled(label: string | undefined): Identity | null {
    if (!label?.trim()) return null;
    try {
      return legacyIdentity(label);
    } catch (e) {
      if (e instanceof ApiError) return null;
      throw e;
    }
  }

  /** The site the call names: a `label` that names a host, else the caller's address (IPv6 in brackets, as a URL has it). */
  private static site(params: LmfwcParams, ip: string): Identity {
    return LmfwcService.labelled(params.label) ?? legacyIdentity(ip.includes(':') ? `[${ip}]` : ip);
  }

  // ---- LMFWC's answers ----

  /** LMFWC's License model `toArray()`, without its hash, with the key in clear (getLicense). */
  private async licenseData(license: LicenseRecord): Promise<Record<string, unknown>> {
    const limit = resolveActivationLimit(license, (await this.settings.get()).default_activation_limit);
    const status = evaluateLicense(factsOf(license), this.clock.now()).effective_status;
    return {
      id: license.id,
      orderId: license.order_id,
      productId: license.product_id,
      userId: license.user_id,
      licenseKey: license.license_key,
      expiresAt: wpDate(license.usage_expires_at),
      validFor: null,
      source: license.order_id === null ? LMFWC_API : LMFWC_SALE,
      status:
        status === 'revoked' ? LMFWC_DISABLED : status === 'license_inactive' ? LMFWC_INACTIVE : LMFWC_ACTIVE,
      timesActivated: license.activation_count,
      // LMFWC's null is "no limit"; Tollgate's is 0.
      timesActivatedMax: limit === 0 ? null : limit,
      createdAt: wpDate(license.created_at),
      createdBy: null,
      updatedAt: wpDate(license.updated_at),
      updatedBy: null,
    };
  }

  /** One row of LMFWC 2.2's activations table (`lmfwc_license_activations`), as its LicenseActivation `toArray()`. */
  private static activationData(row: ActivationRow): Record<string, unknown> {
    return {
      id: row.id,
      // Only a URL-only activation has a token: a site on Tollgate's SDK is no activation of LMFWC's.
      token: isUrlOnly(row.installation_id) ? row.identity_key : null,
      license_id: row.license_id,
      label: row.domain,
      source: LMFWC_API,
      ip_address: row.ip_address,
      user_agent: row.user_agent,
      meta_data: null,
      created_at: wpDate(row.activated_at),
      updated_at: wpDate(row.updated_at),
      deactivated_at: wpDate(row.deactivated_at),
    };
  }

  /** The license's URL-only activations: the ones a token names (LMFWC's activations, or EDD's and imported ones). */
  private async lmfwcRows(licenseId: number): Promise<ActivationRow[]> {
    return (await this.lookup.activationsOf(licenseId)).filter((r) => isUrlOnly(r.installation_id));
  }

  // ---- the routes ----

  /**
   * GET licenses/activate/{license_key}: the license and the site's activation. With `token`,
   * LMFWC 2.2 reactivates that deactivated activation (an active one is its "already activated");
   * without, LMFWC makes a new activation on every call, where Tollgate gives the same site the
   * same seat.
   */
  private async activate(license: LicenseRecord, params: LmfwcParams, caller: CallerMeta) {
    const token = params.token?.trim();
    let site: Identity;
    if (token) {
      const row = (await this.lmfwcRows(license.id)).findLast((r) => r.identity_key === token);
      if (!row || row.status === 'active') throw dataError();
      site = legacyIdentity(row.domain);
    } else {
      site = LmfwcService.site(params, caller.ip);
    }
    try {
      await this.activations.activate({ license_key: license.license_key }, caller, site);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.code === 'expired' || e.code === 'trial_ended') throw new ApiError('lmfwc_rest_license_expired');
      // LMFWC's "reached maximum activation count" and every other refusal are its data error.
      throw dataError();
    }
    const after = (await this.lookup.record(license.id))!;
    const row = (await this.lmfwcRows(license.id)).find(
      (r) => r.status === 'active' && r.identity_key === site.identity_key,
    );
    return {
      ...(await this.licenseData(after)),
      activationData: row ? LmfwcService.activationData(row) : null,
    };
  }

  /**
   * GET licenses/deactivate/{license_key}: the activation named by `token`, or by a `label` that
   * names a host; with neither, as LMFWC 2.2, every activation it made (the URL-only ones: sites on Tollgate's own SDK
   * are not LMFWC's to free). None active is LMFWC's "has not been activated yet".
   */
  private async deactivate(license: LicenseRecord, params: LmfwcParams) {
    const status = evaluateLicense(factsOf(license), this.clock.now()).effective_status;
    if (status === 'expired' || status === 'trial_ended') throw new ApiError('lmfwc_rest_license_expired');
    const identityKey = params.token?.trim() || LmfwcService.labelled(params.label)?.identity_key || null;
    const active = (await this.lmfwcRows(license.id)).filter(
      (r) => r.status === 'active' && (identityKey === null || r.identity_key === identityKey),
    );
    if (active.length === 0) throw dataError();
    for (const row of active) {
      try {
        await this.activations.deactivate({ license_key: license.license_key, activation_id: row.id });
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        throw dataError();
      }
    }
    const ids = new Set(active.map((r) => r.id));
    const after = (await this.lmfwcRows(license.id))
      .filter((r) => ids.has(r.id))
      .map(LmfwcService.activationData);
    return {
      ...(await this.licenseData((await this.lookup.record(license.id))!)),
      activationData: identityKey === null ? after : after[0],
    };
  }

  /**
   * GET licenses/validate/{license_key}: the counts, and the activations (only the token's, when
   * one is given and active, as LMFWC 2.2 answers).
   */
  private async validate(license: LicenseRecord, params: LmfwcParams) {
    const token = params.token?.trim();
    const listed = token
      ? (await this.lmfwcRows(license.id)).filter((r) => r.identity_key === token && r.status === 'active')
      : await this.lookup.activationsOf(license.id);
    const data = await this.licenseData(license);
    // LMFWC reads both through intval(): no limit (null) is 0, and the remainder goes negative.
    const max = (data.timesActivatedMax as number | null) ?? 0;
    return {
      timesActivated: license.activation_count,
      timesActivatedMax: max,
      remainingActivations: max - license.activation_count,
      activationData: listed.map(LmfwcService.activationData),
    };
  }

  /** GET licenses/{license_key}: the license with all its activations. */
  private async retrieve(license: LicenseRecord) {
    const rows = await this.lookup.activationsOf(license.id);
    return { ...(await this.licenseData(license)), activationData: rows.map(LmfwcService.activationData) };
  }
}
