import type { Selectable } from 'kysely';
import type { LicensingTables } from './licensing.tables.js';

/** Licenses and activations as stored and as the licensing rules read them; other modules use these types, never the repository. */
export type LicenseRow = Selectable<LicensingTables['licenses']>;
export type ActivationRow = Selectable<LicensingTables['activations']>;

/** A license with what its views and rules need from the product, variation, owner and subscription. */
export interface LicenseRecord extends LicenseRow {
  product_name: string | null;
  product_slug: string | null;
  product_activation_limit: number | null;
  product_activation_mode: string | null;
  variation_name: string | null;
  /** null when the license names no variation, or one that no longer exists. */
  variation_found: number | null;
  variation_activation_limit: number | null;
  user_email: string | null;
  user_first_name: string | null;
  user_last_name: string | null;
  subscription_found: number | null;
  subscription_status: string | null;
  activation_count: number;
}

/** What the licensing rules read of a license: its own columns and the limits and subscription around it. */
export type LicenseTerms = Pick<
  LicenseRecord,
  | 'id'
  | 'license_key'
  | 'product_id'
  | 'variation_id'
  | 'subscription_id'
  | 'status'
  | 'activation_limit'
  | 'usage_expires_at'
  | 'entitlement_policy'
  | 'created_at'
  | 'trial'
  | 'product_activation_limit'
  | 'product_activation_mode'
  | 'variation_found'
  | 'variation_activation_limit'
  | 'subscription_found'
  | 'subscription_status'
  | 'activation_count'
>;

/** A license as the identity lookup answers it: the facts, and this identity's active activation. */
export type LicenseForIdentity = LicenseTerms & {
  identity_activation_id: number | null;
  /**
   * That activation's revision, which a download token is bound to (docs/distribution.md); null
   * unless asked for.
   */
  identity_activation_revision: number | null;
};
