import { createHash, randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
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

  /**
   * Reads the generated key file when there is one (so artifacts sealed with it stay readable).
   * While there is neither a file nor VAULT_KEY it looks again each time: another server process
   * on the same DATA_DIR may generate the key and seal with it (a secret, the signing key).
   */
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
    this.loaded = text !== null || this.current !== null;
  }

  /** The key new artifacts are sealed with; generates the key file on first use. */
  async currentKey(): Promise<{ keyId: string; key: Buffer }> {
    await this.load();
    if (!this.current) {
      await mkdir(dirname(this.keyFile), { recursive: true, mode: 0o700 });
      const fresh = randomBytes(32);
      this.current = (await this.publish(fresh)) ? fresh : parseKeyFile(await readFile(this.keyFile, 'utf8'));
      await chmod(this.keyFile, 0o600).catch(() => {});
      this.keys.set(keyIdOf(this.current), this.current);
      this.loaded = true;
    }
    return { keyId: keyIdOf(this.current), key: this.current };
  }

  /**
   * Puts a new key file in place whole, or not at all: written and synced under a name of its own,
   * then hard-linked to the key file's name, which fails when the name exists. Of several processes
   * generating at once, one key wins and the others read it (false), never a file still being
   * written; and a crash cannot leave an empty key file behind while files sealed with it survive.
   */
  private async publish(key: Buffer): Promise<boolean> {
    const temporary = `${this.keyFile}.${process.pid}.${randomBytes(6).toString('hex')}.new`;
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(`${key.toString('base64')}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temporary, this.keyFile);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    } finally {
      await unlink(temporary).catch(() => {});
    }
    // The new name is durable once its directory is.
    const dir = await open(dirname(this.keyFile), 'r');
    await dir.sync().catch(() => {});
    await dir.close();
    return true;
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
