import { randomBytesOf } from '../../random.js';

/**
 * Crockford's base32 alphabet: no I, L, O or U, so a key read aloud or retyped is unambiguous.
 * 5 groups of 5 characters carry 125 random bits: guessing a key is hopeless even at scale.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const GROUPS = 5;
const GROUP_LENGTH = 5;

export function generateLicenseKey(): string {
  const chars = GROUPS * GROUP_LENGTH;
  const bytes = randomBytesOf(Math.ceil((chars * 5) / 8));
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out.match(new RegExp(`.{${GROUP_LENGTH}}`, 'g'))!.join('-');
}

/** Keys an administrator may set: printable, no spaces, long enough not to be trivially guessed. */
export const LICENSE_KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{7,127}$';
