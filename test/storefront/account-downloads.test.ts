import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/random.js';
import { admin, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import {
  type Customer,
  createCustomer,
  createLicense,
  makeZip,
  publish,
  setLicenseColumns,
  softwareProduct,
} from '../helpers/factories.js';

/**
 * Downloads (/account/downloads, docs/storefront.md 'Downloads'): the customer's licenses of
 * protected software products with the release each may install, and Download, a form that mints
 * an account token and answers 303 to its URL. Refusals come back as the page with the code in
 * `data-code`, and mint nothing.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' }, captureLogs: true });
  await setSettings(t, { rate_limit: 100 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;

const get = (c: Customer | undefined, url: string) =>
  t.app.inject({ method: 'GET', url, headers: c ? { cookie: c.headers.cookie } : {} });

/** Posts the Download form as the customer, with their session nonce unless `fields` say otherwise. */
const download = (c: Customer, url: string, fields: Record<string, string> | null = {}) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { cookie: c.headers.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(
      fields === null ? {} : { _nonce: c.headers['x-rest-nonce'], ...fields },
    ).toString(),
  });

const tokenCount = async () =>
  Number(
    (
      await db()
        .selectFrom('download_tokens')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** The row of a license on the page (its `<tr data-license>` … `</tr>`). */
function rowOf(body: string, licenseId: number): string {
  const start = body.indexOf(`<tr data-license="${licenseId}">`);
  expect(start, `row of license ${licenseId}`).toBeGreaterThanOrEqual(0);
  return body.slice(start, body.indexOf('</tr>', start));
}

async function product(opts: { version?: string; zip?: Buffer; fields?: Record<string, unknown> } = {}) {
  const p = await softwareProduct(t, {}, opts.fields ?? {});
  const zip = opts.zip ?? makeZip(2500);
  const release = opts.version === undefined ? null : await publish(t, p.id, opts.version, [], zip);
  return { id: p.id, name: p.name, release, zip };
}

async function externalRelease(productId: number, version: string) {
  const res = await admin(t, 'POST', `/software/products/${productId}/versions`, {
    version,
    external_url: `https://downloads.example.com/p-${version}.zip`,
    file_sha256: 'e'.repeat(64),
  });
  expect(res.statusCode).toBe(201);
  return res.json() as { version_id: number };
}

describe('/account/downloads: signed out, empty, headers', () => {
  it('sends a signed-out visitor (page and form) to sign in', async () => {
    const res = await get(undefined, '/account/downloads');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/account/sign-in?next=${encodeURIComponent('/account/downloads')}`);
    const form = await t.app.inject({
      method: 'POST',
      url: '/account/downloads/1/1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '_nonce=x',
    });
    expect(form.statusCode).toBe(303);
    expect(form.headers.location).toMatch(/^\/account\/sign-in\?/);
  });

  it('a customer with no licenses: the page, the menu with Downloads current, no-store', async () => {
    const me = await createCustomer(t);
    const res = await get(me, '/account/downloads');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('href="/account/downloads" aria-current="page"');
    expect(res.body).toContain('no software to download');
    expect(res.body).not.toContain('<table');
    // Downloads comes right after My licenses in the menu of every account page.
    const licenses = (await get(me, '/account/licenses')).body;
    expect(licenses.indexOf('href="/account/downloads"')).toBeGreaterThan(
      licenses.indexOf('href="/account/licenses"'),
    );
    expect(licenses.indexOf('href="/account/downloads"')).toBeLessThan(
      licenses.indexOf('href="/account/orders"'),
    );
  });
});

describe('/account/downloads: a row per license, in each state', () => {
  it('ready, external, expired, revoked, not entitled and no release; public and unpublished products are not listed', async () => {
    const me = await createCustomer(t);
    const license = async (productId: number) => createLicense(t, { product_id: productId, user_id: me.id });
    const ready = await product({ version: '1.2.0', zip: makeZip(4000) });
    const readyLicense = await license(ready.id);
    const external = await product();
    await externalRelease(external.id, '3.0.0');
    const externalLicense = await license(external.id);
    const expired = await product({ version: '1.0.0' });
    const expiredLicense = await license(expired.id);
    await setLicenseColumns(db(), expiredLicense.id, { usage_expires_at: '2001-01-01T00:00:00Z' });
    const revoked = await product({ version: '1.0.0' });
    const revokedLicense = await license(revoked.id);
    expect(
      (
        await t.app.inject({
          method: 'DELETE',
          url: `/v1/licenses/${revokedLicense.id}`,
          headers: t.adminAuth,
        })
      ).statusCode,
    ).toBe(200);
    const late = await product({ version: '2.0.0' });
    const lateLicense = await license(late.id);
    await setLicenseColumns(db(), lateLicense.id, {
      entitlement_policy: JSON.stringify({
        updates: { mode: 'days', expires_at: '2001-01-01T00:00:00Z' },
        historical_downloads: false,
      }),
    });
    const empty = await product();
    const emptyLicense = await license(empty.id);
    const free = await product({ version: '1.0.0', fields: { licensing_enabled: 'no' } });
    const freeLicense = await license(free.id);
    const hidden = await product({ version: '1.0.0' });
    const hiddenLicense = await license(hidden.id);
    await db().updateTable('products').set({ status: 'draft' }).where('id', '=', hidden.id).execute();

    const res = await get(me, '/account/downloads');
    expect(res.statusCode).toBe(200);
    const body = res.body;
    const r = rowOf(body, readyLicense.id);
    expect(r).toContain(ready.name);
    expect(r).toContain('1.2.0');
    expect(r).toContain(`…${readyLicense.license_key.slice(-4)}`);
    expect(r).not.toContain(readyLicense.license_key);
    expect(r).toContain(`${(ready.zip.length / 1024).toFixed(1)} KB`);
    expect(r).toContain(`action="/account/downloads/${readyLicense.id}/${ready.release!.version_id}"`);
    expect(r).toContain(`name="_nonce" value="${me.headers['x-rest-nonce']}"`);

    const x = rowOf(body, externalLicense.id);
    expect(x).toContain('3.0.0');
    expect(x).toContain('data-code="external"');
    expect(x).not.toContain('<form');
    expect(x).not.toContain('downloads.example.com');

    for (const [id, code] of [
      [expiredLicense.id, 'expired'],
      [revokedLicense.id, 'revoked'],
      [lateLicense.id, 'release_not_entitled'],
      [emptyLicense.id, 'no_eligible_release'],
    ] as const) {
      const row = rowOf(body, id);
      expect(row, code).toContain(`data-code="${code}"`);
      expect(row, code).not.toContain('<form');
    }
    // The release that exists but is not entitled is named; the page never holds a token.
    expect(rowOf(body, lateLicense.id)).toContain('2.0.0');
    expect(body).not.toContain(`data-license="${freeLicense.id}"`);
    expect(body).not.toContain(`data-license="${hiddenLicense.id}"`);
    expect(body).not.toContain('token=');
  });

  it('lists the licenses of several products at once (the service the page reads)', async () => {
    const me = await createCustomer(t);
    for (let i = 0; i < 6; i++) {
      const p = await product({ version: `1.0.${i}` });
      await createLicense(t, { product_id: p.id, user_id: me.id });
    }
    const rows = await t.app.services.distribution.account.accountDownloads(me.id);
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.state === 'ready')).toBe(true);
  });

  it('software switched off by the store: the page says so with module_disabled', async () => {
    const me = await createCustomer(t);
    await setSettings(t, { software_enabled: false });
    try {
      const res = await get(me, '/account/downloads');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('data-code="module_disabled"');
    } finally {
      await setSettings(t, { software_enabled: true });
    }
  });
});

describe('POST /account/downloads/<license>/<release>', () => {
  it('303 to the download URL, which answers 200 with the bytes; the token never reaches a log', async () => {
    const me = await createCustomer(t);
    const p = await product({ version: '1.0.0', zip: makeZip(5000) });
    const lic = await createLicense(t, { product_id: p.id, user_id: me.id });
    const res = await download(me, `/account/downloads/${lic.id}/${p.release!.version_id}`);
    expect(res.statusCode).toBe(303);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const location = res.headers.location as string;
    expect(location).toMatch(/^https?:\/\/[^/]+\/v1\/software\/download\?token=[0-9a-f]{64}$/);
    expect(res.body).toBe('');
    const u = new URL(location);
    const file = await t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
    expect(file.statusCode).toBe(200);
    expect(sha256(file.rawPayload)).toBe(sha256(p.zip));
    const token = u.searchParams.get('token')!;
    expect(t.logs()).toContain('/v1/software/download?token=[REDACTED]');
    expect(t.logs()).not.toContain(token);
  });

  it('refuses another customer’s license and unknown ids with a code, and mints nothing', async () => {
    const me = await createCustomer(t);
    const other = await createCustomer(t);
    const p = await product({ version: '1.0.0' });
    const theirs = await createLicense(t, { product_id: p.id, user_id: other.id });
    const mine = await createLicense(t, { product_id: p.id, user_id: me.id });
    const elsewhere = await product({ version: '9.0.0' });
    const before = await tokenCount();
    for (const [url, status, code] of [
      [`/account/downloads/${theirs.id}/${p.release!.version_id}`, 404, 'license_not_found'],
      [`/account/downloads/999999999/${p.release!.version_id}`, 404, 'license_not_found'],
      [`/account/downloads/${mine.id}/999999999`, 404, 'release_not_found'],
      [`/account/downloads/${mine.id}/${elsewhere.release!.version_id}`, 404, 'release_not_found'],
      [`/account/downloads/0/${p.release!.version_id}`, 404, 'license_not_found'],
      [`/account/downloads/${mine.id}/99999999999`, 404, 'release_not_found'],
      [`/account/downloads/%2e%2e%2f1/${p.release!.version_id}`, 404, 'license_not_found'],
      [`/account/downloads/1%0d%0a/${p.release!.version_id}`, 404, 'license_not_found'],
      [`/account/downloads/${mine.id}/1%0d%0aLocation:%20x`, 404, 'release_not_found'],
      [`/account/downloads/${mine.id}/-1`, 404, 'release_not_found'],
      [`/account/downloads/${mine.id}/1e3`, 404, 'release_not_found'],
    ] as const) {
      const res = await download(me, url);
      expect(res.statusCode, url).toBe(status);
      expect(res.headers.location, url).toBeUndefined();
      expect(res.body, url).toMatch(new RegExp(`role="alert" data-code="${code}"`));
      expect(res.headers['cache-control'], url).toBe('no-store');
    }
    // A path that climbs out is no route of the pages at all.
    const climb = await download(me, `/account/downloads/../1/${p.release!.version_id}`);
    expect(climb.statusCode).toBe(404);
    expect(climb.headers.location).toBeUndefined();
    expect(await tokenCount()).toBe(before);
  });

  it('refuses a license that cannot download (revoked, external release) with its code, and mints nothing', async () => {
    const me = await createCustomer(t);
    const p = await product({ version: '1.0.0' });
    const lic = await createLicense(t, { product_id: p.id, user_id: me.id });
    const ext = await externalRelease(p.id, '2.0.0');
    const before = await tokenCount();
    const external = await download(me, `/account/downloads/${lic.id}/${ext.version_id}`);
    expect(external.statusCode).toBe(403);
    expect(external.body).toContain('data-code="updater_external_link_prohibited"');
    await t.app.inject({ method: 'DELETE', url: `/v1/licenses/${lic.id}`, headers: t.adminAuth });
    const revoked = await download(me, `/account/downloads/${lic.id}/${p.release!.version_id}`);
    expect(revoked.statusCode).toBe(403);
    expect(revoked.body).toContain('role="alert" data-code="revoked"');
    expect(await tokenCount()).toBe(before);
  });

  it('a form without the session nonce, with a wrong one, or sent as JSON is 403 and mints nothing', async () => {
    const me = await createCustomer(t);
    const p = await product({ version: '1.0.0' });
    const lic = await createLicense(t, { product_id: p.id, user_id: me.id });
    const url = `/account/downloads/${lic.id}/${p.release!.version_id}`;
    const before = await tokenCount();
    expect((await download(me, url, null)).statusCode).toBe(403);
    expect((await download(me, url, { _nonce: 'not-the-nonce' })).statusCode).toBe(403);
    const json = await t.app.inject({
      method: 'POST',
      url,
      headers: { cookie: me.headers.cookie, 'content-type': 'application/json' },
      payload: JSON.stringify({ _nonce: ['not', 'text'] }),
    });
    expect(json.statusCode).toBe(403);
    const malformed = await t.app.inject({
      method: 'POST',
      url,
      headers: { cookie: me.headers.cookie, 'content-type': 'application/json' },
      payload: '{"_nonce":',
    });
    expect(malformed.statusCode).toBeGreaterThanOrEqual(400);
    expect(malformed.statusCode).toBeLessThan(500);
    expect(await tokenCount()).toBe(before);
  });
});

describe('/account/downloads: channels and staged rollouts', () => {
  it('offers what every stable site is offered: no beta, no release still rolling out', async () => {
    const me = await createCustomer(t);
    const p = await product({ version: '1.0.0' });
    const lic = await createLicense(t, { product_id: p.id, user_id: me.id });
    await publish(t, p.id, '1.1.0-beta1', [['channel', 'beta']]);
    const staged = await publish(t, p.id, '1.2.0', [['rollout_percent', '50']]);
    // Neither 1.1.0-beta1 nor the staged 1.2.0 (made current at upload) is offered.
    const row = rowOf((await get(me, '/account/downloads')).body, lic.id);
    expect(row).toContain('1.0.0');
    expect(row).not.toContain('1.1.0-beta1');
    expect(row).not.toContain('1.2.0');
    const done = await admin(t, 'PATCH', `/software/products/${p.id}/versions/${staged.version_id}/rollout`, {
      rollout_percent: 100,
    });
    expect(done.statusCode).toBe(200);
    expect(rowOf((await get(me, '/account/downloads')).body, lic.id)).toContain('1.2.0');
  });
});
