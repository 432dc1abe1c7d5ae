import type { Tx } from '../../db/transaction.js';
import type { LastSeen } from './last-seen.js';
import type { LicenseRepository } from './license.repository.js';
import type { ActivationRow, LicenseForIdentity, LicenseRecord, LicenseRow } from './licensing.model.js';

/**
 * What other modules read of licenses and activations: distribution's update routes, its download
 * redemption and its token invalidation. They reach licensing's tables only through here.
 */
export class LicenseLookupService {
  constructor(
    private readonly repo: LicenseRepository,
    private readonly lastSeen: LastSeen | null = null,
  ) {}

  /**
   * An update check or package request identified the activation: its last_seen_at is refreshed
   * when due (at most once an hour, docs/licensing.md, 'Last seen and stale activations'). A
   * promise only when a write is made.
   */
  seen(activationId: number): Promise<void> | undefined {
    return this.lastSeen?.seen(activationId);
  }

  /**
   * The license as the update routes check it, with this identity's active activation and that
   * activation's revision, which a download token is bound to: the one precompiled read of the
   * update check (docs/performance.md). Without an identity (it did not resolve) the license alone,
   * so that the request still counts against the license's rate bucket.
   */
  forIdentity(key: string, identityKey: string | null): Promise<LicenseForIdentity | undefined> {
    if (identityKey !== null) return this.repo.findForIdentity(key, identityKey, { revision: true });
    return this.repo
      .findByKey(key)
      .then((l) => l && { ...l, identity_activation_id: null, identity_activation_revision: null });
  }

  /** The license and its subscription's status, locked in the caller's transaction (redemption). */
  lockWithSubscription(
    licenseId: number,
    tx: Tx,
  ): Promise<{ license: LicenseRow; subscriptionStatus: string | null } | undefined> {
    return this.repo.lockWithSubscription(licenseId, tx);
  }

  /** The activation, locked in the caller's transaction (redemption). */
  lockActivation(activationId: number, tx: Tx): Promise<ActivationRow | undefined> {
    return this.repo.lockActivation(activationId, tx);
  }

  /** One activation, any status: what a signed package link of the updaters in the field names. */
  activation(activationId: number): Promise<ActivationRow | undefined> {
    return this.repo.activationById(activationId);
  }

  /** The ids of every activation of the license (the download tokens of a revoked license). */
  activationIdsOf(licenseId: number, tx: Tx): Promise<number[]> {
    return this.repo.activationIdsOf(licenseId, tx);
  }

  /** Every activation of a license, active or not, oldest first (the LMFWC routes list them). */
  activationsOf(licenseId: number): Promise<ActivationRow[]> {
    return this.repo.activationsOf([licenseId]);
  }

  /**
   * The customer's licenses with their terms (product, subscription), oldest first, in one query:
   * the account's Downloads page (docs/storefront.md, 'Downloads').
   */
  ownedBy(userId: number): Promise<LicenseRecord[]> {
    return this.repo.listByUser(userId);
  }

  /** One license with its terms (an account download's mint re-checks it). */
  record(licenseId: number): Promise<LicenseRecord | undefined> {
    return this.repo.findById(licenseId);
  }

  /** Whether the user holds any license for the product (the purchaser test of external links). */
  hasLicenseFor(userId: number, productId: number): Promise<boolean> {
    return this.repo.hasLicenseFor(userId, productId);
  }
}
