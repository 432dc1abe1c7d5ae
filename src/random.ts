import { hash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** All randomness and hashing of secrets goes through here. */

/** A URL-safe random secret of `bytes` bytes of entropy, hex-encoded (2 chars a byte). */
export const randomHex = (bytes: number): string => randomBytes(bytes).toString('hex');

/** `bytes` random bytes, for encodings other than hex (license keys). */
export const randomBytesOf = (bytes: number): Buffer => randomBytes(bytes);

export const uuid = (): string => randomUUID();

// The one-shot form: about half the cost of createHash().update().digest() for short inputs.
export const sha256 = (value: string | Buffer): string => hash('sha256', value, 'hex');

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
