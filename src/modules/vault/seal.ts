import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * The vault's sealed format, for encrypted artifacts (`local_encrypted`, `s3_encrypted`, streamed by
 * src/modules/releases/storage/crypto-stream.ts) and small secrets (`sealBytes`), AES-256-GCM in 64 KiB chunks:
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
export const NONCE = 12;
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

export function aad(header: Buffer, index: bigint, final: boolean): Buffer {
  const a = Buffer.alloc(HEADER_SIZE + 9);
  header.copy(a, 0);
  a.writeBigUInt64BE(index, HEADER_SIZE);
  a.writeUInt8(final ? 1 : 0, HEADER_SIZE + 8);
  return a;
}

export type VerifyFailure =
  | 'missing'
  | 'size_mismatch'
  | 'hash_mismatch'
  | 'authentication_failed'
  | 'key_unavailable';

/** Thrown by streams that read stored bytes when they fail authentication or a size check. */
export class IntegrityError extends Error {
  constructor(readonly reason: VerifyFailure) {
    super(`artifact integrity: ${reason}`);
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
  return openRecord(key, sealed.subarray(0, HEADER_SIZE), 0n, true, record);
}

/** One record's plaintext, once its tag verified against the header, its index and finality. */
export function openRecord(
  key: Buffer,
  header: Buffer,
  index: bigint,
  final: boolean,
  record: Buffer,
): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, record.subarray(0, NONCE));
  decipher.setAAD(aad(header, index, final));
  decipher.setAuthTag(record.subarray(record.length - TAG));
  const plain = decipher.update(record.subarray(NONCE, record.length - TAG));
  try {
    decipher.final();
  } catch {
    throw new IntegrityError('authentication_failed');
  }
  return plain;
}
