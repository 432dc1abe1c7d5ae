import type { Static } from 'typebox';
import { type Clock, iso } from '../../clock.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { type Actor, siteActor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import { DomainError, normaliseDomain } from '../identity/domain.js';
import { type Identity, isUrlOnly, resolveIdentity } from '../identity/identity.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { ValidateFailure, ValidateSuccess } from './activation.schemas.js';
import { step, transactionSteps } from './db-steps.js';
import { type Entitlements, evaluateLicense } from './entitlements.js';
import { StagingPatterns } from './environment.js';
import type { LastSeen } from './last-seen.js';
import type { LicenseRepository, NewActivation } from './license.repository.js';
import { factsOf, remainingOf, resolveActivationLimit } from './license.view.js';
import type { ActivationRow, LicenseTerms } from './licensing.model.js';
import type { OAuthActivation } from './oauth.js';

export interface ActivateInput {
  license_key: string;
  domain?: string;
  installation_id?: string;
  machine_id?: string | null;
  return_url?: string;
  activation_token?: string;
}

export interface IdentityFields {
  domain?: string;
  installation_id?: string;
}

export interface DeactivateTarget extends IdentityFields {
  activation_id?: number;
}

/** Who is calling, recorded on the activation as metadata. */
export interface CallerMeta {
  ip: string;
  user_agent: string;
}

export type ActivateResult =
  | {
      success: true;
      activation_id: number;
      activations_remaining: number;
      product_id: number;
      variation_id: number;
      message?: string;
      /** Only on a staging activation (docs/licensing.md, '2.3 Staging and development sites'). */
      environment?: 'staging';
      staging_activations_remaining?: number;
    }
  | { success: false; code: 'oauth_required'; message: string; redirect_url: string };

export type ValidateResult =
  | {
      status: 200;
      body: Static<typeof ValidateSuccess>;
      /** Not sent: the ids an offline receipt names (receipt.service.ts), read with the answer. */
      license_id: number;
      activation_id: number;
      /** Not sent: the site's identity key, for the installed-base report (docs/distribution.md). */
      site: string;
    }
  | { status: 403; body: Static<typeof ValidateFailure> };

/** Runs inside the deactivation transaction (e.g. to invalidate download tokens bound to the activation). */
export type DeactivationHook = (activationId: number, tx: Tx) => Promise<void>;

export const ALREADY_ACTIVATED = 'Already activated';

const messageOf = (code: ConstructorParameters<typeof ApiError>[0]) => new ApiError(code).message;

/** The settings, when licensing is on (else 503 `licensing_unavailable`). */
function licensingOn(settings: Settings): Settings {
  if (!settings.licensing_enabled) throw new ApiError('licensing_unavailable');
  return settings;
}

/** The public licensing API (docs/licensing.md, sections 2–4) and the customer's deactivation. */
export class ActivationService {
  private readonly deactivationHooks: DeactivationHook[] = [];
  /** `staging_patterns`, compiled once per change of the list. */
  private readonly staging = new StagingPatterns();
  /** Keeps each site's last_seen_at (docs/licensing.md, 'Last seen and stale activations'). */
  private lastSeen: LastSeen | null = null;

  constructor(
    private readonly repo: LicenseRepository,
    private readonly clock: Clock,
    private readonly settings: SettingsService,
    private readonly audit: AuditService,
    private oauth: OAuthActivation | null = null,
  ) {}

  /** Replaces the customer-approval flow createLicensing gave (a test installs its own). */
  useOAuth(oauth: OAuthActivation): void {
    this.oauth = oauth;
  }

  /** Validate refreshes the last_seen_at of the activation it identifies through this (createLicensing gives it). */
  trackLastSeen(lastSeen: LastSeen): void {
    this.lastSeen = lastSeen;
  }

  onDeactivate(hook: DeactivationHook): void {
    this.deactivationHooks.push(hook);
  }

  /**
   * Fail closed while the licensing module is switched off: nothing is activated, validated or
   * deactivated, and clients get 503 `licensing_unavailable` (never a `valid` answer).
   */
  private async requireLicensing() {
    return licensingOn(await this.settings.get());
  }

  /**
   * `legacy`: a site known by its URL alone, activated through the compatibility API of the
   * updaters already in the field (docs/migrating.md, 'Sites already in the field'). Such an
   * updater cannot ask its customer for approval, so the product's OAuth mode does not apply to it.
   */
  async activate(input: ActivateInput, caller: CallerMeta, legacy?: Identity): Promise<ActivateResult> {
    const settings = await this.requireLicensing();
    const key = requireKey(input.license_key);
    const identity = legacy ?? resolveIdentity(input.domain, input.installation_id);
    const license = await this.repo.findForIdentity(key, identity.identity_key);
    if (!license) throw new ApiError('invalid_license');
    assertUsable(license, this.clock.now());
    const environment = this.staging.environmentOf(identity.domain_normalized, settings);

    const mode = legacy
      ? 'simple'
      : license.product_activation_mode === 'oauth' || license.product_activation_mode === 'simple'
        ? license.product_activation_mode
        : settings.activation_mode;
    const token = input.activation_token || undefined;
    // An identity that is already active was approved before: repeating it needs no approval.
    if (mode === 'oauth' && !token && license.identity_activation_id === null) {
      return this.requestApproval(license, identity, input);
    }
    if (mode === 'oauth' && token && !this.oauth) throw new ApiError('oauth_unavailable');

    const result = await withTransaction(
      this.repo.database,
      async (tx): Promise<ActivateResult | 'approval_required'> => {
        const locked = await step('activation_read_failed', () => this.repo.lockLicense(license.id, tx));
        if (!locked) throw new ApiError('invalid_license');
        const current: LicenseTerms = { ...license, ...locked };
        // Revocation or a changed expiry may have committed since the first read.
        assertUsable(current, this.clock.now());
        if (mode === 'oauth' && token) {
          // Claimed first, so a reused token is token_consumed even while its identity is active;
          // a refusal below (the limit) rolls the claim back and leaves the token usable.
          const oauth = this.oauth!;
          await step('activation_write_failed', () =>
            oauth.consume(token, { license_id: license.id, identity }, tx),
          );
        }
        const existing = await step('activation_read_failed', () =>
          this.repo.findActiveActivation(license.id, identity.identity_key, tx),
        );
        const count = await step('activation_read_failed', () =>
          this.repo.countActive(license.id, 'production', tx),
        );
        const limit = resolveActivationLimit(current, settings.default_activation_limit);
        if (existing) {
          const repeat: ActivateResult = {
            success: true,
            activation_id: existing.id,
            activations_remaining: remainingOf(limit, count),
            product_id: license.product_id,
            variation_id: license.variation_id,
            message: ALREADY_ACTIVATED,
          };
          if (existing.environment === 'staging') {
            const staging = await step('activation_read_failed', () =>
              this.repo.countActive(license.id, 'staging', tx),
            );
            repeat.environment = 'staging';
            repeat.staging_activations_remaining = Math.max(0, settings.staging_activation_limit - staging);
          }
          return repeat;
        }
        // The identity was deactivated since the first read: it needs approval again (after this
        // transaction, which has only read).
        if (mode === 'oauth' && !token) return 'approval_required';
        const onDomain = await step('activation_read_failed', () =>
          this.repo.findActiveOnDomain(license.id, identity.domain_normalized, tx),
        );
        // A site known by its URL alone whose domain is already active (its updater asks again,
        // or the site already runs a release with the Tollgate SDK): the same seat, nothing new.
        const sameSite = legacy ? onDomain[0] : undefined;
        if (sameSite) {
          return {
            success: true,
            activation_id: sameSite.id,
            activations_remaining: remainingOf(limit, count),
            product_id: license.product_id,
            variation_id: license.variation_id,
            message: ALREADY_ACTIVATED,
          };
        }
        // A site activated by URL alone (imported, or through the compatibility API) now sends a
        // full identity: its activation becomes that identity in place and keeps its seat
        // (docs/migrating.md, 'Leaving the compatibility API'). Under the license's lock, so
        // parallel calls upgrade it once.
        const byUrl = legacy ? undefined : onDomain.find((a) => isUrlOnly(a.installation_id));
        if (byUrl) {
          const now = iso(this.clock.now());
          await step('activation_write_failed', () =>
            this.repo.upgradeLegacyActivation(byUrl.id, identity, now, tx),
          );
          // Its revision moved on: tokens issued to the URL-only identity stop working.
          await this.tookOver(byUrl, byUrl.id, identity, license.id, tx);
          return {
            success: true,
            activation_id: byUrl.id,
            activations_remaining: remainingOf(limit, count),
            product_id: license.product_id,
            variation_id: license.variation_id,
          };
        }
        // A reinstall on the same domain takes over its active activations (docs/licensing.md,
        // '2.4 Reinstalls'): under the license's lock, so parallel reinstalls leave one.
        const replaced = settings.reinstall_takeover ? onDomain : [];
        // The new activation takes the seat of one it replaces in its own environment.
        const takesSeat = !replaced.some((a) => a.environment === environment);
        const production = count - replaced.filter((a) => a.environment === 'production').length;
        let stagingAfter = 0;
        if (environment === 'staging') {
          const staging = await step('activation_read_failed', () =>
            this.repo.countActive(license.id, 'staging', tx),
          );
          stagingAfter = staging - replaced.filter((a) => a.environment === 'staging').length + 1;
          if (takesSeat && staging >= settings.staging_activation_limit) {
            throw new ApiError('staging_activation_limit_reached');
          }
        } else if (takesSeat && limit !== 0 && count >= limit) {
          throw new ApiError('activation_limit_reached');
        }
        const now = iso(this.clock.now());
        const values: NewActivation = {
          license_id: license.id,
          identity_key: identity.identity_key,
          domain: identity.domain,
          domain_normalized: identity.domain_normalized,
          installation_id: identity.installation_id,
          ip_address: caller.ip.slice(0, 64),
          machine_id: input.machine_id || null,
          user_agent: caller.user_agent,
          activated_at: now,
        };
        // Only a staging row names its environment: a production insert stays the statement it was.
        if (environment === 'staging') values.environment = 'staging';
        const activationId = await step('activation_write_failed', () =>
          this.repo.insertActivation(values, tx),
        );
        for (const old of replaced) {
          await step('activation_write_failed', () => this.repo.markTakenOver(old.id, activationId, now, tx));
          await this.tookOver(old, activationId, identity, license.id, tx);
        }
        const answer: ActivateResult = {
          success: true,
          activation_id: activationId,
          activations_remaining: remainingOf(
            limit,
            environment === 'production' ? production + 1 : production,
          ),
          product_id: license.product_id,
          variation_id: license.variation_id,
        };
        if (environment === 'staging') {
          answer.environment = 'staging';
          answer.staging_activations_remaining = Math.max(
            0,
            settings.staging_activation_limit - stagingAfter,
          );
        }
        return answer;
      },
      transactionSteps('activation_transaction_failed', 'activation_commit_failed'),
    );
    if (result === 'approval_required') return this.requestApproval(license, identity, input);
    // A new activation's last_seen_at is its activation time: no refresh is due for an hour.
    if (result.success && result.message === undefined)
      this.lastSeen?.activated(result.activation_id, this.clock.now());
    return result;
  }

  /**
   * What taking over an activation also does: as for any deactivation, the old one's download
   * tokens stop working; and it is audited with the site as the actor, since no person did it
   * (docs/admin.md, 'Audit trail').
   */
  private async tookOver(
    old: Pick<ActivationRow, 'id' | 'installation_id'>,
    activationId: number,
    identity: Identity,
    licenseId: number,
    tx: Tx,
  ): Promise<void> {
    for (const hook of this.deactivationHooks) {
      await step('activation_write_failed', () => hook(old.id, tx));
    }
    await step('activation_write_failed', () =>
      this.audit.record(
        siteActor(identity.domain_normalized),
        {
          entity_type: 'license',
          entity_id: licenseId,
          action: 'take_over_activation',
          changes: {
            activation_id: { before: old.id, after: activationId },
            installation_id: { before: old.installation_id, after: identity.installation_id },
          },
        },
        tx,
      ),
    );
  }

  private async requestApproval(
    license: LicenseTerms,
    identity: Identity,
    input: ActivateInput,
  ): Promise<ActivateResult> {
    if (!input.return_url) throw new ApiError('missing_return_url');
    let returnDomain: string;
    try {
      if (!/^https?:\/\//i.test(input.return_url)) throw new DomainError('scheme');
      returnDomain = normaliseDomain(input.return_url);
    } catch {
      throw new ApiError('invalid_return_url');
    }
    if (returnDomain !== identity.domain_normalized) throw new ApiError('invalid_return_url');
    if (!this.oauth) throw new ApiError('oauth_unavailable');
    const { redirect_url } = await this.oauth.begin({
      license,
      identity,
      return_url: input.return_url,
      machine_id: input.machine_id || null,
    });
    return {
      success: false,
      code: 'oauth_required',
      message: 'Customer approval is required.',
      redirect_url,
    };
  }

  /** `legacy`: a site known by its URL alone (as for activate). */
  async validate(
    input: {
      license_key: string;
      domain?: string;
      installation_id?: string;
    },
    legacy?: Identity,
  ): Promise<ValidateResult> {
    // Without a promise while the settings are cached (SettingsService.current).
    const settings = licensingOn(this.settings.current() ?? (await this.settings.get()));
    const key = requireKey(input.license_key);
    const identity = legacy ?? resolveIdentity(input.domain, input.installation_id);
    const license = await this.repo.findForIdentity(key, identity.identity_key);
    if (!license) {
      return {
        status: 403,
        body: {
          valid: false,
          error: 'invalid_license',
          effective_status: 'invalid_license',
          message: messageOf('invalid_license'),
          entitlements: null,
        },
      };
    }
    // The site is heard from, whatever the answer (at most one write an hour, LastSeen).
    if (license.identity_activation_id !== null && this.lastSeen) {
      const write = this.lastSeen.seen(license.identity_activation_id);
      if (write) await write;
    }
    const now = this.clock.now();
    const ev = evaluateLicense(factsOf(license), now, license.identity_activation_id !== null);
    const status = ev.effective_status;
    if (status !== 'valid') {
      const body: Static<typeof ValidateFailure> = {
        valid: false,
        error: status,
        effective_status: status,
        message: messageOf(status),
        entitlements: ev.entitlements,
      };
      if (status === 'domain_not_activated') {
        body.domain_active = false;
        body.product_id = license.product_id;
        body.variation_id = license.variation_id;
      }
      return { status: 403, body };
    }
    const limit = resolveActivationLimit(license, settings.default_activation_limit);
    const entitlements: Entitlements = ev.entitlements;
    return {
      status: 200,
      body: {
        valid: true,
        error: null,
        message: null,
        effective_status: 'valid',
        license_key: license.license_key,
        product_id: license.product_id,
        variation_id: license.variation_id,
        status: license.status,
        activation_limit: limit,
        activation_count: license.activation_count,
        activations_remaining: remainingOf(limit, license.activation_count),
        expires_at: ev.expires_at,
        usage_expires_at_utc: ev.usage_expires_at_utc,
        is_expired: ev.is_expired,
        subscription_status: entitlements.subscription_status,
        subscription_active: entitlements.subscription_active,
        domain_active: true,
        entitlements,
      },
      license_id: license.id,
      activation_id: license.identity_activation_id!,
      site: identity.identity_key,
    };
  }

  /** POST /licenses/deactivate: by activation id (of this license) or by the full identity. */
  async deactivate(input: { license_key: string } & DeactivateTarget): Promise<void> {
    await this.requireLicensing();
    const key = requireKey(input.license_key);
    const target = deactivationTarget(input);
    const license = await this.repo.findByKey(key);
    if (!license) throw new ApiError('invalid_license');
    await this.deactivateIn(license.id, target);
  }

  /** The customer's own deactivation: someone else's license is 404 `not_found`, as if it did not exist. */
  async customerDeactivate(userId: number, licenseId: number, input: DeactivateTarget): Promise<void> {
    const target = deactivationTarget(input);
    const license = await this.repo.findById(licenseId);
    if (!license || license.user_id !== userId) throw new ApiError('not_found');
    const settings = await this.settings.get();
    if (!settings.customer_deactivation_enabled) throw new ApiError('deactivation_disabled');
    await this.deactivateIn(license.id, target);
  }

  /**
   * The administrator's deactivation (docs/licensing.md, '7. For store administrators'): no key,
   * no customer setting and no licensing switch stand in the way; otherwise it is the public
   * deactivation, hooks included, and an inactive activation is answered as there (success, no
   * change). The change is recorded in the audit trail, in the same transaction.
   */
  async adminDeactivate(licenseId: number, activationId: number, actor: Actor): Promise<void> {
    const license = await this.repo.findById(licenseId);
    if (!license) throw new ApiError('license_not_found');
    await this.deactivateIn(license.id, { activationId }, (activation, tx) =>
      this.audit.record(
        actor,
        {
          entity_type: 'license',
          entity_id: license.id,
          action: 'deactivate_activation',
          changes: {
            activation_id: { before: activation.id, after: activation.id },
            status: { before: 'active', after: 'deactivated' },
          },
        },
        tx,
      ),
    );
  }

  /**
   * Releases a site not seen since `cutoff` (docs/licensing.md, 'Last seen and stale activations'):
   * a deactivation with the reason 'stale', its hooks included (download tokens invalidated), under
   * the license's lock, and only while the site is still active and still unseen, so however many
   * processes run the job it happens once. `done` runs last in the transaction (the audit entry and
   * the webhook). Answers whether this call released it.
   */
  async deactivateStale(
    licenseId: number,
    activationId: number,
    cutoff: string,
    done: (activation: ActivationRow, tx: Tx) => Promise<void>,
  ): Promise<boolean> {
    return withTransaction(
      this.repo.database,
      async (tx) => {
        await step('deactivation_read_failed', () => this.repo.lockLicense(licenseId, tx));
        const now = iso(this.clock.now());
        const activation = await step('deactivation_write_failed', () =>
          this.repo.deactivateStale(activationId, cutoff, now, tx),
        );
        if (!activation) return false;
        for (const hook of this.deactivationHooks) {
          await step('deactivation_write_failed', () => hook(activation.id, tx));
        }
        await step('deactivation_write_failed', () => done(activation, tx));
        return true;
      },
      transactionSteps('deactivation_transaction_failed', 'deactivation_commit_failed'),
    );
  }

  /**
   * Deactivates every active activation of a license in the caller's transaction (a transfer whose
   * sender did not keep the sites, docs/selling.md 'Transfers'), each with the deactivation hooks
   * (its download tokens stop). Answers how many were active.
   */
  async deactivateAllIn(licenseId: number, tx: Tx): Promise<number> {
    const active = await this.repo.activeActivationIdsOf(licenseId, tx);
    const now = iso(this.clock.now());
    for (const id of active) {
      await this.repo.deactivateActivation(id, now, tx);
      for (const hook of this.deactivationHooks) await hook(id, tx);
    }
    return active.length;
  }

  private async deactivateIn(
    licenseId: number,
    target: { activationId?: number; identity?: Identity },
    /** Runs last in the transaction, only when an active activation was deactivated. */
    done?: (activation: { id: number }, tx: Tx) => Promise<void>,
  ) {
    await withTransaction(
      this.repo.database,
      async (tx) => {
        await step('deactivation_read_failed', () => this.repo.lockLicense(licenseId, tx));
        const activation = await step('deactivation_read_failed', () =>
          target.activationId !== undefined
            ? this.repo.findActivation(licenseId, target.activationId, tx)
            : this.repo.findLatestByIdentity(licenseId, target.identity!.identity_key, tx),
        );
        if (!activation) throw new ApiError('no_activation');
        if (target.identity && activation.identity_key !== target.identity.identity_key) {
          throw new ApiError('no_activation');
        }
        // Deactivating twice is idempotent: the second call frees nothing and changes nothing.
        if (activation.status !== 'active') return;
        const now = iso(this.clock.now());
        await step('deactivation_write_failed', () => this.repo.deactivateActivation(activation.id, now, tx));
        for (const hook of this.deactivationHooks) {
          await step('deactivation_write_failed', () => hook(activation.id, tx));
        }
        if (done) await step('deactivation_write_failed', () => done(activation, tx));
      },
      transactionSteps('deactivation_transaction_failed', 'deactivation_commit_failed'),
    );
  }
}

/** An empty key is as good as none: 400 `missing_key`. */
function requireKey(key: string | undefined): string {
  if (key === undefined || key === '') throw new ApiError('missing_key');
  return key;
}

/**
 * Refuses a license whose base status, usage expiry or subscription forbids use (docs/licensing.md,
 * 'Effective status').
 */
function assertUsable(license: LicenseTerms, now: Date): void {
  const status = evaluateLicense(factsOf(license), now).effective_status;
  if (status !== 'valid') throw new ApiError(status);
}

/**
 * Deactivation names an activation id, or the complete identity (docs/licensing.md, '4.
 * Deactivate'); a domain alone is 400 `missing_identifier`. When an id comes with a complete
 * identity, both must agree.
 */
function deactivationTarget(input: DeactivateTarget): { activationId?: number; identity?: Identity } {
  const hasDomain = input.domain !== undefined && input.domain.trim() !== '';
  const hasInstallation = input.installation_id !== undefined && input.installation_id !== '';
  if (input.activation_id !== undefined) {
    return {
      activationId: input.activation_id,
      identity:
        hasDomain && hasInstallation ? resolveIdentity(input.domain, input.installation_id) : undefined,
    };
  }
  if (!hasDomain || !hasInstallation) throw new ApiError('missing_identifier');
  return { identity: resolveIdentity(input.domain, input.installation_id) };
}
