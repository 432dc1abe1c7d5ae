import { createCipheriv, randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { shortLived } from '../../../memory.js';
import {
  aad,
  CHUNK_SIZE,
  HEADER_SIZE,
  IntegrityError,
  NONCE,
  openRecord,
  parseHeader,
  RECORD_OVERHEAD,
} from '../../vault/seal.js';
import { borrowReadBuffer, closingUnread, returnReadBuffer } from './local.js';

/** Streams of the vault's sealed format (src/modules/vault/seal.ts): a whole artifact in bounded memory. */

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
        const plain = openRecord(key, header, index, final, record);
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
