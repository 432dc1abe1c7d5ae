import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { isRecord, TollgateError } from './errors.js';

/** A key of `GET /v1/software/signing-keys` (docs/licensing.md, 'Offline receipts'). */
export interface SigningKey {
  id: string;
  /** The raw 32-byte Ed25519 public key, base64. */
  public_key: string;
  created_at: string;
  /** Null for the active key; a retired key stays listed so what it signed still verifies. */
  retired_at: string | null;
}

/** An offline receipt as validate answers it with `receipt: true`. */
export interface Receipt {
  /** base64url (no padding) of the UTF-8 JSON of ReceiptClaims. */
  payload: string;
  /** base64 Ed25519 signature of the payload string's ASCII bytes. */
  signature: string;
  signing_key_id: string;
}

/** What a receipt says (docs/licensing.md, 'What is signed'). */
export interface ReceiptClaims {
  v: 1;
  license_id: number;
  product_id: number;
  variation_id: number;
  installation_id: string;
  /** The normalised domain (docs/licensing.md, 'Domain normalisation'). */
  domain: string;
  activation_id: number;
  status: 'valid';
  usage_expires_at: string | null;
  updates_expires_at: string | null;
  support_expires_at: string | null;
  update_entitled: boolean;
  support_active: boolean | null;
  /** RFC 3339 UTC, by the store's clock. */
  issued_at: string;
  /** RFC 3339 UTC: trust the receipt until then. */
  valid_until: string;
}

/**
 * The fixed DER framing of an Ed25519 public key (RFC 8410), as the store's own signing module
 * builds it: the raw 32 bytes follow it.
 */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Standard base64 as the store writes it: decoding and encoding again gives the same text. */
function strictBase64(text: unknown, bytes: number): Buffer | null {
  if (typeof text !== 'string') return null;
  const raw = Buffer.from(text, 'base64');
  return raw.length === bytes && raw.toString('base64') === text ? raw : null;
}

/** A listed key as a node:crypto key; null when its `public_key` is not 32 bytes of base64. */
export function publicKeyOf(key: Pick<SigningKey, 'public_key'>): KeyObject | null {
  const raw = strictBase64(key.public_key, 32);
  if (!raw) return null;
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

function verifies(data: Buffer, signature: Buffer, key: SigningKey): boolean {
  const publicKey = publicKeyOf(key);
  return publicKey !== null && verify(null, data, publicKey, signature);
}

/**
 * Checks a release signature: Ed25519 over the raw 48-byte SHA-384 digest of the package's bytes,
 * base64 (the scheme WordPress's `verify_file_signature()` checks; docs/sdk-js.md, 'Signatures').
 * With `keyId`, only that key of `keys` is tried (a retired key still listed counts); without
 * one, any listed key. Throws `signing_key_unknown` or `signature_invalid`; answers the key's id.
 */
export function verifyPackageSignature(
  sha384: Buffer,
  signature: string,
  keyId: string | null | undefined,
  keys: readonly SigningKey[],
): string {
  const sig = strictBase64(signature, 64);
  if (sha384.length !== 48 || !sig) {
    throw new TollgateError('signature_invalid', 'The package signature is not an Ed25519 signature');
  }
  const candidates = keyId ? keys.filter((k) => k.id === keyId) : keys;
  if (candidates.length === 0) {
    throw new TollgateError(
      'signing_key_unknown',
      'The package is signed with a key the store does not list',
    );
  }
  const key = candidates.find((k) => verifies(sha384, sig, k));
  if (!key) throw new TollgateError('signature_invalid', 'The package signature does not verify');
  return key.id;
}

export interface VerifyReceiptOptions {
  /** This site: the receipt must name its installation id and (normalised) domain. */
  site?: { domain: string; installation_id: string };
  /** The time to check `valid_until` against; default now. */
  now?: Date;
  /**
   * How far in the future `issued_at` may be before the receipt is not trusted (this machine's
   * clock or the receipt is wrong); default 3600 seconds.
   */
  clockSkewSeconds?: number;
}

const RECEIPT_FIELDS = ['payload', 'signature', 'signing_key_id'] as const;

/** `YYYY-MM-DD HH:MM:SS` (UTC) or RFC 3339 as a time; NaN when neither. */
function timeOf(text: string): number {
  const t = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(text) ? `${text.replace(' ', 'T')}Z` : text;
  return Date.parse(t);
}

/**
 * Checks an offline receipt (docs/licensing.md, 'Offline receipts') and answers what it says:
 * the signature first (over the payload string's bytes, with the key it names, which must be
 * listed), then the site, then the times. Throws TollgateError: `receipt_malformed`,
 * `signing_key_unknown` (fetch the key list again), `signature_invalid`, `receipt_site_mismatch`,
 * `receipt_not_yet_valid`, `receipt_expired`.
 */
export function verifyReceipt(
  receipt: unknown,
  keys: readonly SigningKey[],
  opts: VerifyReceiptOptions = {},
): ReceiptClaims {
  if (!isRecord(receipt) || RECEIPT_FIELDS.some((f) => typeof receipt[f] !== 'string')) {
    throw new TollgateError('receipt_malformed', 'Not a receipt');
  }
  const { payload, signature, signing_key_id } = receipt as unknown as Receipt;
  if (!/^[A-Za-z0-9_-]+$/.test(payload)) throw new TollgateError('receipt_malformed', 'Not a receipt');
  const sig = strictBase64(signature, 64);
  if (!sig) throw new TollgateError('signature_invalid', 'The receipt signature is not an Ed25519 signature');
  const key = keys.find((k) => k.id === signing_key_id);
  if (!key) throw new TollgateError('signing_key_unknown', 'The receipt names a key the store does not list');
  if (!verifies(Buffer.from(payload, 'ascii'), sig, key)) {
    throw new TollgateError('signature_invalid', 'The receipt signature does not verify');
  }
  // Decoded only once verified: the store signed these exact bytes.
  let claims: ReceiptClaims;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as ReceiptClaims;
  } catch (cause) {
    throw new TollgateError('receipt_malformed', 'The receipt payload is not JSON', { cause });
  }
  if (!isRecord(claims) || claims.v !== 1 || claims.status !== 'valid') {
    throw new TollgateError('receipt_malformed', 'Not a receipt of a valid license');
  }
  if (
    opts.site &&
    (claims.installation_id !== opts.site.installation_id ||
      claims.domain !== normaliseDomain(opts.site.domain))
  ) {
    throw new TollgateError('receipt_site_mismatch', 'The receipt is for another site');
  }
  const now = (opts.now ?? new Date()).getTime();
  const issued = timeOf(String(claims.issued_at));
  const until = timeOf(String(claims.valid_until));
  if (Number.isNaN(issued) || Number.isNaN(until))
    throw new TollgateError('receipt_malformed', 'Not a receipt');
  if (issued > now + (opts.clockSkewSeconds ?? 3600) * 1000) {
    throw new TollgateError('receipt_not_yet_valid', 'The receipt is issued in the future by this clock');
  }
  const usage =
    claims.usage_expires_at === null ? Number.POSITIVE_INFINITY : timeOf(String(claims.usage_expires_at));
  if (!(now < until) || !(now < usage)) throw new TollgateError('receipt_expired', 'The receipt has expired');
  return claims;
}

/**
 * The store's domain normalisation (docs/licensing.md, 'Domain normalisation'), to compare a
 * site's address with the normalised domain a receipt holds: the host, lower-cased, punycode,
 * without scheme, path, trailing dot or a port 80 or 443. Answers '' for what names no host.
 */
export function normaliseDomain(input: string): string {
  const text = input.trim();
  const candidate = /^[a-z][a-z0-9+.-]*:\/\//i.test(text)
    ? text
    : text.startsWith('//')
      ? `http:${text}`
      : `http://${text}`;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return '';
  }
  const host = url.hostname.startsWith('[') ? url.hostname : url.hostname.replace(/\.$/, '');
  return url.port === '' || url.port === '80' || url.port === '443' ? host : `${host}:${url.port}`;
}
