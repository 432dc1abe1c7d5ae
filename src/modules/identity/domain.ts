/**
 * Domain normalisation (docs/licensing.md, 'Domain normalisation'): the host part of a site URL,
 * lower-cased, IDN in its ASCII (punycode) form, without scheme, credentials, path, query,
 * fragment, trailing dot or a default port (80 or 443, whatever the scheme); any other port is kept
 * as `host:port`. Parsing is the WHATWG URL parser's; the checks around it refuse what it would
 * silently repair.
 */

import { domainToASCII, domainToUnicode } from 'node:url';

export const MAX_DOMAIN_INPUT = 2048;
/** The longest name DNS can carry (RFC 1035: 255 octets on the wire, 253 characters as text). */
export const MAX_HOST = 253;

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

export class DomainError extends Error {}

/**
 * A site URL as sites send it on every validate and update check: `http://` or `https://` (or no
 * scheme), a lower-case host of letters, digits and hyphens in labels of 1 to 63 characters, an
 * optional trailing dot and an optional `/`. For such a URL the WHATWG parser's hostname is the
 * host itself, so it is answered without a URL object (about 1 µs a request: docs/performance.md,
 * 'Per-request work of the update check and validate'). Everything else takes the parser's way:
 * upper case, a port, a path, `_`, an `xn--` label, and a host the parser would read as an IPv4
 * address (its last label all digits, or `0x` and hexadecimal digits).
 */
const PLAIN_URL =
  /^(?:https?:\/\/)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*)\.?\/?$/;
const NUMERIC_LAST_LABEL = /(?:^|\.)(?:\d+|0x[0-9a-f]*)$/;

function plainHost(text: string): string | null {
  const m = PLAIN_URL.exec(text);
  if (!m) return null;
  const host = m[1]!;
  if (host.length > MAX_HOST || host.includes('xn--') || NUMERIC_LAST_LABEL.test(host)) return null;
  return host;
}

/** Returns the normalised domain, or throws DomainError when the input names no usable host. */
export function normaliseDomain(input: string): string {
  if (input.length > MAX_DOMAIN_INPUT) throw new DomainError('too long');
  // The URL parser strips tabs and newlines anywhere, so they are refused before it sees them.
  if (CONTROL.test(input)) throw new DomainError('control character');
  const text = input.trim();
  if (text === '') throw new DomainError('empty');
  return plainHost(text) ?? parsedDomain(text);
}

/** normaliseDomain by the WHATWG URL parser, for any trimmed input (the reference of plainHost). */
export function parsedDomain(text: string): string {
  let candidate: string;
  const scheme = SCHEME.exec(text);
  if (scheme) {
    const name = scheme[1]!.toLowerCase();
    if (name !== 'http' && name !== 'https') throw new DomainError('scheme');
    candidate = text;
  } else if (text.startsWith('//')) {
    candidate = `http:${text}`;
  } else {
    candidate = `http://${text}`;
  }

  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    throw new DomainError('unparseable');
  }
  // Credentials in a site address are a mistake at best; they are never stored.
  if (url.username !== '' || url.password !== '') throw new DomainError('credentials');

  let host = url.hostname;
  if (!host.startsWith('[')) {
    host = host.replace(/\.$/, '');
    if (host === '' || host.length > MAX_HOST) throw new DomainError('host length');
    if (!IPV4.test(host) && !host.split('.').every((label) => LABEL.test(label))) {
      throw new DomainError('host');
    }
    if (!host.split('.').every(validAceLabel)) throw new DomainError('punycode');
  }

  const port = url.port;
  if (port === '' || port === '80' || port === '443') return host;
  if (Number(port) < 1) throw new DomainError('port');
  return `${host}:${port}`;
}

/**
 * An `xn--` label must be the punycode of an international name: decoded, it is not ASCII, and
 * encoded again it is the same label. Node 20 and 22's URL parser refuses the others; Node 24's
 * passes them through (`xn--zz`), so the check is made here, the same on every Node.js. Decoding
 * that fails gives "" (Node 20, 22) or the label unchanged (Node 24).
 */
function validAceLabel(label: string): boolean {
  if (!label.startsWith('xn--')) return true;
  const name = domainToUnicode(label);
  return name !== '' && !name.startsWith('xn--') && /[^\0-\x7f]/.test(name) && domainToASCII(name) === label;
}
