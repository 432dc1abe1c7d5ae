import type { Id } from '../../db/schema.js';

export interface OAuthTables {
  oauth_activation_tokens: {
    id: Id;
    /** SHA-256 hex of the token; the token itself is never stored. */
    token_hash: string;
    license_id: number;
    /** The approved identity: the exchange must present exactly this one. */
    identity_key: string;
    domain_normalized: string;
    installation_id: string;
    /** The customer who approved. */
    user_id: number;
    created_at: string;
    expires_at: string;
    /** Set once, by the exchange that claims the token. */
    used_at: string | null;
  };
}
