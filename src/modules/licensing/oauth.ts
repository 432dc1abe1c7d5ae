import type { Tx } from '../../db/transaction.js';
import type { Identity } from '../identity/identity.js';
import type { LicenseRecord } from './licensing.model.js';

/**
 * The seam for customer-approval (OAuth-style) activation (docs/oauth.md). Licensing decides WHEN
 * approval is required (product override, else the store setting) and checks return_url; the
 * OAuth part (OAuthService, given to ActivationService by createLicensing) plugs in HOW: signed
 * state, the approval page, activation tokens. A service built without one refuses approval-mode
 * activations with 501 `oauth_unavailable` instead of handing out a redirect that leads nowhere.
 */
export interface OAuthActivation {
  /** Starts approval for this identity; returns the opaque redirect_url of the `oauth_required` answer. */
  begin(request: {
    license: Pick<LicenseRecord, 'id' | 'license_key'>;
    identity: Identity;
    return_url: string;
    machine_id: string | null;
  }): Promise<{ redirect_url: string }>;
  /**
   * Consumes a single-use activation token inside the activation transaction, so a failed
   * activation leaves it unused. Throws `invalid_token` (unknown, expired, other identity or
   * license) or `token_consumed`.
   */
  consume(token: string, binding: { license_id: number; identity: Identity }, tx: Tx): Promise<void>;
}
