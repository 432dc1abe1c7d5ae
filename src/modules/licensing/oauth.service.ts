import { type Clock, iso } from '../../clock.js';
import type { Tx } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { randomHex, safeEqual, sha256 } from '../../random.js';
import { normaliseDomain } from '../identity/domain.js';
import { type Identity, resolveIdentity } from '../identity/identity.js';
import type { SettingsService } from '../settings/settings.service.js';
import { evaluateLicense } from './entitlements.js';
import { StagingPatterns } from './environment.js';
import type { LicenseRepository } from './license.repository.js';
import { factsOf, type LicenseView, licenseView } from './license.view.js';
import type { LicenseRecord } from './licensing.model.js';
import type { OAuthActivation } from './oauth.js';
import type { OAuthRepository } from './oauth.repository.js';
import type { StatePayload, StateSigner } from './oauth.state.js';

/** An activation token is good for 5 minutes, once (docs/oauth.md, 'Lifetimes'). */
export const TOKEN_LIFETIME_SECONDS = 5 * 60;
/** Spent and expired tokens are kept this long (for support questions), then removed. */
const TOKEN_RETENTION_MS = 24 * 3600_000;

/** A verified approval request, as the approval page and GET oauth/validate see it. */
export interface Approval {
  payload: StatePayload;
  license: LicenseRecord;
  view: LicenseView;
  identity: Identity;
  /** Origin of the callback (the approval page lets its forms lead there). */
  returnOrigin: string;
  /** Why approving now would not lead to an activation (`null` when it would). */
  blocker: 'license_unusable' | 'activation_limit_reached' | null;
}

/** Appends parameters to the site's callback URL, leaving the site's own query untouched. */
export function withParams(url: string, params: Record<string, string>): string {
  const u = new URL(url);
  const extra = new URLSearchParams(params).toString();
  u.search = u.search ? `${u.search}&${extra}` : `?${extra}`;
  return u.href;
}

/**
 * Customer-approval activation (docs/oauth.md): the signed state handed out as redirect_url, the
 * owner's review and confirmation, and the single-use activation token the site exchanges.
 */
export class OAuthService implements OAuthActivation {
  /** `staging_patterns`, compiled once per change of the list. */
  private readonly staging = new StagingPatterns();
  constructor(
    private readonly tokens: OAuthRepository,
    private readonly licenses: LicenseRepository,
    private readonly signer: StateSigner,
    private readonly clock: Clock,
    private readonly settings: SettingsService,
    /** Absolute URL of the approval page; the public origin is final only once the server listens. */
    private readonly approvalPage: () => string,
  ) {}

  async begin(request: {
    license: Pick<LicenseRecord, 'id' | 'license_key'>;
    identity: Identity;
    return_url: string;
  }): Promise<{ redirect_url: string }> {
    const { license, identity } = request;
    const { state, payload } = await this.signer.sign({
      lid: license.id,
      kh: sha256(license.license_key),
      dom: identity.domain,
      dn: identity.domain_normalized,
      iid: identity.installation_id,
      ru: request.return_url,
    });
    return { redirect_url: withParams(this.approvalPage(), { state, nonce: payload.n }) };
  }

  /**
   * Runs inside the activation transaction: a failed activation rolls the claim back. Unknown,
   * expired or differently bound tokens are `invalid_token`; a claimed one is `token_consumed`.
   */
  async consume(token: string, binding: { license_id: number; identity: Identity }, tx: Tx) {
    const row = await this.tokens.findByHash(sha256(token), tx);
    if (!row || row.license_id !== binding.license_id || row.identity_key !== binding.identity.identity_key) {
      throw new ApiError('invalid_token');
    }
    if (row.used_at !== null) throw new ApiError('token_consumed');
    const now = this.clock.now();
    if (new Date(row.expires_at).getTime() <= now.getTime()) throw new ApiError('invalid_token');
    if (!(await this.tokens.claim(row.id, iso(now), tx))) throw new ApiError('token_consumed');
  }

  /**
   * Verifies the state, the key it was made for (when the caller names one) and ownership, and
   * resolves the requesting identity it carries.
   */
  async review(userId: number, state: string, licenseKey?: string): Promise<Approval> {
    const payload = await this.signer.verify(state);
    if (licenseKey !== undefined && !safeEqual(sha256(licenseKey), payload.kh)) {
      throw new ApiError('invalid_state');
    }
    const license = await this.licenses.findById(payload.lid);
    if (!license || !safeEqual(sha256(license.license_key), payload.kh)) {
      throw new ApiError('license_not_found');
    }
    if (license.user_id !== userId) throw new ApiError('unauthorized');
    let identity: Identity;
    let returnOrigin: string;
    try {
      identity = resolveIdentity(payload.dom, payload.iid);
      // Checked when the state was made; checked again so no callback ever leaves the site's domain.
      if (identity.domain_normalized !== payload.dn || normaliseDomain(payload.ru) !== payload.dn) {
        throw new Error('binding');
      }
      returnOrigin = new URL(payload.ru).origin;
    } catch {
      throw new ApiError('invalid_state');
    }
    const settings = await this.settings.get();
    const now = this.clock.now();
    const view = licenseView(license, settings.default_activation_limit, now);
    let blocker: Approval['blocker'] = null;
    if (evaluateLicense(factsOf(license), now).effective_status !== 'valid') blocker = 'license_unusable';
    else if (await this.seatTaken(license.id, identity, view, settings)) blocker = 'activation_limit_reached';
    return { payload, license, view, identity, returnOrigin, blocker };
  }

  /**
   * Whether activating this site would find no seat, as activation decides it (docs/licensing.md,
   * '2.3 Staging and development sites', '2.4 Reinstalls'): a staging site counts against the
   * staging cap, and a reinstall that takes over an activation of its environment needs no seat.
   */
  private async seatTaken(
    licenseId: number,
    identity: Identity,
    view: LicenseView,
    settings: Awaited<ReturnType<SettingsService['get']>>,
  ): Promise<boolean> {
    const environment = this.staging.environmentOf(identity.domain_normalized, settings);
    const full =
      environment === 'staging'
        ? (await this.licenses.countActive(licenseId, 'staging')) >= settings.staging_activation_limit
        : view.activation_limit !== 0 && view.activations_remaining <= 0;
    if (!full || !settings.reinstall_takeover) return full;
    const onDomain = await this.licenses.findActiveOnDomain(licenseId, identity.domain_normalized);
    return !onDomain.some((a) => a.environment === environment);
  }

  /**
   * GET /licenses/oauth/validate: exactly the fields docs/oauth.md shows ('Single-page approval
   * clients').
   */
  async validate(userId: number, query: { license_key?: string; state?: string }) {
    if (!query.license_key) throw new ApiError('missing_license_key');
    if (!query.state) throw new ApiError('missing_state');
    const { view } = await this.review(userId, query.state, query.license_key);
    return {
      license_key: view.license_key,
      product_id: view.product_id,
      variation_id: view.variation_id,
      product_name: view.product_name,
      variation_name: view.variation_name,
      status: view.status,
      activation_limit: view.activation_limit,
      activation_count: view.activation_count,
      expires_at: view.expires_at,
      usage_expires_at_utc: view.usage_expires_at_utc,
    };
  }

  /**
   * POST /licenses/oauth/confirm (the single-page flow): `nonce` must be the approval request's
   * nonce (the `nonce` parameter of redirect_url); the callback echoes it back to the site.
   */
  async confirm(userId: number, body: { license_key?: string; state?: string; nonce?: string }) {
    if (!body.license_key || !body.state || !body.nonce) throw new ApiError('missing_params');
    const approval = await this.review(userId, body.state, body.license_key);
    if (!safeEqual(body.nonce, approval.payload.n)) throw new ApiError('invalid_state');
    const token = await this.issue(userId, approval);
    return {
      success: true as const,
      redirect_url: withParams(approval.payload.ru, {
        activation_token: token,
        license_key: approval.license.license_key,
        nonce: approval.payload.n,
      }),
      activation_token: token,
    };
  }

  /** The server-rendered approval page's Approve: the callback carries `state` instead of `nonce`. */
  async approve(userId: number, state: string): Promise<string> {
    const approval = await this.review(userId, state);
    const token = await this.issue(userId, approval);
    return withParams(approval.payload.ru, {
      activation_token: token,
      license_key: approval.license.license_key,
      state,
    });
  }

  /** Where a verified state leads back to (for the pages' form-action), without checking ownership. */
  async returnTarget(state: string): Promise<{ returnUrl: string; returnOrigin: string }> {
    const payload = await this.signer.verify(state);
    try {
      if (normaliseDomain(payload.ru) !== payload.dn) throw new Error('binding');
      return { returnUrl: payload.ru, returnOrigin: new URL(payload.ru).origin };
    } catch {
      throw new ApiError('invalid_state');
    }
  }

  /** Deny: back to the site with `error=access_denied`; nothing is issued, so ownership is not needed. */
  async deny(state: string): Promise<string> {
    const { returnUrl } = await this.returnTarget(state);
    return withParams(returnUrl, { error: 'access_denied', state });
  }

  /**
   * A license that may not be used gets no token: its own code (revoked, expired …; docs/oauth.md,
   * 'Errors').
   */
  private async issue(userId: number, approval: Approval): Promise<string> {
    const status = evaluateLicense(factsOf(approval.license), this.clock.now()).effective_status;
    if (status !== 'valid') throw new ApiError(status);
    const token = randomHex(32);
    const now = this.clock.now();
    await this.tokens.insertToken({
      token_hash: sha256(token),
      license_id: approval.license.id,
      identity_key: approval.identity.identity_key,
      domain_normalized: approval.identity.domain_normalized,
      installation_id: approval.identity.installation_id,
      user_id: userId,
      created_at: iso(now),
      expires_at: iso(new Date(now.getTime() + TOKEN_LIFETIME_SECONDS * 1000)),
    });
    await this.tokens.deleteExpiredBefore(iso(new Date(now.getTime() - TOKEN_RETENTION_MS)));
    return token;
  }
}
