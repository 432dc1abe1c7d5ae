import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceClock, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { call, pkg, protectedFixture, publicFixture } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
});
afterAll(async () => t.close());

/** Moves the test clock to the start of the next minute, so a test's requests share one window. */
async function freshWindow() {
  const res = await t.app.inject({ method: 'GET', url: '/v1/test-clock', headers: t.adminAuth });
  const now = new Date(res.json().now).getTime();
  const seconds = 60 - (Math.floor(now / 1000) % 60);
  await advanceClock(t, seconds);
}

describe('issuance rate limits', () => {
  it('per license id across addresses: the 4th request in a minute is 429 rate_limited, retry_after 60', async () => {
    await setSettings(t, { rate_limit: 3 });
    const f = await protectedFixture(t);
    await freshWindow();
    for (let i = 0; i < 3; i++)
      expect((await pkg(t, { slug: f.slug, purpose: 'install', ...f.creds })).statusCode).toBe(200);
    const res = await pkg(t, { slug: f.slug, purpose: 'install', ...f.creds });
    expectError(res, 429, 'rate_limited');
    expect(res.json().data.retry_after).toBe(60);
    // The check route shares the bucket; another license does not.
    expectError(
      await call(
        t,
        'GET',
        `/software/check?${new URLSearchParams({ slug: f.slug, version: '0.1', ...f.creds })}`,
      ),
      429,
      'rate_limited',
    );
    const g = await protectedFixture(t);
    expect((await pkg(t, { slug: g.slug, purpose: 'install', ...g.creds })).statusCode).toBe(200);
    // A new window opens after a minute.
    await advanceClock(t, 60);
    expect((await pkg(t, { slug: f.slug, purpose: 'install', ...f.creds })).statusCode).toBe(200);
  });

  it('public products: per product and address; unknown products: per address; rate_limited comes before product_not_found', async () => {
    await setSettings(t, { rate_limit: 2 });
    const p = await publicFixture(t);
    await freshWindow();
    const ip = '10.200.0.1';
    for (let i = 0; i < 2; i++)
      expect((await pkg(t, { slug: p.slug, purpose: 'install' }, ip)).statusCode).toBe(200);
    expectError(await pkg(t, { slug: p.slug, purpose: 'install' }, ip), 429, 'rate_limited');
    expect((await pkg(t, { slug: p.slug, purpose: 'install' }, '10.200.0.2')).statusCode).toBe(200);
    const other = '10.200.0.3';
    for (let i = 0; i < 2; i++)
      expectError(await pkg(t, { slug: 'unknown', purpose: 'install' }, other), 404, 'product_not_found');
    expectError(await pkg(t, { slug: 'unknown', purpose: 'install' }, other), 429, 'rate_limited');
  });

  it('the per-address cap max(10, min(500, limit x 5)) applies across licenses', async () => {
    await setSettings(t, { rate_limit: 1 });
    const ip = '10.201.0.1';
    const fixtures = [];
    for (let i = 0; i < 11; i++) fixtures.push(await protectedFixture(t));
    await freshWindow();
    for (let i = 0; i < 10; i++) {
      const f = fixtures[i]!;
      expect((await pkg(t, { slug: f.slug, purpose: 'install', ...f.creds }, ip)).statusCode).toBe(200);
    }
    const last = fixtures[10]!;
    expectError(
      await pkg(t, { slug: last.slug, purpose: 'install', ...last.creds }, ip),
      429,
      'rate_limited',
    );
  });
});
