import type { Generated } from 'kysely';
import type { Id } from '../../db/schema.js';

/** `suspended`: reversible (a full refund may suspend; an administrator sets it `active` again). */
export type LicenseStatus = 'active' | 'revoked' | 'suspended';
/** `replaced`: a newer offer of the same license took its place. Expiry is computed from `expires_at`. */
export type TransferStatus = 'pending' | 'accepted' | 'cancelled' | 'replaced';
export type ActivationStatus = 'active' | 'deactivated';
/** Where a site runs (docs/licensing.md, '2.3 Staging and development sites'). */
export type ActivationEnvironment = 'production' | 'staging';

export interface LicensingTables {
  licenses: {
    id: Id;
    license_key: string;
    product_id: number;
    /** 0 when the product is simple. */
    variation_id: number;
    order_id: number | null;
    order_item_id: number | null;
    user_id: number;
    subscription_id: number | null;
    status: LicenseStatus;
    /** null = resolved on every read (variation, then product, then the global default); 0 = unlimited. */
    activation_limit: number | null;
    /** Usage expiry as stored (RFC 3339 when written here); text, so a legacy unreadable value survives. */
    usage_expires_at: string | null;
    /** JSON snapshot of the entitlement policy, or null for a legacy license. */
    entitlement_policy: string | null;
    /** 1 when issued for a test order (docs/payments.md, 'Test mode and live mode'). */
    test: Generated<number>;
    /** 1 while a trial (docs/selling.md, 'Trials'); the purchase of its product sets it 0. */
    trial: Generated<number>;
    /** The worth of the current tier once an upgrade moved the license there, in base minor units (docs/selling.md, 'Upgrades and downgrades'); null = the issuing order item's. */
    tier_paid_minor: number | null;
    created_at: string;
    updated_at: string;
  };
  /** One row per product and email (`kind` 'email') and per product and site ('site'); unique. */
  trial_claims: {
    id: Id;
    product_id: number;
    kind: 'email' | 'site';
    value: string;
    license_id: number;
    created_at: string;
  };
  /** Offers of a license to another customer (docs/selling.md, 'Transfers'); migration 2026113001. */
  license_transfers: {
    id: Id;
    license_id: number;
    from_user_id: number;
    to_email: string;
    /** 1: the sites stay activated; 0: every active activation is deactivated on accept. */
    keep_activations: number;
    status: TransferStatus;
    /** SHA-256 of the emailed link's token, set when the email is sent; null before. */
    token_hash: string | null;
    to_user_id: number | null;
    /** Who offered it: the owner (an administrator) or the license's customer. */
    created_by: number;
    expires_at: string;
    accepted_at: string | null;
    cancelled_at: string | null;
    created_at: string;
    updated_at: string;
  };
  activations: {
    id: Id;
    license_id: number;
    identity_key: string;
    domain: string;
    domain_normalized: string;
    installation_id: string;
    ip_address: string;
    machine_id: string | null;
    user_agent: string;
    status: ActivationStatus;
    activated_at: string;
    deactivated_at: string | null;
    /** Starts at 1; every change of the binding (deactivation) adds one, so tokens bound to it fail. */
    activation_revision: Generated<number>;
    updated_at: string;
    /** 'staging' when the domain matched `staging_patterns` at activation; only production counts against the limit. */
    environment: Generated<ActivationEnvironment>;
    /**
     * null for an ordinary deactivation; 'reinstalled' when a reinstall took the activation over;
     * 'stale' when it was not seen for `stale_activation_days`.
     */
    deactivation_reason: string | null;
    /** The activation that took this one over (a reinstall), else null. */
    replaced_by: number | null;
    /**
     * When the site was last heard from: set at activation, refreshed by validate, update checks and
     * package requests at most once an hour (LastSeen); null only before migration 2026112596 ran.
     */
    last_seen_at: string | null;
  };
}
