import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { IntegrityError } from './driver.js';

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

/**
 * The encrypted format in, authenticated plaintext out. A record is released only after its tag
 * verified; any failure (tag, header, truncation) is an IntegrityError. Memory: about two records.
 */
export class DecryptStream extends Transform {
  private buf: Buffer = Buffer.alloc(0);
  private header: Buffer | null = null;
  private recordSize = 0;
  private index = 0n;

  constructor(
    private readonly keyFor: (keyId: string) => Buffer | null,
    private readonly expectedKeyId: string | null,
  ) {
    super({ highWaterMark: 4 * CHUNK_SIZE });
  }

  private open(record: Buffer, final: boolean): Buffer {
    const key = this.keyFor(parseHeader(this.header!)!.keyId)!;
    const nonce = record.subarray(0, NONCE);
    const tag = record.subarray(record.length - TAG);
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(aad(this.header!, this.index, final));
    decipher.setAuthTag(tag);
    const body = decipher.update(record.subarray(NONCE, record.length - TAG));
    try {
      decipher.final();
    } catch {
      throw new IntegrityError('authentication_failed');
    }
    this.index += 1n;
    return body;
  }

  private readHeader(): void {
    const parsed = parseHeader(this.buf);
    if (!parsed) throw new IntegrityError('authentication_failed');
    if (this.expectedKeyId !== null && parsed.keyId !== this.expectedKeyId.slice(0, 16)) {
      throw new IntegrityError('authentication_failed');
    }
    if (!this.keyFor(parsed.keyId)) throw new IntegrityError('key_unavailable');
    this.header = Buffer.from(this.buf.subarray(0, HEADER_SIZE));
    this.recordSize = parsed.chunkSize + RECORD_OVERHEAD;
    this.buf = this.buf.subarray(HEADER_SIZE);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    try {
      this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
      if (!this.header) {
        if (this.buf.length < HEADER_SIZE) {
          cb();
          return;
        }
        this.readHeader();
      }
      // Keep at least one record back: only the end of the input tells which record is final.
      while (this.buf.length > this.recordSize) {
        this.push(this.open(this.buf.subarray(0, this.recordSize), false));
        this.buf = this.buf.subarray(this.recordSize);
      }
      // Do not pin a large input chunk for the sake of a small remainder.
      if (this.buf.length > 0 && this.buf.buffer.byteLength > 2 * this.recordSize) {
        this.buf = Buffer.from(this.buf);
      }
      cb();
    } catch (e) {
      cb(e as Error);
    }
  }

  override _flush(cb: TransformCallback): void {
    try {
      if (!this.header) throw new IntegrityError('authentication_failed');
      if (this.buf.length < RECORD_OVERHEAD) throw new IntegrityError('authentication_failed');
      this.push(this.open(this.buf, true));
      this.buf = Buffer.alloc(0);
      cb();
    } catch (e) {
      cb(e as Error);
    }
  }
}
