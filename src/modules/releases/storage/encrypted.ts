import { Readable, type Transform } from 'node:stream';
import type { Keyring } from '../../vault/keyring.js';
import { makeHeader } from '../../vault/seal.js';
import { Inspector } from '../inspect.js';
import { decryptChunks, EncryptStream, encryptedSize } from './crypto-stream.js';
import {
  type ArtifactRef,
  type DeleteOutcome,
  IntegrityError,
  type StagedFile,
  type StatSnapshot,
  type StorageDriver,
  type VerifyResult,
} from './driver.js';
import { deleteVaultFile, hashChunks, openVaultFile, statVaultFile } from './local.js';
import type { Vault } from './vault.js';

/** `local_encrypted`: the private vault, AES-256-GCM at rest (format in src/modules/vault/seal.ts). */
export class EncryptedVaultDriver implements StorageDriver {
  readonly name = 'local_encrypted';
  readonly managed = true;

  constructor(
    private readonly vault: Vault,
    private readonly keyring: Keyring,
  ) {}

  async put(source: Readable, storageKey: string, inspect?: Transform): Promise<StagedFile> {
    const { keyId, key } = await this.keyring.currentKey();
    const encrypt = new EncryptStream(key, makeHeader(keyId));
    const staged = await this.vault.stage(source, storageKey, inspect ? [inspect, encrypt] : [encrypt]);
    return { ...staged, keyId };
  }

  async open(ref: ArtifactRef): Promise<AsyncGenerator<Buffer, void, undefined>> {
    await this.keyring.load();
    const handle = await openVaultFile(this.vault.pathOf(ref.storageKey));
    return decryptChunks(handle, (id) => this.keyring.get(id), ref.keyId);
  }

  stat(ref: ArtifactRef): Promise<StatSnapshot> {
    return statVaultFile(this.vault.pathOf(ref.storageKey));
  }

  delete(ref: ArtifactRef): Promise<DeleteOutcome> {
    return deleteVaultFile(this.vault.pathOf(ref.storageKey));
  }

  /** One authenticated pass over the whole file in 64 KiB records, then size and SHA-256. */
  async verify(ref: ArtifactRef): Promise<VerifyResult> {
    await this.keyring.load();
    const path = this.vault.pathOf(ref.storageKey);
    const snapshot = await statVaultFile(path);
    if (!snapshot.exists) return { ok: false, reason: 'missing' };
    if (ref.keyId && !this.keyring.get(ref.keyId)) return { ok: false, reason: 'key_unavailable' };
    if (ref.fileSize !== null && snapshot.size !== encryptedSize(ref.fileSize)) {
      return { ok: false, reason: 'size_mismatch' };
    }
    try {
      const { size, sha256 } = await hashChunks(await this.open(ref));
      if (ref.fileSize !== null && size !== ref.fileSize) return { ok: false, reason: 'size_mismatch' };
      if (sha256 !== ref.sha256) return { ok: false, reason: 'hash_mismatch' };
      return { ok: true, snapshot };
    } catch (e) {
      if (e instanceof IntegrityError) return { ok: false, reason: e.reason };
      throw e;
    }
  }

  /**
   * Re-seals an artifact with the current key (key rotation): decrypt (authenticating as it
   * streams), re-encrypt into staging while hashing the plaintext, check the hash, then replace
   * the file in one rename. A failure leaves the old file as it was.
   */
  async reseal(ref: ArtifactRef): Promise<{ keyId: string; storedSize: number }> {
    const inspector = new Inspector();
    // Plaintext chunks are fresh buffers (never reused), so a stream may queue them.
    const plain = Readable.from(await this.open(ref), { objectMode: false });
    const staged = await this.put(plain, ref.storageKey, inspector);
    if (inspector.sha256 !== ref.sha256) {
      await staged.discard();
      throw new IntegrityError('hash_mismatch');
    }
    await staged.commit();
    return { keyId: staged.keyId!, storedSize: staged.storedSize };
  }
}
