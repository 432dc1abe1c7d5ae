import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { shortLived } from '../../memory.js';
import { ZipHeaderScanner } from './wp-headers.js';

/** The end-of-central-directory record: 22 bytes plus a comment of up to 65535 bytes. */
const EOCD_SIZE = 22;
const EOCD_MAX = EOCD_SIZE + 0xffff;
const EOCD_SIG = 0x06054b50;
const LOCAL_SIG = 0x04034b50;

export class UploadTooLarge extends Error {}

/**
 * Passes bytes through while computing what an upload must prove about itself: size, SHA-256,
 * the first bytes and the last 64 KiB + 22 (where a zip's end-of-central-directory record lives).
 * Nothing but that tail is kept, so memory stays bounded whatever the size.
 * With `integrity`, also the MD5 (a download's `Content-MD5`) and the SHA-384 the release
 * signature covers (docs/releases.md, 'Signatures and Content-MD5'), in the same pass: a vault
 * copy is never read again to sign it.
 */
export class Inspector extends Transform {
  private readonly hash = createHash('sha256');
  private readonly extra: { md5: Hash; sha384: Hash } | null;
  private extraDigests: { md5: string; sha384: Buffer } | null = null;
  size = 0;
  private head = Buffer.alloc(0);
  private tailParts: Buffer[] = [];
  private tailLen = 0;
  private digest: string | null = null;
  /** The first bytes of the files WordPress reads its headers from (wp-headers.ts). */
  readonly headers = new ZipHeaderScanner();

  constructor(
    private readonly limit: number = Number.POSITIVE_INFINITY,
    opts: { integrity?: boolean } = {},
  ) {
    super({ highWaterMark: 1 << 20 });
    this.extra = opts.integrity ? { md5: createHash('md5'), sha384: createHash('sha384') } : null;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.size += chunk.length;
    // An upload's chunks (socket reads) are dead once written to staging.
    shortLived(chunk.length);
    if (this.size > this.limit) {
      cb(new UploadTooLarge('upload exceeds the size limit'));
      return;
    }
    this.hash.update(chunk);
    if (this.extra) {
      this.extra.md5.update(chunk);
      this.extra.sha384.update(chunk);
    }
    this.headers.push(chunk);
    if (this.head.length < 4) this.head = Buffer.concat([this.head, chunk.subarray(0, 4 - this.head.length)]);
    this.tailParts.push(chunk);
    this.tailLen += chunk.length;
    while (this.tailParts.length > 1 && this.tailLen - this.tailParts[0]!.length >= EOCD_MAX) {
      this.tailLen -= this.tailParts.shift()!.length;
    }
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    this.digest = this.hash.digest('hex');
    if (this.extra) {
      this.extraDigests = {
        md5: this.extra.md5.digest('base64'),
        sha384: this.extra.sha384.digest(),
      };
    }
    cb();
  }

  /** Base64 MD5 and raw SHA-384 of the bytes (an Inspector made with `integrity`, once finished). */
  get integrity(): { md5: string; sha384: Buffer } {
    if (this.extraDigests === null)
      throw new Error('inspector has not finished or computes no integrity digests');
    return this.extraDigests;
  }

  get sha256(): string {
    if (this.digest === null) throw new Error('inspector has not finished');
    return this.digest;
  }

  /** Whether the bytes seen form a readable zip archive (see `looksLikeZip`). */
  isZip(): boolean {
    const tail = Buffer.concat(this.tailParts);
    return looksLikeZip(this.head, tail.subarray(Math.max(0, tail.length - EOCD_MAX)), this.size);
  }
}

/**
 * A readable zip with at least one entry: it starts with a local file header, and its end-of-central-directory record sits exactly at the end (its comment length
 * accounts for every byte after it) with a central directory that fits before it. ZIP64 archives
 * mark the 32-bit fields with 0xFFFFFFFF; their sizes are then not checked here.
 */
export function looksLikeZip(head: Buffer, tail: Buffer, totalSize: number): boolean {
  if (totalSize < EOCD_SIZE || head.length < 4) return false;
  const first = head.readUInt32LE(0);
  if (first !== LOCAL_SIG && first !== EOCD_SIG) return false;
  const tailStart = totalSize - tail.length;
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail.readUInt32LE(i) !== EOCD_SIG) continue;
    const commentLength = tail.readUInt16LE(i + 20);
    if (i + EOCD_SIZE + commentLength !== tail.length) continue;
    const disk = tail.readUInt16LE(i + 4);
    const entriesHere = tail.readUInt16LE(i + 8);
    const entries = tail.readUInt16LE(i + 10);
    const cdSize = tail.readUInt32LE(i + 12);
    const cdOffset = tail.readUInt32LE(i + 16);
    const eocdOffset = tailStart + i;
    if (cdSize === 0xffffffff || cdOffset === 0xffffffff || entries === 0xffff) return true;
    if (disk !== 0 || entriesHere !== entries) return false;
    // An empty archive is readable but is no package.
    if (entries === 0 || first !== LOCAL_SIG) return false;
    return cdSize > 0 && cdOffset + cdSize <= eocdOffset;
  }
  return false;
}
