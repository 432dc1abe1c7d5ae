import type { Id } from '../../db/schema.js';

/** `account`: a customer's own download from /account/downloads (license and user, no site). */
export type TokenPolicy = 'protected' | 'public' | 'account';
export type TokenPurpose = 'install' | 'reinstall' | 'update';

export interface DistributionTables {
  /**
   * Single-use download tokens (docs/distribution.md, 'What a token is bound to'). Only the SHA-256
   * of the bearer string is stored; every column after it is Token Binding v1. Protected tokens
   * also bind the license and activation; account tokens the license and the customer (user_id).
   */
  download_tokens: {
    id: Id;
    token_hash: string;
    /**
     * Where the row is found with its hash: the time the bearer names (TokenBearers, bearer.ts).
     * Null on the tokens minted before locators, found by their hash alone.
     */
    token_locator: number | null;
    binding_version: number;
    policy: TokenPolicy;
    product_id: number;
    release_id: number;
    artifact_id: number;
    artifact_sha256: string;
    purpose: TokenPurpose;
    license_id: number | null;
    activation_id: number | null;
    activation_revision: number | null;
    identity_key: string | null;
    installation_id: string | null;
    domain_normalized: string | null;
    /** The customer an account token was minted for; null on every other token. */
    user_id: number | null;
    created_at: string;
    expires_at: string;
    /** Claim time; set once by the atomic claim and never cleared. */
    used_at: string | null;
    invalidated_at: string | null;
    invalidated_reason: string | null;
  };
}
