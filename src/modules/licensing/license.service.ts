import { type Clock, iso, rfc3339 } from '../../clock.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import { type Actor, diff, maskKey, type SystemActor, systemActor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import {
  type EntitlementPolicyInput,
  type PolicySnapshot,
  snapshotPolicy,
  usageExpiryOf,
} from '../catalogue/policy.js';
import { normaliseDomain } from '../identity/domain.js';
import type { Identity } from '../identity/identity.js';
import { isInstallationId } from '../identity/identity.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { Outbox } from '../webhooks/outbox.js';
import { step, transactionSteps } from './db-steps.js';
import { parseTimestamp } from './entitlements.js';
import type {
  LicenseFilter,
  LicensePatch,
  LicenseRepository,
  LicenseSearch,
  LicenseSort,
} from './license.repository.js';
import { type ActivationView, activationView, type LicenseView, licenseView } from './license.view.js';
import { generateLicenseKey } from './license-key.js';
import type { LicenseRecord } from './licensing.model.js';
import type { LicenseStatus } from './licensing.tables.js';

export interface CreateLicenseInput {
  product_id: number;
  variation_id?: number;
  user_id: number;
  license_key?: string;
  activation_limit?: number | null;
  usage_expires_at?: string | null;
  entitlement_policy?: EntitlementPolicyInput | null;
  order_id?: number | null;
  order_item_id?: number | null;
  subscription_id?: number | null;
  /** Issued for a test order (docs/payments.md, 'Test mode and live mode'); never from the API. */
  test?: boolean;
  /** A trial license (docs/selling.md, 'Trials'); only the trial service issues one. */
  trial?: boolean;
  /** Only an import sets another status (docs/migrating.md): as the old store had it. */
  status?: LicenseStatus;
}

export interface PatchLicenseInput {
  usage_expires_at?: string | null;
  activation_limit?: number | null;
  entitlement_policy?: EntitlementPolicyInput | null;
  /** `active` reinstates a suspended license; `suspended` stops it until then. */
  status?: 'active' | 'suspended';
}

/** Runs inside the revocation transaction (e.g. to invalidate outstanding download tokens). */
export type RevocationHook = (licenseId: number, tx: Tx) => Promise<void>;

/**
 * Runs inside the paid order's transaction when a license renewed by a subscription moves to
 * another tier (src/wiring.ts: the subscription renews at the new tier's price).
 */
export type SubscriptionUpgradeHook = (move: SubscriptionMove, tx: Tx) => Promise<void>;

/** A license a subscription renews, moved to another tier by a paid order. */
export interface SubscriptionMove {
  subscription_id: number;
  license_id: number;
  product_id: number;
  variation_id: number;
  /** The new tier's catalogue price, base minor units. */
  tier_price_minor: number;
  order_id: number;
}

export type CustomerLicenseView = LicenseView & {
  product: { id: number; name: string; slug: string | null };
  activations: ActivationView[];
};

/** A stored policy (JSON text) as the audit trail shows it: the object. */
const parsed = (text: unknown): unknown => (typeof text === 'string' ? JSON.parse(text) : null);

/** A usage expiry as given (RFC 3339) in its canonical stored form. */
function canonicalExpiry(text: string): string {
  const d = parseTimestamp(text);
  if (!d) {
    throw new ApiError('rest_invalid_param', {
      data: { params: { usage_expires_at: 'RFC 3339 timestamp' } },
    });
  }
  return rfc3339(d);
}

/** The query of the administrator's license list (docs/licensing.md, '7. For store administrators'). */
/** GET /licenses's filters; order_id is not offered there (the storefront's receipt uses it). */
export interface LicenseListQuery
  extends Pick<
    LicenseFilter,
    'product_id' | 'user_id' | 'order_id' | 'test' | 'expires_before' | 'expires_after'
  > {
  search?: string;
  status?: 'active' | 'revoked' | 'suspended' | 'expired';
  sort?: LicenseSort;
  order?: 'asc' | 'desc';
}

/**
 * What a search term may name (docs/licensing.md, '7. For store administrators'): the whole key or
 * its last four or more characters, the start of the customer's email, the start of a site's
 * domain (as typed, a URL or a host, normalised as activations store it), or an installation id.
 */
function searchTerms(term: string): LicenseSearch {
  const lower = term.toLowerCase();
  const search: LicenseSearch = { keys: [...new Set([term, term.toUpperCase()])], emailPrefix: lower };
  if (lower.length >= 4 && KEY_CHARACTERS.test(lower)) search.keyTail = lower;
  if (isInstallationId(lower)) search.installationId = lower;
  try {
    search.domainPrefix = normaliseDomain(term);
  } catch {
    // Not a host: no site is searched for.
  }
  return search;
}
const KEY_CHARACTERS = /^[a-z0-9._-]+$/;

/** A list bound in the stored form of usage_expires_at, so that it compares as text. */
function listTime(param: string, text: string): string {
  const d = parseTimestamp(text);
  if (!d) throw new ApiError('rest_invalid_param', { data: { params: { [param]: 'RFC 3339 timestamp' } } });
  return rfc3339(d);
}

/**
 * License administration (docs/licensing.md, '7. For store administrators') and the customer's
 * license list.
 */
export class LicenseService {
  private readonly revocationHooks: RevocationHook[] = [];
  private readonly subscriptionUpgradeHooks: SubscriptionUpgradeHook[] = [];

  constructor(
    private readonly repo: LicenseRepository,
    private readonly clock: Clock,
    private readonly settings: SettingsService,
    private readonly outbox: Outbox,
    private readonly users: Pick<AccountsService, 'getUser'>,
    private readonly audit: AuditService,
  ) {}

  /** The licenses of test orders and their activations, deleted in the caller's transaction (docs/payments.md). */
  deleteTestLicenses(tx: Tx): Promise<{ licenses: number; activations: number }> {
    return this.repo.deleteTestLicenses(tx);
  }

  /** Hooks run in the revocation transaction, after the status change and the event; a failure undoes all. */
  onRevoke(hook: RevocationHook): void {
    this.revocationHooks.push(hook);
  }

  /** Hooks run in the paid order's transaction after a subscription's license moved tier. */
  onSubscriptionUpgrade(hook: SubscriptionUpgradeHook): void {
    this.subscriptionUpgradeHooks.push(hook);
  }

  private async view(license: LicenseRecord, tx?: Tx): Promise<LicenseView> {
    const settings = await this.settings.get(tx);
    return licenseView(license, settings.default_activation_limit, this.clock.now());
  }

  private async find(id: number, tx?: Tx): Promise<LicenseRecord> {
    const license = await this.repo.findById(id, tx);
    if (!license) throw new ApiError('license_not_found');
    return license;
  }

  /**
   * A license its owner may buy the renewal of (docs/selling.md, 'Buying a renewal'): the owner's
   * (else 404, as for any license not theirs), not revoked, with a usage expiry and a term in days
   * to extend it by, and not linked to a subscription (a subscription renews it instead).
   */
  async renewable(id: number, userId: number, tx?: Tx): Promise<{ license: LicenseRecord; days: number }> {
    const license = await this.repo.findById(id, tx);
    if (!license || license.user_id !== userId) throw new ApiError('license_not_found');
    const days = renewalTerm(license);
    if (days === null) throw new ApiError('license_not_renewable');
    return { license, days };
  }

  /** The license a renewal link names (docs/selling.md, 'Renewals'): as `renewable`, the link standing for its owner. */
  async renewableByLink(id: number, tx?: Tx): Promise<LicenseRecord> {
    const license = await this.repo.findById(id, tx);
    if (!license) throw new ApiError('license_not_found');
    if (renewalTerm(license) === null) throw new ApiError('license_not_renewable');
    return license;
  }

  /**
   * The paid hook's renewal of one order item (in the order's transaction): the usage expiry moves
   * on by the license's term from the later of the payment and the old expiry, and so does an
   * updates window of its own (`days` from issue). Audited as the paying order. An item naming a
   * license that is not the order customer's, of another product, or no longer renewable extends
   * nothing.
   */
  async renewForOrder(
    item: { license_id: number; product_id: number },
    order: { id: number; customer_id: number },
    paidAt: Date,
    tx: Tx,
  ): Promise<boolean> {
    const license = await this.repo.findById(item.license_id, tx);
    if (!license || license.user_id !== order.customer_id || license.product_id !== item.product_id)
      return false;
    const days = renewalTerm(license);
    const oldEnd = license.usage_expires_at === null ? null : parseTimestamp(license.usage_expires_at);
    if (days === null || oldEnd === null) return false;
    const usage = rfc3339(renewedEnd(oldEnd, paidAt, days));
    const patch: LicensePatch = { usage_expires_at: usage, updated_at: iso(paidAt) };
    const snapshot = JSON.parse(license.entitlement_policy!) as PolicySnapshot;
    if (snapshot.updates.mode === 'days' && snapshot.updates.days !== undefined) {
      // The updates window is counted in whole days from issue: it ends on the new end's day or later.
      const issued = Date.parse(snapshot.issued_at);
      const oldCutoff = new Date(issued + snapshot.updates.days * DAY_MS);
      const cutoff = renewedEnd(oldCutoff, paidAt, days);
      snapshot.updates = { mode: 'days', days: Math.ceil((cutoff.getTime() - issued) / DAY_MS) };
      patch.entitlement_policy = JSON.stringify(snapshot);
    }
    await this.repo.updateLicense(license.id, patch, tx);
    const changes = diff(
      { usage_expires_at: license.usage_expires_at, entitlement_policy: parsed(license.entitlement_policy) },
      {
        usage_expires_at: usage,
        entitlement_policy: parsed(patch.entitlement_policy ?? license.entitlement_policy),
      },
    );
    await this.audit.record(
      systemActor(`order ${order.id}`),
      { entity_type: 'license', entity_id: license.id, action: 'renew', changes },
      tx,
    );
    // As a subscription's renewal announces it; a term license has no subscription: 0 (docs/webhooks.md).
    await this.outbox.record(
      'license.renewed',
      { license_id: license.id, subscription_id: 0, order_id: order.id },
      tx,
    );
    return true;
  }

  /**
   * A license that may change tier (docs/selling.md, 'Upgrades and downgrades'): the customer's
   * (else 404, as for any license not theirs; `userId` null for an administrator), active, not
   * expired, not a trial, and, when a subscription renews it, that subscription `active` (not
   * on hold, not cancelled or about to be: its billing moves with the license).
   */
  async upgradable(id: number, userId: number | null, tx?: Tx): Promise<LicenseRecord> {
    const license = await this.repo.findById(id, tx);
    if (!license || (userId !== null && license.user_id !== userId)) throw new ApiError('license_not_found');
    const end = license.usage_expires_at === null ? null : parseTimestamp(license.usage_expires_at);
    const expired = license.usage_expires_at !== null && (end === null || end <= this.clock.now());
    const renewing = license.subscription_id === null || license.subscription_status === 'active';
    if (license.status !== 'active' || expired || license.trial === 1 || !renewing) {
      throw new ApiError('license_not_upgradable');
    }
    return license;
  }

  /**
   * The paid hook's upgrade or downgrade of one order item (in the order's transaction): the key
   * and activations stay; the product, variation, activation limit and entitlement policy become
   * the new tier's, its periods counted from the payment (the unused share of the old one was
   * credited in the price); a license a subscription renews keeps its usage expiry, which the
   * subscription's renewals move on, and the subscription hooks move its billing to the new tier.
   * Emits `license.upgraded`, audited as the paying order. An item naming a license that is not
   * the customer's or no longer upgradable changes nothing.
   */
  async upgradeForOrder(
    item: {
      license_id: number;
      product_id: number;
      variation_id: number;
      activation_limit: number;
      entitlement_policy: EntitlementPolicyInput | null;
      tier_paid_minor: number;
    },
    order: { id: number; customer_id: number },
    paidAt: Date,
    tx: Tx,
  ): Promise<boolean> {
    let license: LicenseRecord;
    try {
      license = await this.upgradable(item.license_id, order.customer_id, tx);
    } catch (e) {
      if (e instanceof ApiError) return false;
      throw e;
    }
    const snapshot = item.entitlement_policy ? snapshotPolicy(item.entitlement_policy, paidAt) : null;
    const usage = snapshot ? usageExpiryOf(snapshot, paidAt) : null;
    const subscriptionId = license.subscription_id;
    const patch = {
      product_id: item.product_id,
      variation_id: item.variation_id,
      activation_limit: item.activation_limit,
      entitlement_policy: snapshot ? JSON.stringify(snapshot) : null,
      usage_expires_at: subscriptionId !== null ? license.usage_expires_at : usage ? rfc3339(usage) : null,
      tier_paid_minor: item.tier_paid_minor,
      updated_at: iso(paidAt),
    };
    await this.repo.updateLicense(license.id, patch, tx);
    if (subscriptionId !== null) {
      const move: SubscriptionMove = {
        subscription_id: subscriptionId,
        license_id: license.id,
        product_id: item.product_id,
        variation_id: item.variation_id,
        tier_price_minor: item.tier_paid_minor,
        order_id: order.id,
      };
      for (const hook of this.subscriptionUpgradeHooks) await hook(move, tx);
    }
    await this.outbox.record(
      'license.upgraded',
      {
        license_id: license.id,
        order_id: order.id,
        product_id: item.product_id,
        variation_id: item.variation_id,
        previous_product_id: license.product_id,
        previous_variation_id: license.variation_id,
      },
      tx,
    );
    const before = {
      product_id: license.product_id,
      variation_id: license.variation_id,
      activation_limit: license.activation_limit,
      entitlement_policy: parsed(license.entitlement_policy),
      usage_expires_at: license.usage_expires_at,
    };
    const after = { ...patch, entitlement_policy: snapshot } as Record<string, unknown>;
    delete after.updated_at;
    delete after.tier_paid_minor;
    await this.audit.record(
      systemActor(`order ${order.id}`),
      { entity_type: 'license', entity_id: license.id, action: 'upgrade', changes: diff(before, after) },
      tx,
    );
    return true;
  }

  async get(id: number): Promise<LicenseView & { activations: ActivationView[] }> {
    const license = await this.find(id);
    const activations = await this.repo.activationsOf([id]);
    return { ...(await this.view(license)), activations: activations.map(activationView) };
  }

  async activations(id: number): Promise<ActivationView[]> {
    await this.find(id);
    return (await this.repo.activationsOf([id])).map(activationView);
  }

  async list(query: LicenseListQuery, page: number, perPage: number) {
    const now = this.clock.now();
    const { sort = 'id', order, status, expires_before, expires_after, ...rest } = query;
    const { search, ...filters } = rest;
    const filter: LicenseFilter = { ...filters };
    if (search !== undefined && search.trim() !== '') filter.search = searchTerms(search.trim());
    // Expired is computed, not stored: by the one clock, so the test clock applies.
    if (status === 'expired') filter.expired_by = rfc3339(now);
    else if (status) filter.status = status;
    if (expires_before !== undefined) filter.expires_before = listTime('expires_before', expires_before);
    if (expires_after !== undefined) filter.expires_after = listTime('expires_after', expires_after);
    const by = {
      by: sort,
      order: order ?? (sort === 'id' || sort === 'created_at' ? 'desc' : 'asc'),
    } as const;
    const { rows, total } = await this.repo.list(filter, page, perPage, by);
    const settings = await this.settings.get();
    return {
      licenses: rows.map((r) => licenseView(r, settings.default_activation_limit, now)),
      total,
      page,
      per_page: perPage,
    };
  }

  /** The caller's licenses with product metadata, seats, entitlements and activations. */
  async listForCustomer(userId: number): Promise<CustomerLicenseView[]> {
    const rows = await this.repo.listByUser(userId);
    const activations = await this.repo.activationsOf(rows.map((r) => r.id));
    const settings = await this.settings.get();
    const now = this.clock.now();
    return rows.map((r) => ({
      ...licenseView(r, settings.default_activation_limit, now),
      product: { id: r.product_id, name: r.product_name ?? '', slug: r.product_slug },
      activations: activations.filter((a) => a.license_id === r.id).map(activationView),
    }));
  }

  /**
   * Issues a license. Without `activation_limit` the limit stays unset and is resolved on every
   * read (variation, product, global default), so a later change of those applies. Without
   * `entitlement_policy` the license is legacy. A policy whose usage mode is `days` sets the
   * usage expiry when none is given. With `tx` every query runs in the caller's transaction
   * (orders issue licenses inside theirs; on SQLite any other query would wait forever).
   */
  async create(input: CreateLicenseInput, tx?: Tx, actor?: Actor): Promise<LicenseView> {
    // An administrator's issue is recorded with it, so it runs in a transaction of its own.
    if (actor && !tx) return withTransaction(this.repo.database, (t) => this.create(input, t, actor));
    if (!(await this.repo.productExists(input.product_id, tx))) throw new ApiError('product_not_found');
    const variationId = input.variation_id ?? 0;
    if (variationId !== 0 && !(await this.repo.variationOf(input.product_id, variationId, tx))) {
      throw new ApiError('variation_not_found');
    }
    const userFound = tx
      ? await this.repo.userExists(input.user_id, tx)
      : !!(await this.users.getUser(input.user_id));
    if (!userFound) throw new ApiError('user_not_found');
    if (input.subscription_id != null && !(await this.repo.subscriptionExists(input.subscription_id, tx))) {
      throw new ApiError('subscription_not_found');
    }
    const now = this.clock.now();
    const snapshot = input.entitlement_policy ? snapshotPolicy(input.entitlement_policy, now) : null;
    let usage: string | null = null;
    if (input.usage_expires_at != null) usage = canonicalExpiry(input.usage_expires_at);
    else if (input.usage_expires_at === undefined && snapshot) {
      const implied = usageExpiryOf(snapshot, now);
      usage = implied ? rfc3339(implied) : null;
    }
    const values = {
      product_id: input.product_id,
      variation_id: variationId,
      order_id: input.order_id ?? null,
      order_item_id: input.order_item_id ?? null,
      user_id: input.user_id,
      subscription_id: input.subscription_id ?? null,
      status: input.status ?? ('active' as const),
      activation_limit: input.activation_limit ?? null,
      usage_expires_at: usage,
      entitlement_policy: snapshot ? JSON.stringify(snapshot) : null,
      test: input.test ? 1 : 0,
      trial: input.trial ? 1 : 0,
      tier_paid_minor: null,
      created_at: iso(now),
      updated_at: iso(now),
    };
    let id: number | undefined;
    // A purchase converts the customer's trial of the product in place: same key, same activations
    // (docs/selling.md, 'Trials'). The row lock makes a second, parallel purchase issue its own.
    const trialId =
      input.order_item_id != null && !input.trial
        ? await this.repo.lockTrialOf(input.user_id, input.product_id, tx)
        : undefined;
    if (trialId !== undefined) {
      const { created_at: _, ...paid } = values;
      await this.repo.updateLicense(trialId, { ...paid, trial: 0 }, tx);
      id = trialId;
    } else if (input.license_key !== undefined) {
      id = await this.repo.insertLicense({ ...values, license_key: input.license_key }, tx);
      if (id === undefined) throw new ApiError('license_key_exists');
    } else {
      // 125 random bits: a collision is practically impossible, but it must never be an error.
      for (let attempt = 0; id === undefined && attempt < 5; attempt++) {
        id = await this.repo.insertLicense({ ...values, license_key: generateLicenseKey() }, tx);
      }
      if (id === undefined) throw new ApiError('internal_error');
    }
    const created = await this.find(id, tx);
    if (actor && tx) {
      const after = { ...values, license_key: maskKey(created.license_key) } as Record<string, unknown>;
      delete after.created_at;
      delete after.updated_at;
      const changes = diff({}, after);
      if (changes.entitlement_policy) changes.entitlement_policy.after = parsed(values.entitlement_policy);
      await this.audit.record(
        actor,
        { entity_type: 'license', entity_id: id, action: 'create', changes },
        tx,
      );
    }
    return this.view(created, tx);
  }

  /**
   * Changes the usage expiry, the limit (null = inherit again) or the entitlement policy (null =
   * legacy). A new policy is snapshotted with the license's issue time as the start of its windows.
   */
  async patch(id: number, input: PatchLicenseInput, actor?: Actor): Promise<LicenseView> {
    return withTransaction(this.repo.database, (tx) => this.patchIn(id, input, tx, actor));
  }

  private async patchIn(id: number, input: PatchLicenseInput, tx: Tx, actor?: Actor): Promise<LicenseView> {
    const license = await this.find(id, tx);
    const patch: LicensePatch = {};
    if (input.usage_expires_at !== undefined) {
      patch.usage_expires_at =
        input.usage_expires_at === null ? null : canonicalExpiry(input.usage_expires_at);
    }
    if (input.activation_limit !== undefined) patch.activation_limit = input.activation_limit;
    if (input.status !== undefined && input.status !== license.status) {
      // Revocation is for good: only a suspension is taken back.
      if (license.status === 'revoked') throw new ApiError('license_revoked');
      patch.status = input.status;
    }
    if (input.entitlement_policy !== undefined) {
      const issuedAt = parseTimestamp(license.created_at) ?? this.clock.now();
      patch.entitlement_policy =
        input.entitlement_policy === null
          ? null
          : JSON.stringify(snapshotPolicy(input.entitlement_policy, issuedAt));
    }
    const changes = diff(license as unknown as Record<string, unknown>, patch as Record<string, unknown>);
    const policy = changes.entitlement_policy;
    if (policy) changes.entitlement_policy = { before: parsed(policy.before), after: parsed(policy.after) };
    if (Object.keys(patch).length > 0) {
      patch.updated_at = iso(this.clock.now());
      await this.repo.updateLicense(id, patch, tx);
    }
    if (actor && Object.keys(changes).length > 0) {
      await this.audit.record(
        actor,
        { entity_type: 'license', entity_id: id, action: 'update', changes },
        tx,
      );
    }
    return this.view(await this.find(id, tx), tx);
  }

  /**
   * Revokes, in one transaction: the status change, the `license.revoked` event and every
   * revocation hook commit together or not at all, and any failure is 500 `revoke_failed`.
   * Revoking a revoked license changes nothing and emits nothing.
   */
  async revoke(id: number, actor?: Actor): Promise<void> {
    await this.find(id);
    try {
      await withTransaction(
        this.repo.database,
        (tx) => step('revoke_failed', () => this.revokeIn(id, tx, actor)),
        transactionSteps('revoke_failed', 'revoke_failed'),
      );
    } catch (e) {
      // A hook's own refusal fails the revocation too: the caller learns only that it failed.
      if (e instanceof ApiError && e.code === 'revoke_failed') throw e;
      throw Object.assign(new ApiError('revoke_failed'), { cause: e });
    }
  }

  /**
   * The revocation itself, in the caller's transaction `tx` (a full refund revokes its order's
   * licenses in the refund's own): answers false when the license already was revoked.
   */
  async revokeIn(id: number, tx: Tx, actor?: Actor): Promise<boolean> {
    const before = await this.repo.findById(id, tx);
    // 1. The status; a license that already was revoked stops here (no second event).
    if (!before || !(await this.repo.revoke(id, iso(this.clock.now()), tx))) return false;
    // 2. The event, recorded in the same transaction: it is delivered only if this commits.
    await this.outbox.record('license.revoked', { license_id: id }, tx);
    // 3. What other modules do on a revocation (src/wiring.ts): its download tokens stop.
    for (const hook of this.revocationHooks) await hook(id, tx);
    // 4. The audit trail, when an administrator asked.
    if (actor) {
      const changes = { status: { before: before.status, after: 'revoked' } };
      await this.audit.record(
        actor,
        { entity_type: 'license', entity_id: id, action: 'revoke', changes },
        tx,
      );
    }
    return true;
  }

  /**
   * Suspends an active license in the caller's transaction (a full refund's, when the store's
   * `refund_license_action` is `suspend`): validate answers `license_inactive` until an
   * administrator sets it `active` again. Answers false when it was not active.
   */
  async suspendIn(id: number, tx: Tx, actor?: Actor): Promise<boolean> {
    if (!(await this.repo.suspend(id, iso(this.clock.now()), tx))) return false;
    if (actor) {
      const changes = { status: { before: 'active', after: 'suspended' } };
      await this.audit.record(
        actor,
        { entity_type: 'license', entity_id: id, action: 'update', changes },
        tx,
      );
    }
    return true;
  }

  /**
   * Takes a suspension back in the caller's transaction (a dispute the store won, when the dispute
   * had suspended the order's licenses). Answers false when the license was not suspended.
   */
  async reinstateIn(id: number, tx: Tx, actor: Actor | SystemActor): Promise<boolean> {
    if (!(await this.repo.reinstate(id, iso(this.clock.now()), tx))) return false;
    const changes = { status: { before: 'suspended', after: 'active' } };
    await this.audit.record(actor, { entity_type: 'license', entity_id: id, action: 'update', changes }, tx);
    return true;
  }

  /** The ids of the licenses issued for an order. */
  /** The license with this key, if any (the importer's natural key: a key is unique). */
  async idOfKey(key: string, tx?: Tx): Promise<number | undefined> {
    return (await this.repo.findByKey(key, tx))?.id;
  }

  /**
   * Imported licenses join their order or subscription imported by a later run (docs/migrating.md,
   * 'Orders and subscriptions imported later'): a link a license lacks is made, one it has is kept.
   * Answers what each of these licenses is linked to, to compare with what the import wants.
   */
  linksOf(
    licenseIds: number[],
    tx?: Tx,
  ): Promise<Map<number, { order_id: number | null; subscription_id: number | null }>> {
    return this.repo.linksOf(licenseIds, tx);
  }

  /**
   * Links an imported license to its order and its subscription, each only while it has none (a
   * link made meanwhile is kept). Answers which it linked now.
   */
  async linkImported(
    licenseId: number,
    links: { order_id?: number; subscription_id?: number },
    tx: Tx,
  ): Promise<{ order: boolean; subscription: boolean }> {
    const now = iso(this.clock.now());
    const link = (column: 'order_id' | 'subscription_id', target: number | undefined) =>
      target === undefined ? false : this.repo.linkUnset(licenseId, column, target, now, tx);
    return {
      order: await link('order_id', links.order_id),
      subscription: await link('subscription_id', links.subscription_id),
    };
  }

  /**
   * A site activation carried over from another store (docs/migrating.md, 'Importing'): known by
   * its URL alone, active, counted against the license like any other. The old store's seats are
   * kept as they were, so no limit is applied; the same site again is the activation already there.
   */
  async importActivation(
    licenseId: number,
    site: Identity,
    staging: boolean,
    tx: Tx,
  ): Promise<{ id: number; created: boolean }> {
    const existing = await this.repo.findActiveActivation(licenseId, site.identity_key, tx);
    if (existing) return { id: existing.id, created: false };
    const now = iso(this.clock.now());
    const id = await this.repo.insertActivation(
      {
        license_id: licenseId,
        identity_key: site.identity_key,
        domain: site.domain,
        domain_normalized: site.domain_normalized,
        installation_id: site.installation_id,
        ip_address: '',
        machine_id: null,
        user_agent: 'import',
        activated_at: now,
        ...(staging ? { environment: 'staging' as const } : {}),
      },
      tx,
    );
    return { id, created: true };
  }

  async idsOfOrder(orderId: number, tx?: Tx): Promise<number[]> {
    return this.repo.idsOfOrder(orderId, tx);
  }
}

const DAY_MS = 86_400_000;

/** The term in days a license's renewal adds, or null when it cannot be renewed by a purchase. */
export function renewalTerm(
  license: Pick<LicenseRecord, 'status' | 'usage_expires_at' | 'subscription_id' | 'entitlement_policy'>,
): number | null {
  if (license.status === 'revoked' || license.usage_expires_at === null || license.subscription_id !== null) {
    return null;
  }
  if (license.entitlement_policy === null || parseTimestamp(license.usage_expires_at) === null) return null;
  const snapshot = JSON.parse(license.entitlement_policy) as PolicySnapshot;
  return snapshot.usage.mode === 'days' && snapshot.usage.days !== undefined ? snapshot.usage.days : null;
}

/** A renewed end: `days` after the later of the payment (paid late) and the old end (paid early). */
export function renewedEnd(oldEnd: Date, paidAt: Date, days: number): Date {
  return new Date(Math.max(oldEnd.getTime(), paidAt.getTime()) + days * DAY_MS);
}
