import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { Actor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { Keyring } from './keyring.js';
import { CHUNK_SIZE, IntegrityError, openBytes, parseHeader, sealBytes } from './seal.js';
import type {
  FileResealResult,
  SealedFileHolder,
  SealedSecret,
  SealedSecretHolder,
  SecretVault,
} from './vault.model.js';

/** A sealed secret of another module, with its holder, its name in reports and the key id that sealed it. */
type HeldSecret = SealedSecret & { holder: SealedSecretHolder; name: string; keyId: string | null };

/** What a failed re-seal reports: the integrity check's reason, the error's code, or the file's state. */
export function resealFailure(e: unknown): string {
  if (e instanceof IntegrityError) return e.reason;
  if (e instanceof ApiError) return e.code;
  return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'io_error';
}

/**
 * The store-wide key vault: the keyring (VAULT_KEY, VAULT_PREVIOUS_KEYS or the generated key
 * file), sealing and opening small secrets in the vault's format, and key rotation over every
 * holder of sealed values registered in src/wiring.ts (docs/releases.md, 'Rotating the key').
 */
export class KeyVault implements SecretVault {
  private readonly secretHolders: SealedSecretHolder[] = [];
  private readonly fileHolders: SealedFileHolder[] = [];

  constructor(
    private readonly database: Pick<Database, 'db'>,
    readonly keyring: Keyring,
    /** Records each re-sealed secret (docs/admin.md, 'Audit trail'). */
    private readonly audit: AuditService,
    /** VAULT_KEY is set (the status names the key's source). */
    private readonly envKeySet: boolean,
  ) {}

  /** A module whose small secrets rotation re-seals (in the order registered). */
  holdSecrets(holder: SealedSecretHolder): void {
    this.secretHolders.push(holder);
  }

  /** A module whose sealed files rotation asks to re-seal, before the secrets. */
  holdFiles(holder: SealedFileHolder): void {
    this.fileHolders.push(holder);
  }

  /**
   * A small secret sealed with the vault's current key (VAULT_KEY, or the generated key file), in
   * the encrypted vault's format: what another module stores in the database at rest (the signing
   * keys, docs/administration.md, 'Signing keys').
   */
  async sealSecret(plain: Buffer): Promise<Buffer> {
    const { keyId, key } = await this.keyring.currentKey();
    return sealBytes(key, keyId, plain);
  }

  /** The plaintext of `sealSecret`, with whichever configured vault key sealed it; else an IntegrityError. */
  async openSecret(sealed: Buffer): Promise<Buffer> {
    await this.keyring.load();
    return openBytes(sealed, (id) => this.keyring.get(id));
  }

  /** The `encryption` part of the storage status: the keys, and what is sealed with which. */
  async status() {
    const [keys, secrets, files] = await Promise.all([
      this.keyring.status(this.envKeySet),
      this.sealedSecrets(),
      Promise.all(this.fileHolders.map((h) => h.sealedKeyCounts())),
    ]);
    let onPrevious = 0;
    let unknownKey = 0;
    for (const { keyId, n } of files.flat()) {
      if (keyId === keys.keyId) continue;
      if (keys.previousKeyIds.includes(keyId)) onPrevious += n;
      else unknownKey += n;
    }
    const secretsOld = secrets.filter((x) => x.keyId !== keys.keyId);
    const secretsOnPrevious = secretsOld.filter((x) => keys.previousKeyIds.includes(x.keyId ?? '')).length;
    return {
      algorithm: 'AES-256-GCM',
      chunk_size: CHUNK_SIZE,
      key_source: keys.source,
      key_id: keys.keyId,
      key_file: keys.source === 'env' ? null : keys.keyFile,
      key_file_mode: keys.source === 'env' ? null : keys.keyFileMode,
      previous_key_ids: keys.previousKeyIds,
      artifacts_on_previous_keys: onPrevious,
      artifacts_with_unknown_key: unknownKey,
      secrets_on_previous_keys: secretsOnPrevious,
      secrets_with_unknown_key: secretsOld.length - secretsOnPrevious,
    };
  }

  /**
   * Re-seals everything not on the current key (after VAULT_KEY changed and the old key went to
   * VAULT_PREVIOUS_KEYS): first the files, each by its holder, then every small secret. A failure
   * leaves that value as it was and is reported; the audit trail gets key ids, never a key.
   */
  async rotateKey(actor?: Actor) {
    const { keyId } = await this.keyring.currentKey();
    const results: FileResealResult[] = [];
    for (const holder of this.fileHolders) results.push(...(await holder.resealFiles(keyId, actor)));
    const secrets: { secret: string; from_key_id: string | null; ok: boolean; error?: string }[] = [];
    for (const x of await this.sealedSecrets()) {
      if (x.keyId === keyId) continue;
      try {
        // A secret the administrator changed meanwhile is sealed with the current key already;
        // it is reported, and the next rotation finds nothing left to do for it.
        if (await this.resealSecret(x, keyId, actor))
          secrets.push({ secret: x.name, from_key_id: x.keyId, ok: true });
        else secrets.push({ secret: x.name, from_key_id: x.keyId, ok: false, error: 'changed' });
      } catch (e) {
        secrets.push({ secret: x.name, from_key_id: x.keyId, ok: false, error: resealFailure(e) });
      }
    }
    return {
      key_id: keyId,
      resealed: results.filter((r) => r.ok).length,
      results,
      secrets_resealed: secrets.filter((r) => r.ok).length,
      secrets,
    };
  }

  /**
   * The sealed secrets (`holder.id`) that none of this process's vault keys opens: a process
   * started with another VAULT_KEY than the store's other processes. src/cli.ts refuses to start
   * with any, and /v1/health reports them (docs/operations.md, 'The same keys and files for every process').
   */
  async unopenableSecrets(): Promise<string[]> {
    const names: string[] = [];
    for (const x of await this.sealedSecrets()) {
      try {
        (await this.openSecret(x.sealed)).fill(0);
      } catch (e) {
        if (!(e instanceof IntegrityError)) throw e;
        names.push(x.name);
      }
    }
    return names;
  }

  /** Every sealed secret of the holders, named `holder.id`, with the key id that sealed it. */
  private async sealedSecrets(): Promise<HeldSecret[]> {
    const all: HeldSecret[] = [];
    for (const holder of this.secretHolders) {
      for (const secret of await holder.sealedSecrets()) {
        const keyId = parseHeader(secret.sealed)?.keyId ?? null;
        all.push({ ...secret, holder, name: `${holder.sealedName}.${secret.id}`, keyId });
      }
    }
    return all;
  }

  /**
   * Opened with whichever configured key sealed it, sealed again with the current key, and swapped
   * in only if it is still the value read (a change by the administrator meanwhile wins: false),
   * in one transaction with its audit entry (key ids only, never a secret).
   */
  private async resealSecret(x: HeldSecret, keyId: string, actor?: Actor): Promise<boolean> {
    const plain = await this.openSecret(x.sealed);
    const after = await this.sealSecret(plain);
    plain.fill(0);
    return withTransaction(this.database, async (tx) => {
      if (!(await x.holder.replaceSealed(x.id, x.sealed, after, tx))) return false;
      if (actor) {
        await this.audit.record(
          actor,
          {
            entity_type: x.holder.sealedName,
            entity_id: x.entityId,
            action: 'rotate_key',
            changes: { [`${x.field}.key_id`]: { before: x.keyId, after: keyId } },
          },
          tx,
        );
      }
      return true;
    });
  }
}
