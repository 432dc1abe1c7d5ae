import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/http/redact.js';
import { URL_ONLY_INSTALLATION } from '../../src/modules/identity/identity.js';
import { phpUnserialize } from '../../src/modules/imports/php.js';
import { download } from '../distribution/helpers.js';
import { advanceClock, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import {
  adminId,
  configureSoftware,
  createLicense,
  installationId,
  makeZip,
  publish,
  setLicenseColumns,
  softwareProduct,
} from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('legacy_api software configuration', () => {
  it('is off by default and turns on and off per product', async () => {
    const product = await softwareProduct(t);
    const other = await softwareProduct(t);
    const read = async (id: number) =>
      (
        await t.app.inject({ method: 'GET', url: `/v1/software/products/${id}/config`, headers: t.adminAuth })
      ).json() as { legacy_api: boolean };
    expect((await read(product.id)).legacy_api).toBe(false);

    expect((await configureSoftware(t, product.id, { legacy_api: true })).legacy_api).toBe(true);
    expect((await read(product.id)).legacy_api).toBe(true);
    expect((await read(other.id)).legacy_api).toBe(false);

    expect((await configureSoftware(t, product.id, { legacy_api: false })).legacy_api).toBe(false);
    expect((await read(product.id)).legacy_api).toBe(false);
  });

  it('refuses a value that is not a boolean and changes nothing', async () => {
    const product = await softwareProduct(t);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${product.id}/config`,
      headers: t.adminAuth,
      payload: { legacy_api: 'yes please' },
    });
    expectError(res, 400, 'rest_invalid_param');
    const after = await t.app.inject({
      method: 'GET',
      url: `/v1/software/products/${product.id}/config`,
      headers: t.adminAuth,
    });
    expect((after.json() as { legacy_api: boolean }).legacy_api).toBe(false);
  });
});

// ─── The edd_action API (docs/migrating.md, 'Sites already in the field') ──────────────────────

/** A form post to the store's root, as EDD_SL_Plugin_Updater sends it. */
function edd(fields: Record<string, string>, app: TestApp = t) {
  return app.app.inject({
    method: 'POST',
    url: '/',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
}

async function eddJson(fields: Record<string, string>, app: TestApp = t) {
  const res = await edd(fields, app);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Record<string, unknown>;
}

/** The signed package link get_version answers with (docs/migrating.md, 'The package link'). */
const PACKAGE_LINK =
  /^https?:\/\/[^/]+\/edd-sl\/package\?a=[1-9][0-9]*&r=[1-9][0-9]*&e=[1-9][0-9]*&s=[A-Za-z0-9_-]{43}$/;

/** Opens a package link, expecting its 302, and answers the download token URL it redirects to. */
async function tokenOf(app: TestApp, link: string): Promise<string> {
  const res = await download(app, link);
  expect(res.statusCode, res.body).toBe(302);
  expect(res.headers['cache-control']).toBe('no-store');
  const location = String(res.headers.location);
  expect(location).toMatch(/\/v1\/software\/download\?token=[0-9a-f]{64}$/);
  return location;
}

/** A product that turned the compatibility API on, a release 1.1.0, and a license of limit `limit`. */
async function legacyProduct(limit = 2) {
  const product = await softwareProduct(t, { legacy_api: true }, { activation_limit: limit });
  await publish(t, product.id, '1.1.0');
  const license = await createLicense(t, { product_id: product.id, user_id: await adminId(t) });
  return { product, key: license.license_key, licenseId: license.id };
}

const activeRows = (licenseId: number) =>
  t.app.services.database.db
    .selectFrom('activations')
    .selectAll()
    .where('license_id', '=', licenseId)
    .where('status', '=', 'active')
    .execute();

describe('edd_action', () => {
  it('answers a product that did not turn it on as EDD answers an item it does not sell', async () => {
    const product = await softwareProduct(t);
    const license = await createLicense(t, { product_id: product.id, user_id: await adminId(t) });
    const base = { license: license.license_key, url: 'https://a.example.com' };
    expect(await eddJson({ edd_action: 'activate_license', item_id: String(product.id), ...base })).toEqual({
      success: false,
      license: 'invalid',
      error: 'invalid_item_id',
    });
    expect(
      await eddJson({ edd_action: 'check_license', item_id: String(product.id), ...base }),
    ).toMatchObject({
      success: false,
      license: 'invalid_item_id',
    });
    expect(await activeRows(license.id)).toHaveLength(0);
  });

  it('activates by URL, counts the same site once, and refuses a site past the limit', async () => {
    const f = await legacyProduct(2);
    const item = { item_id: String(f.product.id), license: f.key };
    const first = await eddJson({ edd_action: 'activate_license', ...item, url: 'https://one.example.com/' });
    expect(first).toMatchObject({
      success: true,
      license: 'valid',
      item_id: f.product.id,
      item_name: f.product.name,
      license_limit: 2,
      site_count: 1,
      activations_left: 1,
      expires: 'lifetime',
    });
    expect(first.checksum).toMatch(/^[0-9a-f]{32}$/);
    // The same site again (another spelling of its URL): the same seat.
    const again = await eddJson({ edd_action: 'activate_license', ...item, url: 'http://ONE.example.com' });
    expect(again).toMatchObject({ success: true, license: 'valid', site_count: 1 });
    await eddJson({ edd_action: 'activate_license', ...item, url: 'https://two.example.com' });
    const third = await eddJson({
      edd_action: 'activate_license',
      ...item,
      url: 'https://three.example.com',
    });
    expect(third).toMatchObject({
      success: false,
      license: 'invalid',
      error: 'no_activations_left',
      max_sites: 2,
    });
    const rows = await activeRows(f.licenseId);
    expect(rows.map((r) => r.domain_normalized).sort()).toEqual(['one.example.com', 'two.example.com']);
    expect(rows.every((r) => r.installation_id === URL_ONLY_INSTALLATION)).toBe(true);
  });

  it('names a missing key, another product, an expired or revoked license as EDD does', async () => {
    const f = await legacyProduct();
    const other = await legacyProduct();
    const url = 'https://site.example.com';
    const item = String(f.product.id);
    expect(
      await eddJson({ edd_action: 'activate_license', item_id: item, license: 'nope', url }),
    ).toMatchObject({
      success: false,
      error: 'missing',
    });
    expect(
      await eddJson({ edd_action: 'activate_license', item_id: item, license: other.key, url }),
    ).toMatchObject({ success: false, error: 'item_name_mismatch' });
    await setLicenseColumns(t.app.services.database.db, f.licenseId, {
      usage_expires_at: '2020-01-01T00:00:00Z',
    });
    expect(
      await eddJson({ edd_action: 'activate_license', item_id: item, license: f.key, url }),
    ).toMatchObject({
      success: false,
      license: 'invalid',
      error: 'expired',
      expires: '2020-01-01 00:00:00',
    });
    expect(await eddJson({ edd_action: 'check_license', item_id: item, license: f.key, url })).toMatchObject({
      success: false,
      license: 'expired',
    });
    await setLicenseColumns(t.app.services.database.db, other.licenseId, { status: 'revoked' });
    expect(
      await eddJson({
        edd_action: 'activate_license',
        item_id: String(other.product.id),
        license: other.key,
        url,
      }),
    ).toMatchObject({ success: false, error: 'disabled' });
    expect(await activeRows(f.licenseId)).toHaveLength(0);
    expect(await activeRows(other.licenseId)).toHaveLength(0);
  });

  it('checks and deactivates a site; a deactivated site is site_inactive and its seat is free', async () => {
    const f = await legacyProduct(1);
    const item = { item_id: String(f.product.id), license: f.key };
    const url = 'https://check.example.com';
    expect(await eddJson({ edd_action: 'check_license', ...item, url })).toMatchObject({
      success: false,
      license: 'site_inactive',
    });
    await eddJson({ edd_action: 'activate_license', ...item, url });
    expect(await eddJson({ edd_action: 'check_license', ...item, url })).toMatchObject({
      success: true,
      license: 'valid',
      site_count: 1,
    });
    expect(await eddJson({ edd_action: 'deactivate_license', ...item, url })).toMatchObject({
      success: true,
      license: 'deactivated',
      site_count: 0,
    });
    expect(await eddJson({ edd_action: 'deactivate_license', ...item, url })).toMatchObject({
      success: false,
      license: 'failed',
    });
    expect(await eddJson({ edd_action: 'check_license', ...item, url })).toMatchObject({
      license: 'site_inactive',
    });
    expect(
      await eddJson({ edd_action: 'activate_license', ...item, url: 'https://next.example.com' }),
    ).toMatchObject({ success: true, site_count: 1 });
  });

  it('get_version offers the update with a single-use package bound to the site, by POST and by GET', async () => {
    const f = await legacyProduct();
    const item = { item_id: String(f.product.id), license: f.key, url: 'https://upd.example.com' };
    // Not activated: the version, no package.
    const before = await eddJson({ edd_action: 'get_version', ...item, version: '1.0.0', slug: 'x' });
    expect(before).toMatchObject({ package: '', download_link: '' });
    expect(phpUnserialize(before.sections as string)).toMatchObject({ description: expect.any(String) });
    await eddJson({ edd_action: 'activate_license', ...item });
    const info = await eddJson({ edd_action: 'get_version', ...item, version: '1.0.0', slug: 'x' });
    expect(info).toMatchObject({ new_version: '1.1.0', stable_version: '1.1.0', name: f.product.name });
    expect(info.package).toMatch(PACKAGE_LINK);
    expect(info.download_link).toBe(info.package);
    expect(phpUnserialize(info.sections as string)).toMatchObject({
      changelog: expect.any(String),
      description: expect.any(String),
    });
    // The link redirects to a download token: single use, under parallel requests.
    const token = await tokenOf(t, info.package as string);
    const answers = await Promise.all(Array.from({ length: 5 }, () => download(t, token)));
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.statusCode !== 200).every((r) => r.json().code === 'token_consumed')).toBe(
      true,
    );
    // Up to date: no package.
    const current = await eddJson({ edd_action: 'get_version', ...item, version: '1.1.0', slug: 'x' });
    expect(current).toMatchObject({ new_version: '1.1.0', package: '' });
    // The same call as a query string, at the store's home page address.
    const query = new URLSearchParams({ edd_action: 'get_version', ...item, version: '1.0.0' });
    const viaGet = await t.app.inject({ method: 'GET', url: `/?${query}` });
    expect(viaGet.statusCode).toBe(200);
    expect(viaGet.headers['content-type']).toMatch(/^application\/json/);
    expect(viaGet.json()).toMatchObject({
      new_version: '1.1.0',
      package: expect.stringMatching(PACKAGE_LINK),
    });
    // Deactivated: the token issued before stops working, and the link mints no other.
    const link = (await eddJson({ edd_action: 'get_version', ...item, version: '1.0.0' })).package as string;
    const pending = await tokenOf(t, link);
    await eddJson({ edd_action: 'deactivate_license', ...item });
    expectError(await download(t, pending), 403, 'token_invalidated');
    expectError(await download(t, link), 403, 'domain_not_activated');
  });

  it('get_version sends sections, banners and icons as PHP-serialized arrays, as EDD does', async () => {
    const product = await softwareProduct(t, { legacy_api: true });
    // Multi-byte text, quotes and what looks like serialized data: PHP counts lengths in bytes.
    const changelog = 'Größer, "schneller"; a:1:{s:1:"x";}\nZweite Zeile';
    await publish(t, product.id, '1.1.0', [['changelog', changelog]]);
    const license = await createLicense(t, { product_id: product.id, user_id: await adminId(t) });
    const item = {
      item_id: String(product.id),
      license: license.license_key,
      url: 'https://ser.example.com',
    };
    await eddJson({ edd_action: 'activate_license', ...item });
    const info = await eddJson({ edd_action: 'get_version', ...item, version: '1.0.0', slug: 'x' });
    expect(info.sections).toBeTypeOf('string');
    expect(phpUnserialize(info.sections as string)).toEqual({
      description: expect.any(String),
      changelog: '<p>Größer, &quot;schneller&quot;; a:1:{s:1:&quot;x&quot;;}<br>Zweite Zeile</p>',
    });
    // No icon or banner: empty arrays, still serialized.
    expect(info.banners).toBe('a:0:{}');
    expect(info.icons).toBe('a:0:{}');
    // An item the store does not sell: no version, and sections still an array for the updater.
    const unknown = await eddJson({
      edd_action: 'get_version',
      item_id: '2147483000',
      license: license.license_key,
    });
    expect(unknown).toMatchObject({ new_version: '', sections: 'a:0:{}' });
  });

  it('get_versions answers several products at once, each as get_version', async () => {
    const a = await legacyProduct();
    const b = await legacyProduct();
    const url = 'https://many.example.com';
    await eddJson({ edd_action: 'activate_license', item_id: String(a.product.id), license: a.key, url });
    const res = await eddJson({
      edd_action: 'get_versions',
      'products[first][item_id]': String(a.product.id),
      'products[first][license]': a.key,
      'products[first][url]': url,
      'products[first][version]': '1.0.0',
      'products[second][item_id]': String(b.product.id),
      'products[second][license]': b.key,
      'products[second][url]': url,
      'products[second][version]': '1.0.0',
    });
    expect(res.first).toMatchObject({ new_version: '1.1.0', package: expect.stringMatching(PACKAGE_LINK) });
    expect(res.second).toMatchObject({ package: '' });
  });

  it('never takes more seats than the limit under parallel activations', async () => {
    const f = await legacyProduct(3);
    const item = { item_id: String(f.product.id), license: f.key };
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        eddJson({ edd_action: 'activate_license', ...item, url: `https://p${i}.example.com` }),
      ),
    );
    expect(answers.filter((a) => a.success === true)).toHaveLength(3);
    expect(await activeRows(f.licenseId)).toHaveLength(3);
  });

  it('a site activated by URL that later runs the Tollgate SDK keeps its seat: the activation takes the full identity', async () => {
    const f = await legacyProduct(1);
    const url = 'https://moving.example.com';
    await eddJson({ edd_action: 'activate_license', item_id: String(f.product.id), license: f.key, url });
    const [legacyRow] = await activeRows(f.licenseId);
    const full = { domain: 'moving.example.com', installation_id: installationId() };
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/licenses/activate',
      payload: { license_key: f.key, ...full },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ success: true, activation_id: legacyRow!.id });
    const rows = await activeRows(f.licenseId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: legacyRow!.id, installation_id: full.installation_id });
    // The old updater asking again is the same seat, not a second one.
    expect(
      await eddJson({ edd_action: 'activate_license', item_id: String(f.product.id), license: f.key, url }),
    ).toMatchObject({ success: true, site_count: 1 });
  });

  it('refuses what is not a call of EDD, and changes nothing', async () => {
    const f = await legacyProduct();
    const item = { item_id: String(f.product.id), license: f.key, url: 'https://bad.example.com' };
    expectError(await edd({ edd_action: 'drop_tables', ...item }), 400, 'invalid_parameters');
    expectError(await edd({ license: f.key }), 404, 'rest_no_route');
    expectError(
      await edd({ edd_action: 'activate_license', ...item, url: `https://${'a'.repeat(3000)}.com` }),
      400,
      'invalid_parameters',
    );
    const nul = await t.app.inject({
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `edd_action=activate_license&license=${f.key}%00&item_id=${f.product.id}&url=x.example.com`,
    });
    expect(nul.statusCode).toBe(400);
    const huge = await t.app.inject({
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `edd_action=check_license&x=${'a'.repeat(20_000)}`,
    });
    expect(huge.statusCode).toBe(413);
    // Hostile values are only text to compare.
    expect(
      await eddJson({
        edd_action: 'check_license',
        item_id: "1' OR '1'='1",
        item_name: "x'; DROP TABLE licenses;--",
        license: "' OR 1=1 --",
        url: '../../etc/passwd',
      }),
    ).toMatchObject({ success: false });
    expect(await eddJson({ edd_action: 'activate_license', ...item, url: 'not a url at all' })).toMatchObject(
      { success: false, error: 'missing_url' },
    );
    expect(await activeRows(f.licenseId)).toHaveLength(0);
    // The store's home page is still the home page.
    const home = await t.app.inject({ method: 'GET', url: '/' });
    expect(home.statusCode).toBe(200);
    expect(home.headers['content-type']).toMatch(/^text\/html/);
  });
});

describe('the package link (GET /edd-sl/package)', () => {
  // An app of its own with a test clock: its tests move the clock hours forward.
  let c: TestApp;
  beforeAll(async () => {
    c = await createTestApp({ env: { TEST_CLOCK: '1' } });
  });
  afterAll(async () => c.close());

  const ZIP = makeZip(2000);

  /** An activated site of a legacy product with release 1.1.0, and the link get_version offers it. */
  async function offered(site: string) {
    const product = await softwareProduct(c, { legacy_api: true });
    const release = await publish(c, product.id, '1.1.0', [], ZIP);
    const license = await createLicense(c, { product_id: product.id, user_id: await adminId(c) });
    const item = { item_id: String(product.id), license: license.license_key, url: site };
    await eddJson({ edd_action: 'activate_license', ...item }, c);
    const tokensBefore = await tokenRows();
    const info = await eddJson({ edd_action: 'get_version', ...item, version: '1.0.0' }, c);
    // get_version writes no token: the link mints one when it is opened.
    expect(await tokenRows()).toBe(tokensBefore);
    const link = info.package as string;
    expect(link).toMatch(PACKAGE_LINK);
    expect(info.download_link).toBe(link);
    expect(link).not.toContain(license.license_key);
    return { product, release, license, item, link };
  }

  const tokenRows = async () =>
    Number(
      (
        await c.app.services.database.db
          .selectFrom('download_tokens')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  /** The link with one query field replaced. */
  const withField = (link: string, name: string, value: string) => {
    const u = new URL(link);
    u.searchParams.set(name, value);
    return u.toString();
  };

  it('still installs after token_expiry: a fresh single-use token for that release, bound to the site', async () => {
    const f = await offered('https://later.example.com');
    // Later that morning: well past the store's token_expiry (5 minutes), as WordPress keeps the offer.
    await advanceClock(c, 3 * 3600);
    const token = await tokenOf(c, f.link);
    const first = await download(c, token);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.rawPayload.equals(ZIP)).toBe(true);
    expectError(await download(c, token), 403, 'token_consumed');
    // The token is the update check's: bound to the license, the site's activation and the release.
    const [activation] = await c.app.services.database.db
      .selectFrom('activations')
      .select('id')
      .where('license_id', '=', f.license.id)
      .execute();
    const hash = createHash('sha256').update(new URL(token).searchParams.get('token')!).digest('hex');
    expect(
      await c.app.services.database.db
        .selectFrom('download_tokens')
        .select(['license_id', 'activation_id', 'release_id', 'purpose'])
        .where('token_hash', '=', hash)
        .executeTakeFirstOrThrow(),
    ).toEqual({
      license_id: f.license.id,
      activation_id: activation!.id,
      release_id: f.release.version_id,
      purpose: 'update',
    });
    // Opened again (another click), under parallel requests: a new token each time, each single use.
    const tokens = await Promise.all(Array.from({ length: 4 }, () => tokenOf(c, f.link)));
    expect(new Set(tokens).size).toBe(4);
    const answers = await Promise.all([...tokens, ...tokens].map((u) => download(c, u)));
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(4);
    expect(answers.filter((r) => r.statusCode === 403 && r.json().code === 'token_consumed')).toHaveLength(4);
  });

  it('refuses a link this store did not sign: 403 invalid_package_link, and mints nothing', async () => {
    const f = await offered('https://tamper.example.com');
    const s = new URL(f.link).searchParams;
    const other = await publish(c, f.product.id, '1.2.0');
    const flipped = s.get('s')!.startsWith('A') ? `B${s.get('s')!.slice(1)}` : `A${s.get('s')!.slice(1)}`;
    const before = await tokenRows();
    for (const bad of [
      withField(f.link, 's', flipped),
      withField(f.link, 'r', String(other.version_id)),
      withField(f.link, 'a', String(Number(s.get('a')) + 1)),
      withField(f.link, 'e', String(Number(s.get('e')) + 86_400)),
    ]) {
      expectError(await download(c, bad), 403, 'invalid_package_link');
    }
    expect(await tokenRows()).toBe(before);
  });

  it('refuses hostile input with 403 invalid_package_link, never a 500', async () => {
    const f = await offered('https://hostile.example.com');
    const q = new URL(f.link).search.slice(1);
    const cases = [
      '',
      'a=1',
      `${q}&a=2`, // a field twice
      q.replace(/a=[0-9]+/, `a=${'9'.repeat(5000)}`),
      q.replace(/e=[0-9]+/, 'e=-1'),
      q.replace(/r=[0-9]+/, 'r=1.5'),
      q.replace(/a=[0-9]+/, 'a=0x1'),
      q.replace(/s=[^&]+/, `s=${'A'.repeat(20_000)}`),
      q.replace(/s=[^&]+/, "s=' OR 1=1 --"),
      `${q.replace(/a=[0-9]+/, 'a[]=1')}`,
    ];
    for (const query of cases) {
      const res = await c.app.inject({ method: 'GET', url: `/edd-sl/package?${query}` });
      expectError(res, 403, 'invalid_package_link');
    }
    // A NUL character is refused before any route, as everywhere.
    expectError(
      await c.app.inject({ method: 'GET', url: '/edd-sl/package?a=%00&r=%00&e=%00&s=%00' }),
      400,
      'rest_invalid_param',
    );
    // Only GET: another method is no route.
    expect((await c.app.inject({ method: 'POST', url: `/edd-sl/package?${q}` })).statusCode).toBe(404);
  });

  it('a link past its 24 hours is 410 package_link_expired; get_version then offers a new one', async () => {
    const f = await offered('https://expired.example.com');
    await advanceClock(c, 23 * 3600);
    await tokenOf(c, f.link);
    await advanceClock(c, 2 * 3600);
    expectError(await download(c, f.link), 410, 'package_link_expired');
    const again = await eddJson({ edd_action: 'get_version', ...f.item, version: '1.0.0' }, c);
    expect(again.package).not.toBe(f.link);
    expect((await download(c, await tokenOf(c, again.package as string))).statusCode).toBe(200);
  });

  it('checks the license, the site, legacy_api and the release again when opened', async () => {
    // Revoked.
    const revoked = await offered('https://revoked.example.com');
    await setLicenseColumns(c.app.services.database.db, revoked.license.id, { status: 'revoked' });
    expectError(await download(c, revoked.link), 403, 'revoked');
    // Expired.
    const expired = await offered('https://lapsed.example.com');
    await setLicenseColumns(c.app.services.database.db, expired.license.id, {
      usage_expires_at: '2020-01-01T00:00:00Z',
    });
    expectError(await download(c, expired.link), 403, 'expired');
    // The site deactivated.
    const site = await offered('https://gone.example.com');
    await eddJson({ edd_action: 'deactivate_license', ...site.item }, c);
    expectError(await download(c, site.link), 403, 'domain_not_activated');
    // The product's compatibility API turned off.
    const off = await offered('https://off.example.com');
    await configureSoftware(c, off.product.id, { legacy_api: false });
    expectError(await download(c, off.link), 403, 'legacy_api_disabled');
    // The release withdrawn.
    const withdrawn = await offered('https://withdrawn.example.com');
    const res = await c.app.inject({
      method: 'POST',
      url: `/v1/software/products/${withdrawn.product.id}/versions/${withdrawn.release.version_id}/withdraw`,
      headers: c.adminAuth,
    });
    expect(res.statusCode, res.body).toBe(200);
    expectError(await download(c, withdrawn.link), 410, 'release_withdrawn');
  });

  it("mints under the update check's issuance limits: 429 rate_limited, and no token", async () => {
    // A fresh minute for the counters, and a limit of 2 issuances a minute per license.
    await advanceClock(c, 61);
    await setSettings(c, { rate_limit: 2 });
    try {
      const f = await offered('https://busy.example.com'); // get_version counts once
      await tokenOf(c, f.link); // twice
      const before = await tokenRows();
      const res = await download(c, f.link);
      expectError(res, 429, 'rate_limited');
      expect(await tokenRows()).toBe(before);
    } finally {
      await setSettings(c, { rate_limit: 10 });
      await advanceClock(c, 61);
    }
  });

  it('a site that moved to the Tollgate SDK no longer takes its old updater link', async () => {
    const f = await offered('https://sdk.example.com');
    const res = await c.app.inject({
      method: 'POST',
      url: '/v1/licenses/activate',
      payload: {
        license_key: f.license.license_key,
        domain: 'sdk.example.com',
        installation_id: installationId(),
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expectError(await download(c, f.link), 403, 'domain_not_activated');
  });
});

describe('the keys the updaters send', () => {
  it('never reach a log line', () => {
    expect(redactUrl('/?edd_action=check_license&license=abc123&url=x')).toBe(
      '/?edd_action=check_license&license=[REDACTED]&url=x',
    );
    expect(
      redactUrl('/?edd_action=get_versions&products%5Ba%5D%5Blicense%5D=abc&products[b][license]=def'),
    ).toBe(
      '/?edd_action=get_versions&products%5Ba%5D%5Blicense%5D=[REDACTED]&products[b][license]=[REDACTED]',
    );
  });

  it('nor does the package link’s signature, which mints downloads for 24 hours', () => {
    expect(redactUrl('/edd-sl/package?a=12&r=3&e=1764400000&s=q1W2e3R4t5')).toBe(
      '/edd-sl/package?a=12&r=3&e=1764400000&s=[REDACTED]',
    );
    expect(redactUrl('/edd-sl/package?s=q1W2e3R4t5&a=12')).toBe('/edd-sl/package?s=[REDACTED]&a=12');
    // Another route's `s` is no secret.
    expect(redactUrl('/products?s=forms')).toBe('/products?s=forms');
  });
});
