import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCodes } from '../../src/http/errors.js';
import { CUSTOMER_MESSAGES, customerMessage, RENEWABLE } from '../../src/modules/distribution/messages.js';
import { admin, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { publish, setLicenseColumns } from '../helpers/factories.js';
import { call, pkg, protectedFixture } from './helpers.js';

// What a vendor's updater can show its customer (docs/distribution.md, 'Messages a vendor can show').

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { rate_limit: 100 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const check = (q: Record<string, string>) => call(t, 'GET', `/software/check?${new URLSearchParams(q)}`);
const storePage = (slug: string) => `${t.app.services.urls.origin}/products/${slug}`;
const PAST = '2001-01-01T00:00:00.000Z';
/** An update window that closed before any release was published: no release is entitled. */
const closedWindow = JSON.stringify({
  updates: { mode: 'days', expires_at: '2001-01-01T00:00:00Z' },
  historical_downloads: false,
});

type Refusal = { code: string; message: string; data: Record<string, unknown> };

describe('the message catalogue', () => {
  it('names only codes of the error catalogue, and every renewable code has a message', () => {
    const codes = new Set(errorCodes().map((c) => c.code as string));
    for (const code of Object.keys(CUSTOMER_MESSAGES)) expect(codes.has(code), code).toBe(true);
    for (const code of RENEWABLE) expect(CUSTOMER_MESSAGES[code], code).toBeTypeOf('string');
  });
});

describe('the update check', () => {
  it('eligible: no message, no renewal_url', async () => {
    const f = await protectedFixture(t);
    await publish(t, f.product.id, '1.1.0');
    const b = (await check({ slug: f.slug, version: '1.0.0', ...f.creds })).json();
    expect(b).toMatchObject({ eligible: true, eligibility_reason: null, message: null, renewal_url: null });
  });

  it('up to date: no message, no renewal_url', async () => {
    const f = await protectedFixture(t);
    const b = (await check({ slug: f.slug, version: '1.0.0', ...f.creds })).json();
    expect(b).toMatchObject({ available: false, message: null, renewal_url: null });
  });

  it('available but not entitled: message naming the version, renewal_url of the storefront page', async () => {
    const f = await protectedFixture(t);
    await publish(t, f.product.id, '1.1.0');
    await setLicenseColumns(db(), f.licenseId, { entitlement_policy: closedWindow });
    const b = (await check({ slug: f.slug, version: '1.0.0', ...f.creds })).json();
    expect(b).toMatchObject({
      eligible: false,
      available_version: '1.1.0',
      eligibility_reason: 'release_not_entitled',
      renewal_url: storePage(f.slug),
      message: customerMessage('release_not_entitled', '', '1.1.0'),
    });
    expect(b.message).toContain('1.1.0');
  });

  it('expired license: 403 expired with message, renewal_url and available_version', async () => {
    const f = await protectedFixture(t);
    await publish(t, f.product.id, '1.1.0');
    await setLicenseColumns(db(), f.licenseId, { usage_expires_at: PAST });
    for (const res of [
      await check({ slug: f.slug, version: '1.0.0', ...f.creds }),
      await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.0.0', ...f.creds }),
    ]) {
      expectError(res, 403, 'expired');
      const b = res.json() as Refusal;
      expect(b.message).toBe(customerMessage('expired', '', '1.1.0'));
      expect(b.data).toEqual({ status: 403, renewal_url: storePage(f.slug), available_version: '1.1.0' });
    }
    // Running the newest version: nothing to offer, the renewal link stays.
    const latest = await check({ slug: f.slug, version: '1.1.0', ...f.creds });
    expectError(latest, 403, 'expired');
    expect((latest.json() as Refusal).data).toMatchObject({
      renewal_url: storePage(f.slug),
      available_version: null,
    });
  });

  it('a term license: renewal_url is its one-click renewal link, expired or out of updates', async () => {
    const term = { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 365 } };
    const f = await protectedFixture(t, { license: { entitlement_policy: term } });
    await publish(t, f.product.id, '1.1.0');
    await setLicenseColumns(db(), f.licenseId, { usage_expires_at: PAST });
    const link = `${t.app.services.urls.origin}/renew?token=${f.licenseId}.${Date.parse(PAST) / 1000}.`;
    const expired = await check({ slug: f.slug, version: '1.0.0', ...f.creds });
    expectError(expired, 403, 'expired');
    const url = String((expired.json() as Refusal).data.renewal_url);
    expect(url.startsWith(link)).toBe(true);
    // The same link from the package route, and none of it in the body but the URL.
    const update = await pkg(t, { slug: f.slug, purpose: 'update', current_version: '1.0.0', ...f.creds });
    expect((update.json() as Refusal).data.renewal_url).toBe(url);
    expect(update.body).not.toContain(f.key);
    // The link opens the renewal (until 60 days after the end: this one ended long ago).
    const open = await t.app.inject({ method: 'GET', url: new URL(url).pathname + new URL(url).search });
    expect(open.statusCode).toBe(410);
    expect(open.body).toContain('data-code="renewal_link_expired"');
    // Still in its term but out of updates: the check's answer (no refusal) carries the link too.
    const end = new Date(Date.now() + 100 * 86_400_000).toISOString();
    const outOfUpdates = JSON.stringify({
      issued_at: '2001-01-01T00:00:00Z',
      usage: { mode: 'days', days: 365 },
      updates: { mode: 'days', days: 1 },
      support: { mode: 'unspecified' },
      historical_downloads: false,
    });
    await setLicenseColumns(db(), f.licenseId, { usage_expires_at: end, entitlement_policy: outOfUpdates });
    const b = (await check({ slug: f.slug, version: '1.0.0', ...f.creds })).json();
    expect(b).toMatchObject({ eligible: false, eligibility_reason: 'release_not_entitled' });
    // Eligible, ending within 30 days: the link; further off: none.
    await setLicenseColumns(db(), f.licenseId, {
      entitlement_policy: outOfUpdates.replace('"days":1}', '"days":36500}'),
    });
    const soon = new Date(Date.now() + 20 * 86_400_000).toISOString();
    await setLicenseColumns(db(), f.licenseId, { usage_expires_at: soon });
    const ok = (await check({ slug: f.slug, version: '1.0.0', ...f.creds })).json();
    expect(ok).toMatchObject({ eligible: true, message: null });
    expect(ok.renewal_url).toMatch(/\/renew\?token=/);
    await setLicenseColumns(db(), f.licenseId, { usage_expires_at: end });
    expect(b.renewal_url).toMatch(
      new RegExp(`/renew\\?token=${f.licenseId}\\.${Math.floor(Date.parse(end) / 1000)}\\.`),
    );
  });

  it('no license key: renewal_url to buy one; a refusal where buying does not help has none', async () => {
    const f = await protectedFixture(t);
    const none = await check({ slug: f.slug, version: '0.9.0' });
    expectError(none, 403, 'license_required');
    expect((none.json() as Refusal).data).toMatchObject({
      renewal_url: storePage(f.slug),
      available_version: '1.0.0',
    });
    const site = await check({ slug: f.slug, version: '0.9.0', license_key: f.key });
    expectError(site, 400, 'missing_identity');
    expect((site.json() as Refusal).data).toMatchObject({ renewal_url: null, available_version: null });
    expect((site.json() as Refusal).message).toBe(CUSTOMER_MESSAGES.missing_identity);
  });
});

describe('the package route', () => {
  it('expired license: the refusal says which version exists and where to renew', async () => {
    const f = await protectedFixture(t);
    await publish(t, f.product.id, '1.1.0');
    await setLicenseColumns(db(), f.licenseId, { usage_expires_at: PAST });
    const update = await pkg(t, { slug: f.slug, purpose: 'update', current_version: '1.0.0', ...f.creds });
    expectError(update, 403, 'expired');
    const b = update.json() as Refusal;
    expect(b.data).toEqual({ status: 403, renewal_url: storePage(f.slug), available_version: '1.1.0' });
    expect(b.message).toBe(customerMessage('expired', '', '1.1.0'));
    const install = await pkg(t, { slug: f.slug, purpose: 'install', ...f.creds });
    expectError(install, 403, 'expired');
    expect((install.json() as Refusal).data.available_version).toBe('1.1.0');
  });

  it('not entitled: 403 release_not_entitled with available_version and renewal_url', async () => {
    const f = await protectedFixture(t);
    await publish(t, f.product.id, '1.1.0');
    await setLicenseColumns(db(), f.licenseId, { entitlement_policy: closedWindow });
    const res = await pkg(t, { slug: f.slug, purpose: 'update', current_version: '1.0.0', ...f.creds });
    expectError(res, 403, 'release_not_entitled');
    expect((res.json() as Refusal).data).toEqual({
      status: 403,
      renewal_url: storePage(f.slug),
      available_version: '1.1.0',
    });
  });

  it('up to date (404 no_eligible_release): nothing to renew', async () => {
    const f = await protectedFixture(t);
    const res = await pkg(t, { slug: f.slug, purpose: 'update', current_version: '1.0.0', ...f.creds });
    expectError(res, 404, 'no_eligible_release');
    expect((res.json() as Refusal).data).toEqual({ status: 404, renewal_url: null, available_version: null });
  });

  it('malformed JSON, wrong types and unknown fields keep their codes and gain the fields', async () => {
    const f = await protectedFixture(t);
    const cases: [Awaited<ReturnType<typeof pkg>>, number, string][] = [
      [
        await t.app.inject({
          method: 'POST',
          url: '/v1/software/package',
          headers: { 'content-type': 'application/json' },
          payload: '{"slug":',
        }),
        400,
        'rest_invalid_json',
      ],
      [await pkg(t, { slug: 5, purpose: 'install' }), 400, 'rest_invalid_param'],
      [await pkg(t, { slug: f.slug, purpose: 'install', version: '9' }), 400, 'unsupported_parameter'],
      [await pkg(t, { slug: f.slug, purpose: 'nope' }), 400, 'invalid_purpose'],
      [await call(t, 'POST', '/software/check', { slug: [f.slug], version: '1' }), 400, 'rest_invalid_param'],
    ];
    for (const [res, status, code] of cases) {
      expectError(res, status, code);
      const b = res.json() as Refusal;
      expect(b.message).toBeTypeOf('string');
      expect(b.data).toMatchObject({ renewal_url: null, available_version: null });
    }
  });

  it('hostile slug: nothing is looked up past the refusal, no link is made from it', async () => {
    const res = await pkg(t, { slug: '../../<script>', purpose: 'install', license_key: 'x' });
    expectError(res, 404, 'product_not_found');
    expect((res.json() as Refusal).data).toEqual({ status: 404, renewal_url: null, available_version: null });
  });
});

describe('the renewal_url setting', () => {
  it('is null by default, http(s) only, and serves products the storefront does not sell', async () => {
    const f = await protectedFixture(t, { product: { price: '0.00' } });
    await setLicenseColumns(db(), f.licenseId, { usage_expires_at: PAST });
    const before = await check({ slug: f.slug, version: '0.9.0', ...f.creds });
    expectError(before, 403, 'expired');
    expect((before.json() as Refusal).data.renewal_url).toBeNull();

    const settings = await admin(t, 'GET', '/settings');
    expect(settings.json().renewal_url).toBeNull();
    for (const bad of [
      'javascript:alert(1)',
      'ftp://vendor.example/buy',
      'vendor.example',
      42,
      true,
      `https://x.example/${'a'.repeat(2000)}`,
    ]) {
      expectError(await admin(t, 'PATCH', '/settings', { renewal_url: bad }), 400, 'rest_invalid_param');
    }
    expectError(
      await admin(t, 'PATCH', '/settings', { renewal_url: 'https://vendor.example/\u0000' }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await admin(t, 'PATCH', '/settings', { renewal_urls: 'https://vendor.example/' }),
      400,
      'invalid_parameters',
    );
    expect((await admin(t, 'GET', '/settings')).json().renewal_url).toBeNull();

    await setSettings(t, { renewal_url: 'https://vendor.example/buy' });
    const after = await check({ slug: f.slug, version: '0.9.0', ...f.creds });
    expect((after.json() as Refusal).data).toMatchObject({
      renewal_url: 'https://vendor.example/buy',
      available_version: '1.0.0',
    });

    // A product the storefront sells still links to its page.
    const sold = await protectedFixture(t);
    await setLicenseColumns(db(), sold.licenseId, { usage_expires_at: PAST });
    const res = await check({ slug: sold.slug, version: '0.9.0', ...sold.creds });
    expect((res.json() as Refusal).data.renewal_url).toBe(storePage(sold.slug));

    await setSettings(t, { renewal_url: null });
    expect((await admin(t, 'GET', '/settings')).json().renewal_url).toBeNull();
  });
});
