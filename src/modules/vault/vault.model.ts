import type { Tx } from '../../db/transaction.js';
import type { EntityType } from '../audit/audit.model.js';

/**
 * Small secrets that other modules keep in the database sealed with the vault key (the Stripe
 * settings, the signing key's private half). The releases module's artifact storage seals and opens
 * them in the encrypted vault's format, and its rotate-key re-seals them with the artifacts
 * (docs/releases.md, 'Rotating the key').
 */
export interface SecretVault {
  sealSecret(plain: Buffer): Promise<Buffer>;
  openSecret(sealed: Buffer): Promise<Buffer>;
}

/** One sealed value a module holds, with the row and field the audit trail names. */
export interface SealedSecret {
  /** The holder's own name for it: a setting's name, a signing key's id. */
  id: string;
  /** The audited row (the settings are row 0). */
  entityId: number;
  field: string;
  sealed: Buffer;
}

/** A module that holds sealed secrets: what rotate-key and the storage status read and re-seal. */
export interface SealedSecretHolder {
  /** Names the holder in reports and the audit trail: `settings`, `signing_key`. */
  readonly sealedName: EntityType;
  sealedSecrets(): Promise<SealedSecret[]>;
  /** Stores `after` in place of `before` within `tx`; false when the value changed meanwhile. */
  replaceSealed(id: string, before: Buffer, after: Buffer, tx: Tx): Promise<boolean>;
}
