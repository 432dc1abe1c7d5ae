import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Keys of the encrypted vault. The current key is VAULT_KEY (base64 of 32 bytes) when set, else
 * a key generated once into DATA_DIR/vault.key (mode 0600) on first use. Older keys stay readable:
 * VAULT_PREVIOUS_KEYS, and the generated file's key when VAULT_KEY has replaced it. Each artifact
 * records the id of the key that sealed it, so rotation never guesses.
 */

export type KeySource = 'env' | 'file' | 'not_generated';

/** A key's public name: the first 8 bytes of a domain-separated SHA-256, as 16 hex characters. */
export const keyIdOf = (key: Buffer): string =>
  createHash('sha256').update('tollgate-vault-key-id\0').update(key).digest('hex').slice(0, 16);

export interface KeyringStatus {
  source: KeySource;
  keyId: string | null;
  keyFile: string;
  keyFileMode: string | null;
  previousKeyIds: string[];
}

function parseKeyFile(text: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new Error('the vault key file does not hold base64 of 32 bytes');
  return key;
}

export class Keyring {
  private current: Buffer | null;
  private readonly keys = new Map<string, Buffer>();
  private loaded = false;

  constructor(
    envKey: Buffer | null,
    previous: Buffer[],
    private readonly keyFile: string,
  ) {
    this.current = envKey;
    for (const k of [...previous, ...(envKey ? [envKey] : [])]) this.keys.set(keyIdOf(k), k);
  }

  /** Reads the generated key file when there is one (so artifacts sealed with it stay readable). */
  async load(): Promise<void> {
    if (this.loaded) return;
    const text = await readFile(this.keyFile, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return null;
      throw e;
    });
    if (text !== null) {
      const key = parseKeyFile(text);
      this.keys.set(keyIdOf(key), key);
      this.current ??= key;
    }
    this.loaded = true;
  }

  /** The key new artifacts are sealed with; generates the key file on first use. */
  async currentKey(): Promise<{ keyId: string; key: Buffer }> {
    await this.load();
    if (!this.current) {
      await mkdir(dirname(this.keyFile), { recursive: true, mode: 0o700 });
      const fresh = randomBytes(32);
      try {
        // Exclusive create: of several processes starting at once, one key wins and all use it.
        await writeFile(this.keyFile, `${fresh.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
        this.current = fresh;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        this.current = parseKeyFile(await readFile(this.keyFile, 'utf8'));
      }
      await chmod(this.keyFile, 0o600).catch(() => {});
      this.keys.set(keyIdOf(this.current), this.current);
    }
    return { keyId: keyIdOf(this.current), key: this.current };
  }

  /** The key with this id, or null when it is not configured (a rotated-away key). */
  get(keyId: string): Buffer | null {
    return this.keys.get(keyId) ?? null;
  }

  async status(envKeySet: boolean): Promise<KeyringStatus> {
    await this.load();
    const s = await stat(this.keyFile).catch(() => null);
    const currentId = this.current ? keyIdOf(this.current) : null;
    return {
      source: envKeySet ? 'env' : this.current ? 'file' : 'not_generated',
      keyId: currentId,
      keyFile: this.keyFile,
      keyFileMode: s ? `0${(s.mode & 0o777).toString(8)}` : null,
      previousKeyIds: [...this.keys.keys()].filter((id) => id !== currentId),
    };
  }
}
