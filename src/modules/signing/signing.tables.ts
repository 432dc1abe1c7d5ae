import type { Id } from '../../db/schema.js';

export interface SigningTables {
  /** Migration 2026112480_signing_keys; docs/administration.md, 'Signing keys'. */
  signing_keys: {
    id: Id;
    /** `k1-` and the first 8 hex characters of the raw public key's SHA-256. */
    key_id: string;
    algorithm: string;
    /** The raw 32-byte Ed25519 public key, base64. */
    public_key: string;
    /** The 32-byte private seed sealed with the vault key, base64; null once retired. */
    private_key: string | null;
    created_at: string;
    /** null while the key is the active one. */
    retired_at: string | null;
  };
}
