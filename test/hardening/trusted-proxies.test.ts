import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startServer } from '../helpers/server.js';

/**
 * Client addresses behind a proxy (docs/operations.md, 'nginx'): with TRUSTED_PROXIES the client
 * is the right-most X-Forwarded-For address that is not a listed proxy, so a proxy that appends
 * to the header cannot be made to name whatever client the sender likes; TRUST_PROXY=1 keeps
 * believing the first address.
 */

describe('TRUSTED_PROXIES is validated at start', () => {
  it('takes addresses and CIDRs, IPv4 and IPv6', () => {
    expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.1, 192.168.0.0/16,fd00::/8, ::1' }).trustProxy).toEqual([
      '10.0.0.1',
      '192.168.0.0/16',
      'fd00::/8',
      '::1',
    ]);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(true);
    expect(loadConfig({}).trustProxy).toBe(false);
  });

  it.each(['nginx.internal', '10.0.0.1,', '10.0.0.300', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/x'])(
    'refuses %j naming the variable',
    (value) => {
      expect(() => loadConfig({ TRUSTED_PROXIES: value })).toThrow(/^TRUSTED_PROXIES must be/);
    },
  );

  it('refuses TRUST_PROXY=1 together with TRUSTED_PROXIES', () => {
    expect(() => loadConfig({ TRUST_PROXY: '1', TRUSTED_PROXIES: '10.0.0.1' })).toThrow(/TRUSTED_PROXIES/);
  });

  it('a bad value stops the server before it listens, naming the variable', async () => {
    await expect(startServer({ TRUSTED_PROXIES: '10.0.0.0/40' }, 20_000)).rejects.toThrow(
      /configuration error: TRUSTED_PROXIES must be/,
    );
  });
});

describe('per-address limits behind a proxy', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  /** Update checks of an unknown product: rate_limit (10 a minute) counts them per client address. */
  const checks = (app: TestApp['app'], proxy: string, forwardedFor: (i: number) => string, n: number) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        app.inject({
          method: 'GET',
          url: '/v1/software/check?slug=no-such-product&version=1.0.0',
          remoteAddress: proxy,
          headers: { 'x-forwarded-for': forwardedFor(i) },
        }),
      ),
    );

  it.each([
    ['IPv4', '10.1.2.0/24', '10.1.2.3', '203.0.113.7', '203.0.113.8'],
    ['IPv6', 'fd00::/8,10.9.9.9', 'fd00::1', '2001:db8::7', '2001:db8::8'],
  ])(
    '%s: an appending proxy in the list, a client that forges addresses is still one client',
    async (_, list, proxy, client, otherClient) => {
      t = await createTestApp({ env: { TRUSTED_PROXIES: list } });
      // The client sends its own X-Forwarded-For with a new address each time; the proxy appends
      // the address it saw (and a second listed proxy may append its own).
      const answers = await checks(
        t.app,
        proxy,
        (i) => `198.51.100.${i + 1}, ${client}${list.includes('10.9.9.9') ? ', 10.9.9.9' : ''}`,
        11,
      );
      const codes = answers.map((r) => r.json().code).sort();
      expect(codes.filter((c) => c === 'product_not_found')).toHaveLength(10);
      expect(codes.filter((c) => c === 'rate_limited')).toHaveLength(1);
      expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(1);
      // Another client behind the same proxy has a count of its own.
      const [other] = await checks(t.app, proxy, () => otherClient, 1);
      expect(other!.json().code).toBe('product_not_found');
    },
  );

  it('a request that does not come from a listed proxy is counted by its own address', async () => {
    t = await createTestApp({ env: { TRUSTED_PROXIES: '10.1.2.3' } });
    // Straight from 203.0.113.9, naming someone else each time: the header is not believed.
    const answers = await checks(t.app, '203.0.113.9', (i) => `198.51.100.${i + 1}`, 11);
    expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(1);
    expect(answers[0]!.json().code).toMatch(/product_not_found|rate_limited/);
  });

  it('TRUST_PROXY=1 keeps believing the first address (a replacing proxy in front)', async () => {
    t = await createTestApp({ env: { TRUST_PROXY: '1' } });
    const answers = await checks(t.app, '10.1.2.3', (i) => `198.51.100.${i + 1}`, 11);
    expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(0);
  });
});
