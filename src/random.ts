import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** All randomness and hashing of secrets goes through here. */

/** A URL-safe random secret of `bytes` bytes of entropy, hex-encoded (2 chars a byte). */
export const randomHex = (bytes: number): string => randomBytes(bytes).toString('hex');

/** `bytes` random bytes, for encodings other than hex (license keys). */
export const randomBytesOf = (bytes: number): Buffer => randomBytes(bytes);

export const uuid = (): string => randomUUID();

export const sha256 = (value: string | Buffer): string => createHash('sha256').update(value).digest('hex');

/** Constant-time comparison of two strings (different lengths compare unequal without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}
