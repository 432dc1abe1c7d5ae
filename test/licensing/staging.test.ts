import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normaliseDomain } from '../../src/modules/identity/domain.js';
import { compileStagingPatterns, StagingPatterns } from '../../src/modules/licensing/environment.js';
import { DEFAULT_SETTINGS } from '../../src/modules/settings/settings.schemas.js';
import { call, siteCreds } from '../distribution/helpers.js';
import {
  ADMIN,
  admin,
  adminOk,
  createTestApp,
  expectError,
  post,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import { dialectUnderTest } from '../helpers/db.js';
import {
  adminId,
  createLicense,
  identity,
  licenseFixture,
  publish,
  softwareProduct,
} from '../helpers/factories.js';

// Staging and development sites (docs/licensing.md, '2.3 Staging and development sites').

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TRUST_PROXY: '1' } });
});
afterAll(async () => t.close());

const activate = (payload: unknown) => post(t, '/licenses/activate', payload);
const validate = (payload: unknown) => post(t, '/licenses/validate', payload);
const getSettings = async () => (await admin(t, 'GET', '/settings')).json();

describe('staging_patterns matching', () => {
  const defaults = compileStagingPatterns(DEFAULT_SETTINGS.staging_patterns);
  // Each domain as a client may send it, normalised as activation normalises it.
  it.each([
    ['localhost', true],
    ['http://localhost:8080/wp-admin', true],
    ['127.0.0.1', true],
    ['127.0.0.1:8888', true],
    ['127.0.0.2', false],
    ['shop.local', true],
    ['a.b.shop.local', true],
    ['local', false],
    ['mylocal', false],
    ['shop.test', true],
    ['SHOP.TEST', true],
    ['https://Shop.Test:443/', true],
    ['app.localhost', true],
    ['staging.example.com', true],
    ['staging.shop.example.co.uk', true],
    ['STAGING.Example.com', true],
    ['dev.example.com', true],
    ['dev.to', false],
    ['staging', false],
    ['www.staging.example.com', false],
    ['stagingexample.com', false],
    ['example.com', false],
    ['shop.example.com', false],
    ['mysite.wpengine.com', true],
    ['wpengine.com', false],
    ['wpengine.com.evil.example', false],
    ['mysite.wpenginepowered.com', true],
    ['staging-mysite.kinsta.cloud', true],
    ['mysite.flywheelstaging.com', true],
    ['dev-mysite.pantheonsite.io', true],
    ['wordpress-123.cloudwaysapps.com', true],
    ['abc.myftpupload.com', true],
    ['https://bücher.test/', true],
    ['staging.bücher.de', true],
    ['bücher.de', false],
    ['[::1]:8080', false],
  ])('%s is staging: %s', (domain, expected) => {
    expect(defaults(normaliseDomain(domain))).toBe(expected);
  });

  it('matches international names in their punycode form', () => {
    const idn = compileStagingPatterns(['*.xn--bcher-kva.de', 'xn--caf-dma.example']);
    expect(idn(normaliseDomain('shop.bücher.de'))).toBe(true);
    expect(idn(normaliseDomain('café.example'))).toBe(true);
    expect(idn(normaliseDomain('bücher.de'))).toBe(false);
  });

  it('an empty list matches nothing; a list is compiled again only when its content changes', () => {
    expect(compileStagingPatterns([])('localhost')).toBe(false);
    const cache = new StagingPatterns();
    const first = cache.matcherFor(['*.test']);
    expect(cache.matcherFor(['*.test'])).toBe(first);
    const other = cache.matcherFor(['*.local']);
    expect(other).not.toBe(first);
    expect(other('a.local')).toBe(true);
    expect(other('a.test')).toBe(false);
  });

  it('a staging limit of 0 makes every site a production one', () => {
    const cache = new StagingPatterns();
    expect(cache.environmentOf('a.test', { staging_patterns: ['*.test'], staging_activation_limit: 0 })).toBe(
      'production',
    );
    expect(cache.environmentOf('a.test', { staging_patterns: ['*.test'], staging_activation_limit: 1 })).toBe(
      'staging',
    );
  });
});

describe('the staging settings', () => {
  it('store patterns lower-case and without repeats', async () => {
    const res = await admin(t, 'PATCH', '/settings', {
      staging_patterns: ['*.Example-Staging.COM', 'QA.*', '*.example-staging.com', 'xn--bcher-kva.de'],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().staging_patterns).toEqual(['*.example-staging.com', 'qa.*', 'xn--bcher-kva.de']);
    await setSettings(t, { staging_patterns: DEFAULT_SETTINGS.staging_patterns });
  });

  it.each([
    [{ staging_patterns: 'localhost' }, 'rest_invalid_param'],
    [{ staging_patterns: ['*'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['*.*'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['**.com'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['*.'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['.com'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['a..b'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['foo.*.com'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['*.foo.*'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['*example.com'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['localhost:8080'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['https://staging.example.com'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['staging.example.com/path'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['bücher.de'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['-a.com'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['<script>alert(1)</script>'] }, 'rest_invalid_param'],
    [{ staging_patterns: ["x'; DROP TABLE activations; --"] }, 'rest_invalid_param'],
    [{ staging_patterns: ['a.com\nb.com'] }, 'rest_invalid_param'],
    [{ staging_patterns: ['ok.com\u0000'] }, 'rest_invalid_param'],
    [{ staging_patterns: [''] }, 'rest_invalid_param'],
    [{ staging_patterns: [`${'a'.repeat(64)}.com`] }, 'rest_invalid_param'],
    [{ staging_patterns: [Array.from({ length: 130 }, () => 'ab').join('.')] }, 'rest_invalid_param'],
    [{ staging_patterns: Array.from({ length: 101 }, (_, i) => `s${i}.example`) }, 'rest_invalid_param'],
    [{ staging_patterns: [42] }, 'rest_invalid_param'],
    [{ staging_patterns: null }, 'rest_invalid_param'],
    [{ staging_activation_limit: -1 }, 'rest_invalid_param'],
    [{ staging_activation_limit: 1001 }, 'rest_invalid_param'],
    [{ staging_activation_limit: 1.5 }, 'rest_invalid_param'],
    [{ staging_activation_limit: '3' }, 'rest_invalid_param'],
    [{ reinstall_takeover: 'yes' }, 'rest_invalid_param'],
    [{ reinstall_takeover: 1 }, 'rest_invalid_param'],
    [{ staging_pattern: ['a.test'] }, 'invalid_parameters'],
  ])('refuses %j with %s and changes nothing', async (payload, code) => {
    const before = await getSettings();
    expectError(await admin(t, 'PATCH', '/settings', payload), 400, code);
    expect(await getSettings()).toEqual(before);
  });

  it('refuses a body that is not JSON and changes nothing', async () => {
    const before = await getSettings();
    const res = await t.app.inject({
      method: 'PATCH',
      url: '/v1/settings',
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"staging_patterns": [',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('rest_invalid_json');
    expect(await getSettings()).toEqual(before);
  });

  it('accepts 100 patterns', async () => {
    const patterns = Array.from({ length: 100 }, (_, i) => `*.s${i}.example`);
    expect((await admin(t, 'PATCH', '/settings', { staging_patterns: patterns })).statusCode).toBe(200);
    await setSettings(t, { staging_patterns: DEFAULT_SETTINGS.staging_patterns });
  });
});

describe('staging activations', () => {
  it('take no seat: a limit of 1 holds one production site and the staging copies beside it', async () => {
    const f = await licenseFixture(t, { activation_limit: 1 });
    const staging = await activate({ license_key: f.key, ...identity('https://staging.shop.example.com/') });
    expect(staging.statusCode).toBe(200);
    expect(staging.json()).toEqual({
      success: true,
      activation_id: expect.any(Number),
      activations_remaining: 1,
      product_id: f.product.id,
      variation_id: 0,
      environment: 'staging',
      staging_activations_remaining: 2,
    });
    // The production answer is the one it has always been: no environment field.
    const production = await activate({ license_key: f.key, ...identity('shop.example.com') });
    expect(production.statusCode).toBe(200);
    expect(production.json()).toEqual({
      success: true,
      activation_id: expect.any(Number),
      activations_remaining: 0,
      product_id: f.product.id,
      variation_id: 0,
    });
    // The production limit counts only production sites.
    expectError(
      await activate({ license_key: f.key, ...identity('other.example.com') }),
      403,
      'activation_limit_reached',
    );
    const local = await activate({ license_key: f.key, ...identity('localhost:8080') });
    expect(local.json()).toMatchObject({
      environment: 'staging',
      activations_remaining: 0,
      staging_activations_remaining: 1,
    });
    const row = await t.app.services.database.db
      .selectFrom('activations')
      .select(['environment'])
      .where('id', '=', production.json().activation_id)
      .executeTakeFirstOrThrow();
    expect(row.environment).toBe('production');
  });

  it('beyond staging_activation_limit: 403 staging_activation_limit_reached, nothing stored', async () => {
    const f = await licenseFixture(t, { activation_limit: 5 });
    for (const d of ['a.test', 'b.test', 'c.test']) {
      expect((await activate({ license_key: f.key, ...identity(d) })).statusCode).toBe(200);
    }
    const refused = await activate({ license_key: f.key, ...identity('d.test') });
    expectError(refused, 403, 'staging_activation_limit_reached');
    const rows = await t.app.services.database.db
      .selectFrom('activations')
      .select('id')
      .where('license_id', '=', f.license.id)
      .execute();
    expect(rows).toHaveLength(3);
    // A production site still activates, and a repeat of a staging identity is answered as a repeat.
    expect((await activate({ license_key: f.key, ...identity('prod.example.com') })).statusCode).toBe(200);
  });

  it('a repeat of a staging identity is "Already activated" and still says staging', async () => {
    const f = await licenseFixture(t, { activation_limit: 1 });
    const site = identity('dev.example.org');
    const first = (await activate({ license_key: f.key, ...site })).json();
    const again = await activate({ license_key: f.key, ...site });
    expect(again.json()).toEqual({ ...first, message: 'Already activated' });
  });

  it('staging_activation_limit 0: staging domains are production sites again, counted against the limit', async () => {
    await setSettings(t, { staging_activation_limit: 0 });
    try {
      const f = await licenseFixture(t, { activation_limit: 1 });
      const first = await activate({ license_key: f.key, ...identity('a.test') });
      expect(first.json()).toEqual({
        success: true,
        activation_id: expect.any(Number),
        activations_remaining: 0,
        product_id: f.product.id,
        variation_id: 0,
      });
      expectError(
        await activate({ license_key: f.key, ...identity('b.test') }),
        403,
        'activation_limit_reached',
      );
    } finally {
      await setSettings(t, { staging_activation_limit: 3 });
    }
  });

  it('an empty staging_patterns list makes every site a production one', async () => {
    await setSettings(t, { staging_patterns: [] });
    try {
      const f = await licenseFixture(t, { activation_limit: 1 });
      expect(
        (await activate({ license_key: f.key, ...identity('localhost') })).json().environment,
      ).toBeUndefined();
      expectError(
        await activate({ license_key: f.key, ...identity('b.test') }),
        403,
        'activation_limit_reached',
      );
    } finally {
      await setSettings(t, { staging_patterns: DEFAULT_SETTINGS.staging_patterns });
    }
  });

  it('the views show environment "staging" on staging rows only; the counts are production ones', async () => {
    const f = await licenseFixture(t, { activation_limit: 2 });
    const prod = (await activate({ license_key: f.key, ...identity('www.example.net') })).json();
    const stag = (await activate({ license_key: f.key, ...identity('staging.example.net') })).json();
    const view = await adminOk<{
      activation_count: number;
      activations_remaining: number;
      activations: Record<string, unknown>[];
    }>(t, 'GET', `/licenses/${f.license.id}`);
    expect(view.activation_count).toBe(1);
    expect(view.activations_remaining).toBe(1);
    const byId = new Map(view.activations.map((a) => [a.id, a]));
    expect(byId.get(prod.activation_id)).not.toHaveProperty('environment');
    expect(byId.get(stag.activation_id)).toMatchObject({ environment: 'staging' });
    const list = await adminOk<Record<string, unknown>[]>(t, 'GET', `/licenses/${f.license.id}/activations`);
    expect(list.find((a) => a.id === stag.activation_id)).toMatchObject({ environment: 'staging' });
    expect(list.find((a) => a.id === prod.activation_id)).not.toHaveProperty('environment');
    // Validate counts production sites too.
    const site = identity('www2.example.net');
    await activate({ license_key: f.key, ...site });
    const v = await validate({ license_key: f.key, ...site });
    expect(v.json()).toMatchObject({ valid: true, activation_count: 2, activations_remaining: 0 });
  });

  it('a staging site validates and gets updates as a production one does', async () => {
    const product = await softwareProduct(t);
    await publish(t, product.id, '1.0.0');
    const license = await createLicense(t, {
      product_id: product.id,
      user_id: await adminId(t),
      activation_limit: 1,
    });
    const site = identity('staging.customer-shop.com');
    const act = await call(t, 'POST', '/licenses/activate', { license_key: license.license_key, ...site });
    expect(act.json()).toMatchObject({ environment: 'staging' });
    const v = await call(t, 'POST', '/licenses/validate', { license_key: license.license_key, ...site });
    expect(v.statusCode).toBe(200);
    expect(v.json()).toMatchObject({ valid: true, effective_status: 'valid', domain_active: true });
    await publish(t, product.id, '1.1.0');
    const creds = siteCreds(license.license_key, site);
    const check = await call(t, 'POST', '/software/check', {
      slug: product.slug,
      version: '1.0.0',
      ...creds,
    });
    expect(check.statusCode).toBe(200);
    expect(check.json()).toMatchObject({ update_available: true, eligible: true, latest_version: '1.1.0' });
    const url = check.json().download_url as string;
    const u = new URL(url);
    expect((await t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` })).statusCode).toBe(200);
    const pkg = await call(t, 'POST', '/software/package', {
      slug: product.slug,
      purpose: 'install',
      ...creds,
    });
    expect(pkg.statusCode).toBe(200);
  });

  it('the customer sees a Staging badge on My licenses, on the staging site only', async () => {
    const f = await licenseFixture(t, { activation_limit: 2 });
    await activate({ license_key: f.key, ...identity('staging.badge-shop.com') });
    await activate({ license_key: f.key, ...identity('badge-shop.com') });
    const signIn = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: ADMIN,
    });
    const cookie = signIn.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const page = await t.app.inject({ method: 'GET', url: '/account/licenses', headers: { cookie } });
    expect(page.statusCode).toBe(200);
    const rowOf = (domain: string) => page.body.split('<tr>').find((r) => r.includes(`>${domain}`)) ?? '';
    expect(rowOf('staging.badge-shop.com')).toContain('>Staging</span>');
    expect(rowOf('badge-shop.com')).not.toContain('Staging');
  });
});

describe.runIf(dialectUnderTest === 'sqlite')('the production count', () => {
  it('is one query answered from the partial index activations_active_production', () => {
    const sqlite = t.db.database.sqlite!;
    const plan = sqlite
      .prepare(
        `explain query plan select count(*) from activations where license_id = ? and status = 'active' and environment = 'production'`,
      )
      .all(1) as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).toMatch(/COVERING INDEX activations_active_production/);
  });
});
