import { type Cipher, createCipheriv, createDecipheriv, type Decipher } from 'node:crypto';
import type { AppSecrets } from '../../db/app-secrets.js';
import { randomFill, randomHex } from '../../random.js';

const SECRET_KEY = 'download_token_secret';
/** Milliseconds since 1970 in 6 bytes: enough until the year 10889. */
const TIME_BYTES = 6;

/** A new download token: the bearer string, and the locator its row is stored and found under. */
export interface Bearer {
  bearer: string;
  locator: number;
}

/**
 * The single-use download token's bearer string and its locator (docs/distribution.md, 'What a
 * token is'). A bearer is 64 lowercase hex characters, 32 bytes: the first 16 are one AES-256 block,
 * the encryption under the store's token secret (AppSecrets `download_token_secret`) of the time it
 * was minted (milliseconds, 6 bytes) and 10 random bytes; the last 16 are random. It reads as 32
 * random bytes to anyone without the secret.
 *
 * Why a locator: the row is found by (locator, SHA-256 of the bearer) instead of the hash alone.
 * Locators grow with time, so each new token's index entry goes at the end of the index, on a page
 * the same turn's other tokens share; an index on the hash alone put each token on a random page of
 * its own, which SQLite wrote to the WAL at every commit and copied back at every checkpoint: about
 * 9 of a token write's 23 µs of CPU (docs/performance.md, 'Download token locators').
 *
 * One AES block encrypted alone is a pseudorandom permutation of it; the block is never reused,
 * since it holds the time and 10 random bytes, so no two bearers share their first half. The
 * cipher objects are kept and given one block at a time (no padding, no chaining between blocks).
 */
export class TokenBearers {
  private ciphers: { cipher: Cipher; decipher: Decipher } | null = null;
  private loading: Promise<void> | null = null;

  constructor(private readonly secrets: AppSecrets) {}

  /** Whether the secret is loaded: after the process's first mint or redemption. */
  get loaded(): boolean {
    return this.ciphers !== null;
  }

  /** Loads the secret (created by the first process that asks for it, AppSecrets). */
  load(): Promise<void> {
    this.loading ??= this.secrets.get(SECRET_KEY).then(
      (key) => {
        this.ciphers = {
          cipher: createCipheriv('aes-256-ecb', key, null).setAutoPadding(false),
          decipher: createDecipheriv('aes-256-ecb', key, null).setAutoPadding(false),
        };
      },
      (e) => {
        this.loading = null;
        throw e;
      },
    );
    return this.loading;
  }

  /** A new bearer minted at `nowMs`; only once `loaded`. */
  mint(nowMs: number): Bearer {
    if (!this.ciphers) throw new Error('TokenBearers: the secret is not loaded');
    const block = Buffer.allocUnsafe(16);
    block.writeUIntBE(nowMs, 0, TIME_BYTES);
    randomFill(block, TIME_BYTES);
    const head = this.ciphers.cipher.update(block);
    block.fill(0);
    return { bearer: head.toString('hex') + randomHex(16), locator: nowMs };
  }

  /**
   * The locator a 64-hex-character bearer names. Any such string decrypts to one: a bearer this
   * store did not mint (or minted before locators, whose rows have none) finds no row under it.
   */
  async locate(bearer: string): Promise<number> {
    if (!this.ciphers) await this.load();
    const block = this.ciphers!.decipher.update(Buffer.from(bearer.slice(0, 32), 'hex'));
    return block.readUIntBE(0, TIME_BYTES);
  }
}
