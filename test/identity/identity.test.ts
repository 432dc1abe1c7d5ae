import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/http/errors.js';
import { DomainError, normaliseDomain, parsedDomain } from '../../src/modules/identity/domain.js';
import { identityKey, isInstallationId, resolveIdentity } from '../../src/modules/identity/identity.js';

const UUID = '3f2b8c1e-9d4a-4b6e-8f10-2c3d4e5f6a7b';

describe('domain normalisation (docs/licensing.md)', () => {
  const cases: [string, string][] = [
    ['example.com', 'example.com'],
    ['Example.COM', 'example.com'],
    ['https://example.com', 'example.com'],
    ['http://example.com/', 'example.com'],
    ['HTTPS://Shop.Example.com/wp-admin/?page=x#frag', 'shop.example.com'],
    ['https://example.com:443', 'example.com'],
    ['http://example.com:80/path', 'example.com'],
    ['https://example.com:80', 'example.com'],
    ['http://example.com:443', 'example.com'],
    ['example.com:443', 'example.com'],
    ['example.com:8080/path', 'example.com:8080'],
    ['https://example.com:8443/x', 'example.com:8443'],
    ['example.com.', 'example.com'],
    ['https://example.com.:8080', 'example.com:8080'],
    ['  example.com  ', 'example.com'],
    ['//example.com/path', 'example.com'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['https://BÜCHER.de/shop', 'xn--bcher-kva.de'],
    ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['☃.com', 'xn--n3h.com'],
    ['XN--LS8H.example', 'xn--ls8h.example'],
    ['xn--55qx5d.xn--mnchen-3ya.de', 'xn--55qx5d.xn--mnchen-3ya.de'],
    ['localhost:8080', 'localhost:8080'],
    ['127.0.0.1', '127.0.0.1'],
    ['http://192.168.1.10:8000/', '192.168.1.10:8000'],
    ['http://[::1]:8080/', '[::1]:8080'],
    ['https://[2001:DB8::1]/', '[2001:db8::1]'],
    ['staging_site.example.com', 'staging_site.example.com'],
    ['ex%41mple.com', 'example.com'],
    ['https://example.com?x=1', 'example.com'],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} -> ${expected}`, () => {
      expect(normaliseDomain(input)).toBe(expected);
    });
  }

  const rejected: [string, string][] = [
    ['', 'empty'],
    ['   ', 'blank'],
    ['http://', 'no host'],
    ['https:///', 'no host'],
    ['.', 'only a dot'],
    ['a..b.com', 'empty label'],
    ['-bad.com', 'leading hyphen'],
    ['exa mple.com', 'space in host'],
    ['foo!bar.com', 'punctuation in host'],
    ['exa\tmple.com', 'tab (the URL parser would silently drop it)'],
    ['example.com\n', 'trailing newline'],
    ['exa\u0000mple.com', 'NUL'],
    ['example.com\u0085', 'C1 control'],
    ['ftp://example.com', 'other scheme'],
    ['javascript:alert(1)', 'script URL'],
    ['user:pass@example.com', 'credentials'],
    ['https://user@example.com', 'user name'],
    ['example.com:0', 'port zero'],
    ['example.com:99999', 'port out of range'],
    ['example.com:abc', 'port not numeric'],
    ['%zz', 'bad escape'],
    ['xn--zz.com', 'invalid punycode'],
    ['shop.xn--a-ecp.ru', 'punycode of a name that is not valid'],
    ['xn--abc-.com', 'punycode of a plain ASCII name'],
    ['256.256.256.256', 'invalid IPv4'],
    [
      `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}.com`,
      'host over 253 characters',
    ],
    [`${'a'.repeat(64)}.com`, 'label over 63 characters'],
    [`example.com/${'p'.repeat(2100)}`, 'input over 2048 characters'],
    ['x'.repeat(10_240), '10 kB'],
  ];
  for (const [input, why] of rejected) {
    it(`rejects ${why}`, () => {
      expect(() => normaliseDomain(input)).toThrow(DomainError);
    });
  }

  it('accepts a host of exactly 253 characters', () => {
    const host = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(host.length).toBe(253);
    expect(normaliseDomain(host)).toBe(host);
  });

  // The plain site URLs of every request skip the URL parser (plainHost): whatever the input,
  // the answer or the refusal must be the parser's.
  const outcome = (f: () => string): string => {
    try {
      return f();
    } catch (e) {
      return e instanceof DomainError ? `refused: ${e.message}` : `threw: ${String(e)}`;
    }
  };
  const same = (text: string) =>
    expect(
      outcome(() => normaliseDomain(text)),
      text,
    ).toBe(outcome(() => parsedDomain(text)));

  it('answers every URL the same with or without the URL parser: edge cases', () => {
    const l63 = 'a'.repeat(63);
    const hosts = [
      'example.com',
      'site12.example.com',
      'localhost',
      'a',
      '1a.com',
      'a-b.com',
      'a--b.com',
      '-a.com',
      'a-.com',
      '_a.com',
      'a_b.example.com',
      'A.com',
      'xn--bcher-kva.example',
      'xn--zz.example',
      'axn--b.com',
      '1.2.3.4',
      '1.2.3.04',
      '01.2.3.4',
      '1.2.3',
      '4294967295',
      '4294967296',
      'a.0x1f',
      'a.0x',
      'a.0xg',
      'a.0X1F',
      'a.09',
      'a.9z',
      '0x7f.1',
      'example.123',
      'a..b',
      '.a',
      `${l63}.com`,
      `${l63}a.com`,
      `${l63}.${l63}.${l63}.${'d'.repeat(61)}`,
      `${l63}.${l63}.${l63}.${'d'.repeat(62)}`,
    ];
    const schemes = ['', 'http://', 'https://', 'HTTP://', 'ftp://', '//', 'https:///'];
    const tails = ['', '/', '.', './', '..', '//', '/x', ':443', ':80', ':8080', ':0', '?q', '#f', '@b'];
    for (const scheme of schemes)
      for (const host of hosts) for (const tail of tails) same(scheme + host + tail);
  });

  it('answers every URL the same with or without the URL parser: random text', () => {
    const alphabet = 'ab09x-._/:%@AZ';
    let seed = 42;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    for (let i = 0; i < 20_000; i++) {
      let text = ['', 'http://', 'https://'][next() % 3]!;
      const length = 1 + (next() % 16);
      for (let k = 0; k < length; k++) text += alphabet[next() % alphabet.length];
      same(text);
    }
  });
});

describe('installation id', () => {
  const ok = [
    '3f2b8c1e-9d4a-4b6e-8f10-2c3d4e5f6a7b',
    '00000000-0000-4000-8000-000000000000',
    'ffffffff-ffff-4fff-bfff-ffffffffffff',
  ];
  for (const id of ok) it(`accepts ${id}`, () => expect(isInstallationId(id)).toBe(true));
  const bad: [string, string][] = [
    ['3F2B8C1E-9D4A-4B6E-8F10-2C3D4E5F6A7B', 'uppercase is refused, not lower-cased'],
    ['3f2b8c1e-9d4a-1b6e-8f10-2c3d4e5f6a7b', 'version 1'],
    ['3f2b8c1e-9d4a-4b6e-cf10-2c3d4e5f6a7b', 'wrong variant'],
    ['3f2b8c1e9d4a4b6e8f102c3d4e5f6a7b', 'no hyphens'],
    ['{3f2b8c1e-9d4a-4b6e-8f10-2c3d4e5f6a7b}', 'braces'],
    ['urn:uuid:3f2b8c1e-9d4a-4b6e-8f10-2c3d4e5f6a7b', 'urn prefix'],
    [' 3f2b8c1e-9d4a-4b6e-8f10-2c3d4e5f6a7b', 'leading space'],
    ['3f2b8c1e-9d4a-4b6e-8f10-2c3d4e5f6a7', '35 characters'],
    ['3f2b8c1e-9d4a-4b6e-8f10-2c3d4e5f6a7g', 'non-hex'],
  ];
  for (const [id, why] of bad) it(`rejects ${why}`, () => expect(isInstallationId(id)).toBe(false));
});

describe('identity key and resolution', () => {
  it('is sha256 of installation_id|domain_normalized', () => {
    const expected = createHash('sha256').update(`${UUID}|example.com:8080`).digest('hex');
    expect(identityKey(UUID, 'example.com:8080')).toBe(expected);
  });

  it('spellings of one site give one identity key; another port or installation gives another', () => {
    const a = resolveIdentity('https://Example.com/', UUID);
    const b = resolveIdentity('example.com:443', UUID);
    expect(a.identity_key).toBe(b.identity_key);
    expect(a.domain).toBe('https://Example.com/');
    expect(a.domain_normalized).toBe('example.com');
    expect(resolveIdentity('example.com:8080', UUID).identity_key).not.toBe(a.identity_key);
    expect(resolveIdentity('example.com', '00000000-0000-4000-8000-000000000000').identity_key).not.toBe(
      a.identity_key,
    );
  });

  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return (e as ApiError).code;
    }
    return 'none';
  };

  it('absent or empty fields are missing_identity; malformed ones invalid_identity', () => {
    expect(code(() => resolveIdentity(undefined, UUID))).toBe('missing_identity');
    expect(code(() => resolveIdentity('example.com', undefined))).toBe('missing_identity');
    expect(code(() => resolveIdentity('', UUID))).toBe('missing_identity');
    expect(code(() => resolveIdentity('example.com', ''))).toBe('missing_identity');
    expect(code(() => resolveIdentity('example.com', 'not-a-uuid'))).toBe('invalid_identity');
    expect(code(() => resolveIdentity('exa mple.com', UUID))).toBe('invalid_identity');
    expect(code(() => resolveIdentity('x'.repeat(10_240), UUID))).toBe('invalid_identity');
  });
});
