import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { shortLived } from '../../../memory.js';
import { IntegrityError } from './driver.js';
import { borrowReadBuffer, closingUnread, returnReadBuffer } from './local.js';

/**
 * The encrypted-at-rest format (`local_encrypted`), AES-256-GCM in 64 KiB chunks:
 *
 *   header  36 bytes  "TGVE" | version 1 | 3 zero bytes | chunk size u32 BE | key id (8 bytes)
 *                     | file id (16 random bytes)
 *   record  per chunk nonce (12 random bytes) | ciphertext (chunk size, the last one ≤) | tag (16)
 *
 * Every record's additional authenticated data is the whole header, the record's index (u64 BE)
 * and a final-record flag. So a flipped bit fails its tag; swapped or reordered records fail on
 * the index; a file cut at a record boundary fails because the new last record was sealed as
 * not-final; appended bytes fail because the real last record is then read as not-final; a record
 * moved from another file fails on the file id. Plaintext of exactly n chunks ends with a full
 * final record; an empty plaintext is one empty final record.
 */

export const CHUNK_SIZE = 64 * 1024;
export const HEADER_SIZE = 36;
const MAGIC = Buffer.from('TGVE', 'ascii');
const FORMAT_VERSION = 1;
const NONCE = 12;
const TAG = 16;
export const RECORD_OVERHEAD = NONCE + TAG;

export function makeHeader(keyId: string, chunkSize = CHUNK_SIZE): Buffer {
  const header = Buffer.alloc(HEADER_SIZE);
  MAGIC.copy(header, 0);
  header.writeUInt8(FORMAT_VERSION, 4);
  header.writeUInt32BE(chunkSize, 8);
  Buffer.from(keyId, 'hex').copy(header, 12, 0, 8);
  randomBytes(16).copy(header, 20);
  return header;
}

export interface ParsedHeader {
  chunkSize: number;
  keyId: string;
}

export function parseHeader(header: Buffer): ParsedHeader | null {
  if (header.length < HEADER_SIZE || !header.subarray(0, 4).equals(MAGIC)) return null;
  if (header.readUInt8(4) !== FORMAT_VERSION) return null;
  const chunkSize = header.readUInt32BE(8);
  if (chunkSize < 1 || chunkSize > 16 * 1024 * 1024) return null;
  return { chunkSize, keyId: header.subarray(12, 20).toString('hex') };
}

function aad(header: Buffer, index: bigint, final: boolean): Buffer {
  const a = Buffer.alloc(HEADER_SIZE + 9);
  header.copy(a, 0);
  a.writeBigUInt64BE(index, HEADER_SIZE);
  a.writeUInt8(final ? 1 : 0, HEADER_SIZE + 8);
  return a;
}

/** Stored size of a plaintext of `size` bytes. */
export function encryptedSize(size: number, chunkSize = CHUNK_SIZE): number {
  const records = Math.max(1, Math.ceil(size / chunkSize));
  return HEADER_SIZE + size + records * RECORD_OVERHEAD;
}

/** Plaintext in, the encrypted format out; memory stays at one chunk. */
export class EncryptStream extends Transform {
  private readonly acc: Buffer;
  private accLen = 0;
  private index = 0n;
  private headerSent = false;

  constructor(
    private readonly key: Buffer,
    private readonly header: Buffer,
  ) {
    super({ highWaterMark: 4 * CHUNK_SIZE });
    this.acc = Buffer.allocUnsafe(parseHeader(header)!.chunkSize);
  }

  private seal(plain: Buffer, final: boolean): void {
    if (!this.headerSent) {
      this.push(this.header);
      this.headerSent = true;
    }
    const nonce = randomBytes(NONCE);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(aad(this.header, this.index, final));
    const body = cipher.update(plain);
    const tail = cipher.final();
    this.push(nonce);
    this.push(body);
    if (tail.length > 0) this.push(tail);
    this.push(cipher.getAuthTag());
    shortLived(body.length);
    this.index += 1n;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    let offset = 0;
    while (offset < chunk.length) {
      // A full buffer is sealed as not-final only once more data proves it is not the last.
      if (this.accLen === this.acc.length) {
        this.seal(this.acc, false);
        this.accLen = 0;
      }
      const n = Math.min(this.acc.length - this.accLen, chunk.length - offset);
      chunk.copy(this.acc, this.accLen, offset, offset + n);
      this.accLen += n;
      offset += n;
    }
    cb();
  }

  override _flush(cb: TransformCallback): void {
    this.seal(Buffer.from(this.acc.subarray(0, this.accLen)), true);
    cb();
  }
}

/** Sealed bytes to decrypt: a vault file, or the body of an object in a bucket (s3.ts). */
export interface SealedReader {
  /** The stored size, known before reading: it tells which record is the final one. */
  size(): Promise<number>;
  /** Reads exactly `length` bytes into `buffer`; a source that ends sooner was cut. */
  readFully(buffer: Buffer, length: number): Promise<void>;
  close(): Promise<void>;
}

function fileReader(handle: FileHandle): SealedReader {
  return {
    size: async () => (await handle.stat()).size,
    async readFully(buffer, length) {
      for (let at = 0; at < length; ) {
        const { bytesRead } = await handle.read(buffer, at, length - at, null);
        if (bytesRead === 0) throw new IntegrityError('authentication_failed');
        at += bytesRead;
      }
    },
    close: () => handle.close(),
  };
}

/**
 * An encrypted file in, authenticated plaintext out, record by record: a record is yielded only
 * after its tag verified; any failure (tag, header, truncation, appended bytes) is an
 * IntegrityError. The file's size at opening tells which record is the final one. Reads of whole
 * records go through one borrowed 1 MiB buffer, so the only allocation per record is its plaintext.
 * The handle is closed at the end, on error, and when the consumer stops early (even before it read).
 */
export function decryptChunks(
  handle: FileHandle,
  keyFor: (keyId: string) => Buffer | null,
  expectedKeyId: string | null,
): AsyncGenerator<Buffer, void, undefined> {
  return decryptSealed(fileReader(handle), keyFor, expectedKeyId);
}

/** `decryptChunks` over any sealed source; the reader is closed as the file handle is. */
export function decryptSealed(
  reader: SealedReader,
  keyFor: (keyId: string) => Buffer | null,
  expectedKeyId: string | null,
): AsyncGenerator<Buffer, void, undefined> {
  return closingUnread(reader, decryptRecords(reader, keyFor, expectedKeyId));
}

async function* decryptRecords(
  reader: SealedReader,
  keyFor: (keyId: string) => Buffer | null,
  expectedKeyId: string | null,
): AsyncGenerator<Buffer, void, undefined> {
  const buffer = borrowReadBuffer();
  try {
    const size = await reader.size();
    if (size < HEADER_SIZE + RECORD_OVERHEAD) throw new IntegrityError('authentication_failed');
    const header = Buffer.allocUnsafe(HEADER_SIZE);
    await reader.readFully(header, HEADER_SIZE);
    const parsed = parseHeader(header);
    if (!parsed) throw new IntegrityError('authentication_failed');
    if (expectedKeyId !== null && parsed.keyId !== expectedKeyId.slice(0, 16)) {
      throw new IntegrityError('authentication_failed');
    }
    const key = keyFor(parsed.keyId);
    if (!key) throw new IntegrityError('key_unavailable');
    const recordSize = parsed.chunkSize + RECORD_OVERHEAD;
    const batch =
      recordSize <= buffer.length
        ? buffer.subarray(0, Math.floor(buffer.length / recordSize) * recordSize)
        : Buffer.allocUnsafe(recordSize);
    let remaining = size - HEADER_SIZE;
    let index = 0n;
    while (remaining > 0) {
      const length = Math.min(batch.length, remaining);
      await reader.readFully(batch, length);
      remaining -= length;
      for (let at = 0; at < length; at += recordSize) {
        const record = batch.subarray(at, Math.min(at + recordSize, length));
        const final = remaining === 0 && at + recordSize >= length;
        if (record.length < RECORD_OVERHEAD) throw new IntegrityError('authentication_failed');
        const decipher = createDecipheriv('aes-256-gcm', key, record.subarray(0, NONCE));
        decipher.setAAD(aad(header, index, final));
        decipher.setAuthTag(record.subarray(record.length - TAG));
        const plain = decipher.update(record.subarray(NONCE, record.length - TAG));
        try {
          decipher.final();
        } catch {
          throw new IntegrityError('authentication_failed');
        }
        index += 1n;
        shortLived(plain.length);
        yield plain;
      }
    }
  } finally {
    returnReadBuffer(buffer);
    await reader.close();
  }
}

/**
 * A small secret held whole in memory (a signing key's private half, docs/administration.md,
 * 'Signing keys') sealed in the same format as an artifact: the header (chunk size = the
 * plaintext's length) and one final record. The same AAD binds the record to its header, so a
 * flipped bit, a cut or appended bytes fail as they do for a file.
 */
export function sealBytes(key: Buffer, keyId: string, plain: Buffer): Buffer {
  const header = makeHeader(keyId, Math.max(1, plain.length));
  const nonce = randomBytes(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad(header, 0n, true));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([header, nonce, body, cipher.getAuthTag()]);
}

/** The plaintext of `sealBytes`; any failure (format, key, tag) is an IntegrityError. */
export function openBytes(sealed: Buffer, keyFor: (keyId: string) => Buffer | null): Buffer {
  const parsed = parseHeader(sealed);
  if (!parsed) throw new IntegrityError('authentication_failed');
  const record = sealed.subarray(HEADER_SIZE);
  if (record.length < RECORD_OVERHEAD || record.length > parsed.chunkSize + RECORD_OVERHEAD) {
    throw new IntegrityError('authentication_failed');
  }
  const key = keyFor(parsed.keyId);
  if (!key) throw new IntegrityError('key_unavailable');
  const decipher = createDecipheriv('aes-256-gcm', key, record.subarray(0, NONCE));
  decipher.setAAD(aad(sealed.subarray(0, HEADER_SIZE), 0n, true));
  decipher.setAuthTag(record.subarray(record.length - TAG));
  const plain = decipher.update(record.subarray(NONCE, record.length - TAG));
  try {
    decipher.final();
  } catch {
    throw new IntegrityError('authentication_failed');
  }
  return plain;
}
