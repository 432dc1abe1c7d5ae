import type { Tx } from '../../db/transaction.js';
import type { Actor, EntityType } from '../audit/audit.model.js';

/**
 * Small secrets that other modules keep in the database sealed with the vault key (the Stripe
 * settings, the signing key's private half). The vault module seals and opens them in the
 * encrypted vault's format, and its rotate-key re-seals them with the artifacts
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

/** One sealed file the rotation tried, as rotate-key reports it. */
export interface FileResealResult {
  artifact_id: number;
  from_key_id: string | null;
  ok: boolean;
  error?: string;
}

/**
 * A module whose sealed values are files too large to hand over (the releases module's encrypted
 * artifacts): it re-seals them itself, through its own storage, when the vault's rotation asks.
 */
export interface SealedFileHolder {
  /** How many live sealed files each key id sealed (files without a key id are left out). */
  sealedKeyCounts(): Promise<{ keyId: string; n: number }[]>;
  /** Seals every file not on `keyId` again with the current key; one result per file tried. */
  resealFiles(keyId: string, actor?: Actor): Promise<FileResealResult[]>;
}
