import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_WRITES_PER_MINUTE } from '../../src/http/anonymous-writes.js';
import { advanceClock, createTestApp, type TestApp } from '../helpers/app.js';

/**
 * Every anonymous write route has a limit (docs/api.md, 'Limits'): past
 * ANONYMOUS_WRITES_PER_MINUTE requests a minute from one address, 429 rate_limited with
 * retry_after, whatever the route; another address, a signed-in route and the next minute are not
 * held back.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
});
afterAll(async () => t.close());

const post = (url: string, remoteAddress: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url,
    remoteAddress,
    headers: { 'content-type': 'application/json', ...headers },
    payload: '{',
  });

describe('the anonymous write limit', () => {
  it('refuses the requests past the limit on every anonymous write route, by address', async () => {
    // Into the first second of a fresh one-minute window (they are fixed, and the test clock runs
    // on), so the counted requests cannot straddle two windows however slow the machine is.
    const now = t.app.services.clock.now().getTime();
    await advanceClock(t, 61 - Math.floor((now % 60_000) / 1000));
    const routes = ['/v1/cart/add', '/v1/checkout/quote', '/v1/auth/sign-in-link', '/account/sign-in'];
    for (let i = 0; i < ANONYMOUS_WRITES_PER_MINUTE; i++) {
      const res = await post(routes[i % routes.length]!, '203.0.113.1');
      expect(res.statusCode).not.toBe(429);
    }
    for (const url of routes) {
      const refused = await post(url, '203.0.113.1');
      expect(refused.statusCode, url).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      // The API answers in the envelope; a page of /account answers with a page.
      if (url.startsWith('/v1/')) {
        expect(refused.json()).toMatchObject({ code: 'rate_limited', data: { status: 429 } });
        expect(refused.json().data.retry_after).toBe(Number(refused.headers['retry-after']));
      } else expect(refused.headers['content-type']).toMatch(/^text\/html/);
    }
    // Another address is not held back, nor a route that needs a caller (answered 401 first).
    expect((await post('/v1/cart/add', '203.0.113.2')).json().code).not.toBe('rate_limited');
    // Nor the calls of sites in the field (a shared host puts thousands behind one address), nor
    // the signed Stripe webhook.
    for (const url of [
      '/v1/licenses/validate',
      '/v1/licenses/activate',
      '/v1/software/check',
      '/v1/stripe/webhook',
    ])
      expect((await post(url, '203.0.113.1')).statusCode, url).not.toBe(429);
    const guarded = await t.app.inject({
      method: 'POST',
      url: '/v1/products',
      remoteAddress: '203.0.113.1',
      payload: {},
    });
    expect(guarded.json().code).toBe('rest_not_logged_in');
    // Reading is not limited by it.
    expect(
      (await t.app.inject({ method: 'GET', url: '/v1/health', remoteAddress: '203.0.113.1' })).statusCode,
    ).toBe(200);
    // The next minute counts again.
    await advanceClock(t, 60);
    expect((await post('/v1/cart/add', '203.0.113.1')).json().code).not.toBe('rate_limited');
  });
});
