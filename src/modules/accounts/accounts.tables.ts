import type { Generated } from 'kysely';
import type { Id } from '../../db/schema.js';

export type Role = 'administrator' | 'customer';

export interface AccountsTables {
  users: {
    id: Id;
    email: string;
    password_hash: string;
    /** 0 while the account has only checkout's unusable hash (docs/storefront.md, 'Set a password'). */
    password_set: Generated<number>;
    role: Role;
    first_name: string;
    last_name: string;
    created_at: string;
    updated_at: string;
  };
  sessions: { id_hash: string; user_id: number; nonce: string; created_at: string; expires_at: string };
  application_passwords: {
    id: Id;
    uuid: string;
    user_id: number;
    name: string;
    password_hash: string;
    created_at: string;
    last_used_at: string | null;
  };
  /** Forgot-password, set-your-password and sign-in links (docs/email.md): only the SHA-256 of a token is kept. */
  password_tokens: {
    id: Id;
    token_hash: string;
    user_id: number;
    purpose: PasswordTokenPurpose;
    expires_at: string;
    used_at: string | null;
    created_at: string;
  };
}

/**
 * `reset`: forgot password (1 hour); `welcome`: set the password of an account made at checkout
 * (7 days); `signin`: a one-time sign-in link (15 minutes), which sets no password.
 */
export type PasswordTokenPurpose = 'reset' | 'welcome' | 'signin';
