import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tollgate } from '../../sdk/js/src/index.js';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/database.js';
import { call, type Fixture, protectedFixture, publicFixture } from '../distribution/helpers.js';
import {
  admin,
  advanceClock,
  createTestApp,
  expectError,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import { identity } from '../helpers/factories.js';

/**
 * What runs in the field (docs/distribution.md, 'What runs in the field'): update checks and
 * validations note in memory what each site runs; a flush counts each site once per product and
 * UTC day, in every process, and stores no domain, address, key or installation id.
 */
let t: TestApp;
let pub: Awaited<ReturnType<typeof publicFixture>>;
let f: Fixture;
let base: string;
const DAY_S = 86_400;

beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await setSettings(t, { rate_limit: 100 });
  pub = await publicFixture(t, '1.0.0');
  f = await protectedFixture(t);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  base = `http://127.0.0.1:${address.port}/v1`;
});
afterAll(async () => t.close());

interface Report {
  product_id: number;
  from: string;
  to: string;
  days: { day: string; sites: number; versions: { version: string; sites: number }[] }[];
  as_of: string | null;
  sites: number;
  platforms: { platform: string; version: string; sites: number; share: number }[];
  php: { version: string; sites: number; share: number }[];
}

const report = async (productId: number, query = '') => {
  const res = await admin(t, 'GET', `/software/products/${productId}/field${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Report;
};
const today = async () => {
  const res = await t.app.inject({ method: 'GET', url: '/v1/test-clock', headers: t.adminAuth });
  return (res.json() as { now: string }).now.slice(0, 10);
};
const stored = async () => {
  const db = t.app.services.database.db;
  return {
    sites: await db.selectFrom('field_sites').selectAll().execute(),
    counts: await db.selectFrom('field_counts').selectAll().orderBy('day').orderBy('kind').execute(),
  };
};
const countsOf = async (productId: number) =>
  (await stored()).counts
    .filter((r) => r.product_id === productId)
    .map((r) => ({ ...r, sites: Number(r.sites) }));

/** An update check over HTTP, as a site's updater sends it. */
async function check(body: Record<string, unknown>) {
  const res = await fetch(`${base}/software/check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const sites = Array.from({ length: 30 }, (_, i) => identity(`site-${i}.example.net`));
/** Every third site on WordPress 6.5 and PHP 8.2, the next on 6.4 and 7.4, the third says nothing. */
const host = (i: number) =>
  i % 3 === 0
    ? { platform: 'wordpress', platform_version: '6.5.2', php_version: '8.2.12' }
    : i % 3 === 1
      ? { platform: 'wordpress', platform_version: '6.4.1', php_version: '7.4.33-1+deb11u1' }
      : {};
const siteBody = (i: number, version: string) => ({
  slug: pub.slug,
  version,
  site_url: `https://${sites[i]!.domain}/`,
  installation_id: sites[i]!.installation_id,
  ...host(i),
});

describe('the installed-base report', () => {
  it('counts 30 sites over two days once each, by version, platform and PHP, whatever they repeat', async () => {
    const day1 = await today();
    // Day 1: 20 sites on 1.0.0, 10 on 0.9.0; the first 10 check three times.
    for (let i = 0; i < 30; i++) {
      const repeat = i < 10 ? 3 : 1;
      for (let r = 0; r < repeat; r++) {
        const res = await check(siteBody(i, i < 20 ? '1.0.0' : '0.9.0'));
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }
    }
    await advanceClock(t, DAY_S);
    const day2 = await today();
    expect(day2 > day1).toBe(true);
    // Day 2: 25 sites, all on 1.0.0; the first 5 also check by GET.
    for (let i = 0; i < 25; i++) expect((await check(siteBody(i, '1.0.0'))).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const q = new URLSearchParams(siteBody(i, '1.0.0') as Record<string, string>);
      expect((await fetch(`${base}/software/check?${q}`)).status).toBe(200);
    }

    const got = await report(pub.product.id, `?from=${day1}&to=${day2}`);
    expect(got).toEqual({
      product_id: pub.product.id,
      from: day1,
      to: day2,
      days: [
        {
          day: day1,
          sites: 30,
          versions: [
            { version: '1.0.0', sites: 20 },
            { version: '0.9.0', sites: 10 },
          ],
        },
        { day: day2, sites: 25, versions: [{ version: '1.0.0', sites: 25 }] },
      ],
      as_of: day2,
      sites: 25,
      platforms: [
        { platform: 'wordpress', version: '6.5', sites: 9, share: 36 },
        { platform: 'wordpress', version: '6.4', sites: 8, share: 32 },
      ],
      php: [
        { version: '8.2', sites: 9, share: 36 },
        { version: '7.4', sites: 8, share: 32 },
      ],
    });
    // The default range is the last 30 days to today.
    const recent = await report(pub.product.id);
    expect(recent.days).toHaveLength(30);
    expect(recent.to).toBe(day2);
    expect(recent.days.slice(-2).map((d) => d.sites)).toEqual([30, 25]);
    expect(recent.days[0]).toEqual({ day: recent.from, sites: 0, versions: [] });
    const week = await report(pub.product.id, '?days=7');
    expect(week.days.map((d) => d.day).slice(-2)).toEqual([day1, day2]);
    expect(week.days).toHaveLength(7);
  });

  it('a validation with a version counts its site, once with its update checks', async () => {
    const day = await today();
    const before = await countsOf(f.product.id);
    expect(before).toEqual([]);
    const validate = (extra: Record<string, unknown>) =>
      call(t, 'POST', '/licenses/validate', { license_key: f.key, ...f.site, ...extra });
    // Without a version, validate answers as always and counts nothing.
    expect((await validate({})).statusCode).toBe(200);
    await t.app.services.installedBase.flush();
    expect(await countsOf(f.product.id)).toEqual([]);
    const v = await validate({
      version: '1.0.0',
      platform: 'wordpress',
      platform_version: '6.6',
      php_version: '8.3.1',
    });
    expect(v.statusCode, v.body).toBe(200);
    expect(v.json()).toMatchObject({ valid: true });
    // The same site's update check the same day adds nothing.
    const c = await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.0.0', ...f.creds });
    expect(c.statusCode, c.body).toBe(200);
    const got = await report(f.product.id, `?from=${day}&to=${day}`);
    expect(got.days).toEqual([{ day, sites: 1, versions: [{ version: '1.0.0', sites: 1 }] }]);
    expect(got.platforms).toEqual([{ platform: 'wordpress', version: '6.6', sites: 1, share: 100 }]);
    expect(got.php).toEqual([{ version: '8.3', sites: 1, share: 100 }]);
  });

  it('stores no domain, installation id, license key or address: only keyed hashes and counts', async () => {
    const { sites: siteRows, counts } = await stored();
    expect(siteRows.length).toBeGreaterThan(0);
    for (const r of siteRows) expect(Object.keys(r).sort()).toEqual(['day', 'product_id', 'site']);
    for (const r of siteRows) expect(r.site).toMatch(/^[0-9a-f]{32}$/);
    for (const r of counts)
      expect(Object.keys(r).sort()).toEqual(['day', 'kind', 'name', 'product_id', 'sites', 'version']);
    const dump = JSON.stringify({ siteRows, counts });
    for (const s of [...sites, f.site]) {
      expect(dump).not.toContain(s.domain);
      expect(dump).not.toContain(s.installation_id);
    }
    expect(dump).not.toContain(f.key);
    expect(dump).not.toContain('127.0.0.1');
    // The hashes of one site differ from day to day: no row links its days.
    expect(new Set(siteRows.map((r) => r.site)).size).toBe(siteRows.length);
  });

  it('refuses bad platform fields with their own 400 and counts nothing', async () => {
    const before = await stored();
    const cases: [Record<string, unknown>, string][] = [
      [{ platform: '<script>alert(1)</script>' }, 'invalid_platform'],
      [{ platform: 'WordPress' }, 'invalid_platform'],
      [{ platform: 'x'.repeat(33) }, 'invalid_platform'],
      [{ platform: 5 }, 'invalid_platform'],
      [{ platform: '' }, 'invalid_platform'],
      [{ platform: 'wordpress', platform_version: '6.5"><img src=x>' }, 'invalid_platform_version'],
      [{ platform: 'wordpress', platform_version: 'latest' }, 'invalid_platform_version'],
      [{ platform: 'wordpress', platform_version: ['6.5'] }, 'invalid_platform_version'],
      [{ php_version: `8.${'1'.repeat(64)}` }, 'invalid_php_version'],
      [{ php_version: '8.2\u0000' }, 'invalid_php_version'],
      [{ php_version: null }, 'invalid_php_version'],
    ];
    for (const [extra, code] of cases) {
      const body = { ...siteBody(2, '1.0.0'), ...extra };
      const res = await call(t, 'POST', '/software/check', body);
      // A NUL is refused at the input edge, before the schema.
      if (code === 'invalid_php_version' && String(extra.php_version).includes('\u0000')) {
        expect(res.statusCode, res.body).toBe(400);
        continue;
      }
      expectError(res, 400, code);
      const v = await call(t, 'POST', '/licenses/validate', {
        license_key: f.key,
        ...f.site,
        version: '1.0.0',
        ...extra,
      });
      expectError(v, 400, code);
    }
    const q = new URLSearchParams({ slug: pub.slug, version: '1.0.0', platform: '<b>x</b>' });
    expectError(await call(t, 'GET', `/software/check?${q}`), 400, 'invalid_platform');
    // validate's version follows the release version's rule; the check's keeps taking any text.
    for (const version of ['<svg onload=x>', '', '1'.repeat(65), 7]) {
      const v = await call(t, 'POST', '/licenses/validate', { license_key: f.key, ...f.site, version });
      expectError(v, 400, 'invalid_version');
    }
    // A site not seen today whose version is not version-like is answered, and not counted.
    const odd = await call(t, 'POST', '/software/check', {
      ...siteBody(29, '1.0 <beta>'),
      platform: 'wordpress',
    });
    expect(odd.statusCode, odd.body).toBe(200);
    // Malformed JSON and unknown fields keep their codes.
    const bad = await t.app.inject({
      method: 'POST',
      url: '/v1/licenses/validate',
      headers: { 'content-type': 'application/json' },
      payload: '{"license_key":',
    });
    expectError(bad, 400, 'rest_invalid_json');
    expectError(
      await call(t, 'POST', '/licenses/validate', { license_key: f.key, ...f.site, platforms: 'wordpress' }),
      400,
      'invalid_parameters',
    );
    await t.app.services.installedBase.flush();
    expect(await stored()).toEqual(before);
  });

  it('the report answers administrators only, a missing product 404 and a bad range 400', async () => {
    const anon = await t.app.inject({ method: 'GET', url: `/v1/software/products/${pub.product.id}/field` });
    expectError(anon, 401, 'rest_not_logged_in');
    expectError(await admin(t, 'GET', '/software/products/999999/field'), 404, 'product_not_found');
    for (const q of [
      '?from=2026-13-01',
      '?to=2026-02-30',
      '?from=yesterday',
      '?from=2026-11-20&to=2026-11-19',
      '?from=2020-01-01&to=2026-01-01',
      '?from=%3Cscript%3E',
      '?days=0',
      '?days=401',
      '?days=x',
    ])
      expectError(
        await admin(t, 'GET', `/software/products/${pub.product.id}/field${q}`),
        400,
        'invalid_field_range',
      );
    expectError(
      await admin(t, 'GET', `/software/products/${pub.product.id}/field?weeks=3`),
      400,
      'invalid_parameters',
    );
    const none = await report(f.product.id, '?from=2026-01-01&to=2026-01-03');
    expect(none).toMatchObject({ as_of: null, sites: 0, platforms: [], php: [] });
    expect(none.days.map((d) => d.sites)).toEqual([0, 0, 0]);
  });

  it('forgets site hashes after a day and counts after 400 days, at the first flush of a day', async () => {
    const db = t.app.services.database.db;
    const now = await today();
    const minus = (days: number) =>
      new Date(Date.parse(`${now}T00:00:00Z`) - days * DAY_S * 1000).toISOString().slice(0, 10);
    await db
      .insertInto('field_sites')
      .values([
        { day: minus(2), product_id: pub.product.id, site: 'a'.repeat(32) },
        { day: minus(1), product_id: pub.product.id, site: 'b'.repeat(32) },
      ])
      .execute();
    await db
      .insertInto('field_counts')
      .values([
        { product_id: pub.product.id, day: minus(400), kind: 'version', name: '', version: '0.1', sites: 4 },
        { product_id: pub.product.id, day: minus(399), kind: 'version', name: '', version: '0.2', sites: 5 },
        { product_id: pub.product.id, day: minus(398), kind: 'version', name: '', version: '0.3', sites: 6 },
      ])
      .execute();
    await advanceClock(t, DAY_S);
    expect((await check(siteBody(0, '1.0.0'))).status).toBe(200);
    await t.app.services.installedBase.flush();
    const { sites: siteRows, counts } = await stored();
    // A day later: only the site hashes of yesterday and today are kept, and the counts of the
    // last 400 days (the oldest now 401, 400 and 399 days old).
    expect(siteRows.map((r) => r.day).sort()[0]).toBe(minus(0));
    expect(counts.filter((r) => ['0.1', '0.2', '0.3'].includes(r.version)).map((r) => r.version)).toEqual([
      '0.2',
      '0.3',
    ]);
  });
});

describe('the JavaScript SDK', () => {
  it('sends its platform option with checks and validations, leaving out what the store would refuse', async () => {
    const p = await publicFixture(t, '3.0.0');
    const lic = await protectedFixture(t);
    const client = new Tollgate({
      url: base,
      platform: { platform: 'node', platform_version: '22.14.0', php_version: 'not a version' },
    });
    const site = identity('app.example.io');
    const answer = await client.check({ slug: p.slug, version: '3.0.0', ...site });
    expect(answer.success).toBe(true);
    const valid = await client.validate(
      { license_key: lic.key, ...lic.site },
      { receipt: false, version: '1.0.0' },
    );
    expect(valid.valid).toBe(true);
    // A client without the option sends nothing more, as before.
    expect(
      (
        await new Tollgate({ url: base }).check({
          slug: p.slug,
          version: '2.9.0',
          ...identity('b.example.io'),
        })
      ).success,
    ).toBe(true);
    const day = await today();
    const got = await report(p.product.id, `?from=${day}&to=${day}`);
    expect(got.days[0]).toEqual({
      day,
      sites: 2,
      versions: [
        { version: '3.0.0', sites: 1 },
        { version: '2.9.0', sites: 1 },
      ],
    });
    expect(got.platforms).toEqual([{ platform: 'node', version: '22.14', sites: 1, share: 50 }]);
    expect(got.php).toEqual([]);
    const licensed = await report(lic.product.id, `?from=${day}&to=${day}`);
    expect(licensed.days[0]!.versions).toEqual([{ version: '1.0.0', sites: 1 }]);
    expect(licensed.platforms).toEqual([{ platform: 'node', version: '22.14', sites: 1, share: 100 }]);
  });
});

describe('two server processes on one database', () => {
  it('count a site seen by both once; a check writes nothing before the flush', async () => {
    const database = openDatabase(t.db.config);
    const other = await buildApp({ ...t.config, logLevel: 'silent' }, database);
    const p = await publicFixture(t, '2.0.0');
    try {
      const body = (i: number) => ({
        slug: p.slug,
        version: '2.0.0',
        site_url: `https://shop-${i}.example.org/`,
        installation_id: sites[i]!.installation_id,
        platform: 'wordpress',
        php_version: i < 4 ? '8.1.0' : '8.3.0',
      });
      const inject = (app: typeof t.app, i: number) =>
        app.inject({
          method: 'POST',
          url: '/v1/software/check',
          payload: body(i),
          remoteAddress: `10.1.0.${i + 1}`,
        });
      // Sites 0-5 reach both processes, 6-7 only the other one (which does not listen: no timer).
      for (let i = 0; i < 8; i++) expect((await inject(other, i)).statusCode).toBe(200);
      expect(await countsOf(p.product.id)).toEqual([]);
      for (let i = 0; i < 6; i++) expect((await inject(t.app, i)).statusCode).toBe(200);
      // On PostgreSQL both flush at once, one waiting on the other's rows; SQLite is served by one
      // process, so its two apps here (two connections of one thread) flush in turn.
      const flushes = [
        () => t.app.services.installedBase.flush(),
        () => other.services.installedBase.flush(),
      ];
      if (t.app.services.database.dialect === 'postgres') await Promise.all(flushes.map((flush) => flush()));
      else for (const flush of flushes) await flush();
      const day = await today();
      const got = await report(p.product.id, `?from=${day}&to=${day}`);
      expect(got.days).toEqual([{ day, sites: 8, versions: [{ version: '2.0.0', sites: 8 }] }]);
      expect(got.platforms).toEqual([{ platform: 'wordpress', version: '', sites: 8, share: 100 }]);
      expect(got.php).toEqual([
        { version: '8.3', sites: 4, share: 50 },
        { version: '8.1', sites: 4, share: 50 },
      ]);
      // A later check of a known site on the other process, flushed by its close, adds nothing;
      // a new one adds one.
      expect((await inject(other, 1)).statusCode).toBe(200);
      expect((await inject(other, 8)).statusCode).toBe(200);
      await other.close();
      expect((await report(p.product.id, `?from=${day}&to=${day}`)).days[0]!.sites).toBe(9);
    } finally {
      await other.close();
      await database.close();
    }
  });
});
