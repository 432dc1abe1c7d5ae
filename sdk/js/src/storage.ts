import { randomBytes } from 'node:crypto';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { isRecord } from './errors.js';
import type { Receipt, SigningKey } from './signatures.js';

/** The last good receipt and the key list that verifies it (docs/licensing.md: store them together). */
export interface StoredReceipt {
  receipt: Receipt;
  keys: SigningKey[];
  /** When the SDK stored it, RFC 3339 by this machine's clock. */
  saved_at: string;
}

/**
 * Where validateWithGrace keeps the last good receipt: the app's own storage (a settings table,
 * a keychain, a file). A receipt holds no license key, but it is this site's proof of a license.
 */
export interface ReceiptStorage {
  /** The stored receipt, or null when there is none (or it cannot be read). */
  load(): Promise<StoredReceipt | null>;
  save(value: StoredReceipt): Promise<void>;
  clear(): Promise<void>;
}

/**
 * A ReceiptStorage in one JSON file, readable by its owner only (mode 0600). Written to a
 * temporary file and renamed, so a crash never leaves half a receipt.
 */
export class FileReceiptStorage implements ReceiptStorage {
  constructor(readonly path: string) {}

  async load(): Promise<StoredReceipt | null> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch {
      return null;
    }
    try {
      const value: unknown = JSON.parse(text);
      // What is inside is checked by verifyReceipt; here only that it has the parts.
      if (isRecord(value) && isRecord(value.receipt) && Array.isArray(value.keys)) {
        return value as unknown as StoredReceipt;
      }
    } catch {
      // A damaged file is no receipt.
    }
    return null;
  }

  async save(value: StoredReceipt): Promise<void> {
    const temporary = `${this.path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, JSON.stringify(value), { mode: 0o600, flag: 'wx' });
    try {
      await rename(temporary, this.path);
    } catch (e) {
      await unlink(temporary).catch(() => {});
      throw e;
    }
  }

  async clear(): Promise<void> {
    await unlink(this.path).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
  }
}
