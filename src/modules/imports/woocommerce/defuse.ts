import { createDecipheriv, createHash, createHmac, hkdfSync } from 'node:crypto';
import { safeEqual } from '../../../random.js';

/**
 * Decryption of defuse/php-encryption 2.x ciphertexts, which License Manager for WooCommerce uses
 * for its license keys (the key is the site's `LMFWC_PLUGIN_DEFUSE` constant or
 * `wp-content/uploads/lmfwc-files/defuse.txt`). The format: hex of
 * version (DE F5 02 00) | salt (32) | IV (16) | AES-256-CTR ciphertext | HMAC-SHA256 (32), with the
 * encryption and authentication keys derived from the key by HKDF-SHA256 over the salt.
 */

const KEY_HEADER = Buffer.from('def00000', 'hex');
const CIPHER_HEADER = Buffer.from('def50200', 'hex');

export class DefuseError extends Error {}

/** The ASCII-safe key (`def00000…`, as saveToAsciiSafeString() writes it) -> its 32 raw bytes. */
export function loadDefuseKey(ascii: string): Buffer {
  const bytes = /^[0-9a-f]+$/i.test(ascii.trim()) ? Buffer.from(ascii.trim(), 'hex') : Buffer.alloc(0);
  if (bytes.length !== 4 + 32 + 32 || !bytes.subarray(0, 4).equals(KEY_HEADER)) {
    throw new DefuseError('not a defuse/php-encryption key');
  }
  const checksum = createHash('sha256').update(bytes.subarray(0, 36)).digest();
  if (!safeEqual(checksum.toString('hex'), bytes.subarray(36).toString('hex')))
    throw new DefuseError('the key checksum does not match');
  return bytes.subarray(4, 36);
}

export function defuseDecrypt(hexCiphertext: string, key: Buffer): string {
  const bytes = /^[0-9a-f]+$/i.test(hexCiphertext) ? Buffer.from(hexCiphertext, 'hex') : Buffer.alloc(0);
  if (bytes.length < 4 + 32 + 16 + 32 || !bytes.subarray(0, 4).equals(CIPHER_HEADER)) {
    throw new DefuseError('not a defuse/php-encryption ciphertext');
  }
  const salt = bytes.subarray(4, 36);
  const iv = bytes.subarray(36, 52);
  const body = bytes.subarray(52, bytes.length - 32);
  const mac = bytes.subarray(bytes.length - 32);
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', key, salt, info, 32));
  const authKey = derive('DefusePHP|V2|KeyForAuthentication');
  const expected = createHmac('sha256', authKey)
    .update(bytes.subarray(0, bytes.length - 32))
    .digest();
  if (!safeEqual(expected.toString('hex'), mac.toString('hex')))
    throw new DefuseError('wrong key or modified ciphertext');
  const decipher = createDecipheriv('aes-256-ctr', derive('DefusePHP|V2|KeyForEncryption'), iv);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
}
