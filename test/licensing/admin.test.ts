import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createTestApp, expectError, post, type TestApp } from '../helpers/app.js';
import {
  adminId,
  createCustomer,
  createLicense,
  createProduct,
  createSubscription,
  identity,
  licenseFixture,
} from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const revokedEvents = async () =>
  (await db().selectFrom('webhook_events').selectAll().where('event', '=', 'license.revoked').execute()).map(
    (e) => JSON.parse(e.payload) as { data: { license_id: number } },
  );

const LICENSE_FIELDS = [
  'id',
  'license_key',
  'product_id',
  'variation_id',
  'product_name',
  'variation_name',
  'order_id',
  'order_item_id',
  'user_id',
  'user_email',
  'user_name',
  'subscription_id',
  'status',
  'activation_limit',
  'activation_count',
  'activations_remaining',
  'expires_at',
  'usage_expires_at_utc',
  'is_expired',
  'entitlement_policy',
  'entitlements',
  'test',
  'trial',
  'created_at',
  'updated_at',
].sort();

describe('POST /licenses', () => {
  it('issues a license with a generated, grouped, high-entropy key and the license shape', async () => {
    const customer = await createCustomer(t, 'buyer@example.com');
    const p = await createProduct(
      t,
      { name: 'Gallery Pro', variations: [{ name: 'Agency', activation_limit: 25 }] },
      { via: 'database' },
    );
    const res = await admin(t, 'POST', '/licenses', {
      product_id: p.id,
      variation_id: p.variations[0]!.id,
      user_id: customer.id,
      order_id: 77,
    });
    expect(res.statusCode).toBe(201);
    const lic = res.json();
    expect(Object.keys(lic).sort()).toEqual(LICENSE_FIELDS);
    expect(lic.license_key).toMatch(/^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){4}$/);
    expect(lic).toMatchObject({
      product_id: p.id,
      variation_id: p.variations[0]!.id,
      product_name: 'Gallery Pro',
      variation_name: 'Agency',
      order_id: 77,
      order_item_id: 0,
      user_id: customer.id,
      user_email: 'buyer@example.com',
      status: 'active',
      activation_limit: 25,
      activation_count: 0,
      activations_remaining: 25,
      expires_at: null,
      usage_expires_at_utc: '',
      is_expired: false,
      entitlement_policy: '',
    });
    expect(lic.entitlements.policy_mode).toBe('legacy');
    expect(lic.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });

  it('keys are unique and random', async () => {
    const { id } = await createProduct(t, {}, { via: 'database' });
    const keys = new Set<string>();
    for (let i = 0; i < 20; i++)
      keys.add((await createLicense(t, { product_id: id, user_id: await adminId(t) })).license_key);
    expect(keys.size).toBe(20);
  });

  it('a given key is kept; a taken key is 409 license_key_exists', async () => {
    const { id } = await createProduct(t, {}, { via: 'database' });
    const owner = await adminId(t);
    const lic = await createLicense(t, { product_id: id, user_id: owner, license_key: 'LEGACY-KEY-0001' });
    expect(lic.license_key).toBe('LEGACY-KEY-0001');
    expectError(
      await admin(t, 'POST', '/licenses', { product_id: id, user_id: owner, license_key: 'LEGACY-KEY-0001' }),
      409,
      'license_key_exists',
    );
  });

  it('an explicit policy is snapshotted; usage days set the usage expiry', async () => {
    const { id } = await createProduct(t, {}, { via: 'database' });
    const lic = await createLicense(t, {
      product_id: id,
      user_id: await adminId(t),
      entitlement_policy: { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 180 } },
    });
    const snapshot = JSON.parse(lic.entitlement_policy as string);
    expect(snapshot).toMatchObject({
      usage: { mode: 'days', days: 365 },
      updates: { mode: 'days', days: 180 },
      support: { mode: 'unspecified' },
      historical_downloads: false,
    });
    expect(snapshot.issued_at).toMatch(/Z$/);
    const now = t.app.services.clock.now().getTime();
    const usage = Date.parse(lic.usage_expires_at_utc as string);
    expect(Math.abs(usage - (now + 365 * 86400_000))).toBeLessThan(5000);
    expect((lic.entitlements as { policy_mode: string }).policy_mode).toBe('explicit');
  });

  it('refuses unknown references with their 404 codes', async () => {
    const { id, variations } = await createProduct(t, { variations: [{ name: 'V' }] }, { via: 'database' });
    const other = await createProduct(t, { variations: [{ name: 'W' }] }, { via: 'database' });
    const owner = await adminId(t);
    expectError(
      await admin(t, 'POST', '/licenses', { product_id: 999999, user_id: owner }),
      404,
      'product_not_found',
    );
    expectError(
      await admin(t, 'POST', '/licenses', {
        product_id: id,
        variation_id: other.variations[0]!.id,
        user_id: owner,
      }),
      404,
      'variation_not_found',
    );
    expectError(
      await admin(t, 'POST', '/licenses', { product_id: id, user_id: 999999 }),
      404,
      'user_not_found',
    );
    expectError(
      await admin(t, 'POST', '/licenses', {
        product_id: id,
        variation_id: variations[0]!.id,
        user_id: owner,
        subscription_id: 999999,
      }),
      404,
      'subscription_not_found',
    );
  });

  it('bad bodies get specific 400 codes and create nothing', async () => {
    const { id } = await createProduct(t, {}, { via: 'database' });
    const owner = await adminId(t);
    const before = (await db().selectFrom('licenses').select('id').execute()).length;
    const cases: [unknown, string][] = [
      [{ user_id: owner }, 'rest_missing_param'],
      [{ product_id: 'one', user_id: owner }, 'rest_invalid_param'],
      [{ product_id: id, user_id: owner, activation_limit: -1 }, 'rest_invalid_param'],
      [{ product_id: id, user_id: owner, license_key: 'short' }, 'rest_invalid_param'],
      [{ product_id: id, user_id: owner, license_key: 'has spaces in it' }, 'rest_invalid_param'],
      [{ product_id: id, user_id: owner, usage_expires_at: 'tomorrow' }, 'rest_invalid_param'],
      [
        { product_id: id, user_id: owner, entitlement_policy: { updates: { mode: 'days' } } },
        'invalid_entitlement_policy',
      ],
      [
        {
          product_id: id,
          user_id: owner,
          entitlement_policy: { usage: { mode: 'lifetime' }, updates: { mode: 'days' } },
        },
        'invalid_entitlement_policy',
      ],
      [
        {
          product_id: id,
          user_id: owner,
          entitlement_policy: { usage: { mode: 'lifetime', days: 3 }, updates: { mode: 'license' } },
        },
        'invalid_entitlement_policy',
      ],
      [{ product_id: id, user_id: owner, status: 'revoked' }, 'invalid_parameters'],
    ];
    for (const [body, code] of cases) expectError(await admin(t, 'POST', '/licenses', body), 400, code);
    expect((await db().selectFrom('licenses').select('id').execute()).length).toBe(before);
  });
});

describe('PATCH /licenses/{id}', () => {
  it('changes usage expiry, limit and policy; null limit inherits again, null policy is legacy', async () => {
    const { license } = await licenseFixture(t, { activation_limit: 7 });
    const patched = await admin(t, 'PATCH', `/licenses/${license.id}`, {
      usage_expires_at: '2030-01-02T03:04:05+01:00',
      activation_limit: 2,
      entitlement_policy: {
        usage: { mode: 'lifetime' },
        updates: { mode: 'license' },
        historical_downloads: true,
      },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      usage_expires_at_utc: '2030-01-02T02:04:05Z',
      expires_at: '2030-01-02 02:04:05',
      activation_limit: 2,
    });
    expect(patched.json().entitlements).toMatchObject({
      policy_mode: 'explicit',
      historical_downloads: true,
    });
    const back = (
      await admin(t, 'PATCH', `/licenses/${license.id}`, {
        activation_limit: null,
        entitlement_policy: null,
        usage_expires_at: null,
      })
    ).json();
    expect(back).toMatchObject({
      activation_limit: 7,
      usage_expires_at_utc: '',
      expires_at: null,
      entitlement_policy: '',
    });
    expect(back.entitlements.policy_mode).toBe('legacy');
  });

  it('unknown license -> 404 license_not_found; bad body -> 400', async () => {
    expectError(
      await admin(t, 'PATCH', '/licenses/999999', { activation_limit: 1 }),
      404,
      'license_not_found',
    );
    const { license } = await licenseFixture(t);
    expectError(
      await admin(t, 'PATCH', `/licenses/${license.id}`, { license_key: 'NEW-KEY-0000' }),
      400,
      'invalid_parameters',
    );
    expectError(
      await admin(t, 'PATCH', `/licenses/${license.id}`, { activation_limit: 'many' }),
      400,
      'rest_invalid_param',
    );
    expectError(await admin(t, 'PATCH', '/licenses/abc', { activation_limit: 1 }), 400, 'rest_invalid_param');
  });
});

describe('GET /licenses', () => {
  it('pages and filters; total counts all matches', async () => {
    const c = await createCustomer(t, 'paged.person@example.net');
    const p = await createProduct(t, { name: 'Paged Widget' }, { via: 'database' });
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await createLicense(t, { product_id: p.id, user_id: c.id }));
    await admin(t, 'DELETE', `/licenses/${created[0]!.id}`);

    const byProduct = (await admin(t, 'GET', `/licenses?product_id=${p.id}`)).json();
    expect(byProduct).toMatchObject({ total: 3, page: 1, per_page: 50 });
    expect(byProduct.licenses.map((l: { id: number }) => l.id).sort()).toEqual(
      created.map((l) => l.id).sort(),
    );

    const page2 = (await admin(t, 'GET', `/licenses?product_id=${p.id}&per_page=2&page=2`)).json();
    expect(page2).toMatchObject({ total: 3, page: 2, per_page: 2 });
    expect(page2.licenses).toHaveLength(1);

    expect((await admin(t, 'GET', `/licenses?user_id=${c.id}&status=revoked`)).json().total).toBe(1);
    expect((await admin(t, 'GET', `/licenses?user_id=${c.id}&status=active`)).json().total).toBe(2);
    expect(
      (await admin(t, 'GET', `/licenses?user_id=${c.id}&status=active&search=paged.person`)).json().total,
    ).toBe(2);
  });

  it('searches the whole key or its last characters, the start of an email or a domain, an installation id', async () => {
    const c = await createCustomer(t, 'searchable.person@example.net');
    const other = await createCustomer(t, 'someone.else@example.net');
    const p = await createProduct(
      t,
      { name: 'Unique Searchable Widget', activation_limit: 5 },
      { via: 'database' },
    );
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(await createLicense(t, { product_id: p.id, user_id: c.id }));
    const theirs = await createLicense(t, { product_id: p.id, user_id: other.id });
    const custom = await createLicense(t, {
      product_id: p.id,
      user_id: other.id,
      license_key: 'custom-key_x.0042',
    });
    // Its last characters differ only where the other key has LIKE's one-character wildcard.
    await createLicense(t, { product_id: p.id, user_id: other.id, license_key: 'custom-keyyx.0042' });
    const site = identity('shop.searchable-site.example');
    expect(
      (await post(t, '/licenses/activate', { license_key: mine[1]!.license_key, ...site })).statusCode,
    ).toBe(200);
    const ids = async (term: string) =>
      (await admin(t, 'GET', `/licenses?search=${encodeURIComponent(term)}`))
        .json()
        .licenses.map((l: { id: number }) => l.id)
        .sort((a: number, b: number) => a - b);

    // The customer's email, from its start, in any case; not from its middle.
    expect(await ids('SEARCHABLE.PERSON')).toEqual(mine.map((l) => l.id));
    expect(await ids('searchable.person@example.net')).toEqual(mine.map((l) => l.id));
    expect(await ids('person@example.net')).toEqual([]);
    // The whole key, in any case, and its last characters (at least four, dash included).
    const key = mine[2]!.license_key;
    expect(await ids(key)).toEqual([mine[2]!.id]);
    expect(await ids(key.toLowerCase())).toEqual([mine[2]!.id]);
    expect(await ids(key.slice(-4).toLowerCase())).toEqual([mine[2]!.id]);
    expect(await ids(key.slice(-7))).toEqual([mine[2]!.id]);
    expect(await ids(theirs.license_key.slice(-9))).toEqual([theirs.id]);
    // A piece from the middle of the key is not its end.
    expect(await ids(key.slice(6, 17))).toEqual([]);
    // A site: the start of its domain, as a URL or a host, or its installation id.
    expect(await ids('https://shop.searchable-site.example/wp-admin/')).toEqual([mine[1]!.id]);
    expect(await ids('shop.searchable')).toEqual([mine[1]!.id]);
    expect(await ids(site.installation_id)).toEqual([mine[1]!.id]);
    expect(await ids(site.installation_id.toUpperCase())).toEqual([mine[1]!.id]);
    // Wildcards of LIKE and GLOB are literal characters.
    expect(await ids('custom-key_x.0042')).toEqual([custom.id]);
    expect(await ids('_x.0042')).toEqual([custom.id]);
    expect(await ids('%x.0042')).toEqual([]);
    expect(await ids('%')).toEqual([]);
    expect(await ids('_')).toEqual([]);
    expect(await ids('*')).toEqual([]);
    expect(await ids('s*')).toEqual([]);
    expect(await ids("' or 1=1 --")).toEqual([]);
    // Combined with the other filters.
    expect(
      (await admin(t, 'GET', `/licenses?search=searchable.person&product_id=${p.id}`)).json().total,
    ).toBe(3);
    expect(
      (await admin(t, 'GET', `/licenses?search=searchable.person&user_id=${other.id}`)).json().total,
    ).toBe(0);
  });

  it('bad query parameters get 400 codes', async () => {
    expectError(await admin(t, 'GET', '/licenses?status=lapsed'), 400, 'rest_invalid_param');
    expectError(await admin(t, 'GET', '/licenses?page=0'), 400, 'rest_invalid_param');
    expectError(await admin(t, 'GET', '/licenses?per_page=abc'), 400, 'rest_invalid_param');
    expectError(await admin(t, 'GET', '/licenses?sort_by=id'), 400, 'invalid_parameters');
  });
});

describe('GET /licenses/{id} and /activations', () => {
  it('returns the license with every activation (active and deactivated), each in the activation shape', async () => {
    const { key, license } = await licenseFixture(t, { activation_limit: 3 });
    const a = identity('one.example');
    await post(t, '/licenses/activate', { license_key: key, ...a, machine_id: 'box' });
    await post(t, '/licenses/activate', { license_key: key, ...identity('two.example') });
    await post(t, '/licenses/deactivate', { license_key: key, ...a });
    const res = await admin(t, 'GET', `/licenses/${license.id}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ activation_count: 1, activations_remaining: 2 });
    expect(body.activations).toHaveLength(2);
    expect(Object.keys(body.activations[0]).sort()).toEqual(
      [
        'id',
        'license_id',
        'identity_key',
        'domain',
        'domain_normalized',
        'installation_id',
        'ip_address',
        'machine_id',
        'user_agent',
        'status',
        'activated_at',
        'deactivated_at',
        'activation_revision',
        'updated_at',
        'last_seen_at',
      ].sort(),
    );
    expect(body.activations[0]).toMatchObject({
      domain: 'one.example',
      status: 'deactivated',
      machine_id: 'box',
      activation_revision: 2,
      installation_id: a.installation_id,
    });
    expect(body.activations[1]).toMatchObject({
      status: 'active',
      deactivated_at: null,
      activation_revision: 1,
    });
    const list = await admin(t, 'GET', `/licenses/${license.id}/activations`);
    expect(list.json()).toEqual(body.activations);
  });

  it('unknown ids are 404 license_not_found', async () => {
    expectError(await admin(t, 'GET', '/licenses/999999'), 404, 'license_not_found');
    expectError(await admin(t, 'GET', '/licenses/999999/activations'), 404, 'license_not_found');
    expectError(await admin(t, 'DELETE', '/licenses/999999'), 404, 'license_not_found');
  });
});

describe('DELETE /licenses/{id} (revoke)', () => {
  it('revokes: status revoked, one license.revoked event with the id only, future activations refused', async () => {
    const { key, license } = await licenseFixture(t, { activation_limit: 5 });
    const site = identity();
    await post(t, '/licenses/activate', { license_key: key, ...site });
    const res = await admin(t, 'DELETE', `/licenses/${license.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect((await admin(t, 'GET', `/licenses/${license.id}`)).json().status).toBe('revoked');
    const events = (await revokedEvents()).filter((e) => e.data.license_id === license.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toEqual({ license_id: license.id });
    expect(JSON.stringify(events[0])).not.toContain(key);
    expectError(
      await post(t, '/licenses/activate', { license_key: key, ...identity('new.example') }),
      403,
      'revoked',
    );
    // Revoking again is a success that emits nothing new.
    expect((await admin(t, 'DELETE', `/licenses/${license.id}`)).statusCode).toBe(200);
    expect((await revokedEvents()).filter((e) => e.data.license_id === license.id)).toHaveLength(1);
  });

  it('revocation hooks run in the same transaction; a failing hook undoes status and event (500 revoke_failed)', async () => {
    const { license } = await licenseFixture(t);
    const calls: number[] = [];
    let fail = true;
    t.app.services.licenses.onRevoke(async (id, tx) => {
      const row = await tx
        .selectFrom('licenses')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('revoked');
      calls.push(id);
      if (fail) throw new Error('token store unavailable');
    });
    expectError(await admin(t, 'DELETE', `/licenses/${license.id}`), 500, 'revoke_failed');
    expect((await admin(t, 'GET', `/licenses/${license.id}`)).json().status).toBe('active');
    expect((await revokedEvents()).filter((e) => e.data.license_id === license.id)).toHaveLength(0);
    fail = false;
    expect((await admin(t, 'DELETE', `/licenses/${license.id}`)).statusCode).toBe(200);
    expect(calls).toEqual([license.id, license.id]);
    expect((await revokedEvents()).filter((e) => e.data.license_id === license.id)).toHaveLength(1);
  });
});

describe('authentication of the administration routes', () => {
  it('anonymous -> 401 rest_not_logged_in; a customer -> 403 rest_forbidden', async () => {
    const { license } = await licenseFixture(t);
    const customer = await createCustomer(t, 'nosy@example.com');
    const routes: ['GET' | 'POST' | 'PATCH' | 'DELETE', string, unknown?][] = [
      ['GET', '/licenses'],
      ['GET', `/licenses/${license.id}`],
      ['GET', `/licenses/${license.id}/activations`],
      ['DELETE', `/licenses/${license.id}`],
      ['POST', '/licenses', { product_id: license.product_id, user_id: customer.id }],
      ['PATCH', `/licenses/${license.id}`, { activation_limit: 9 }],
    ];
    for (const [method, url, payload] of routes) {
      const anon = await t.app.inject({
        method,
        url: `/v1${url}`,
        ...(payload ? { payload: payload as object } : {}),
      });
      expectError(anon, 401, 'rest_not_logged_in');
      const asCustomer = await t.app.inject({
        method,
        url: `/v1${url}`,
        headers: customer.headers,
        ...(payload ? { payload: payload as object } : {}),
      });
      expectError(asCustomer, 403, 'rest_forbidden');
    }
    expect((await admin(t, 'GET', `/licenses/${license.id}`)).json()).toMatchObject({
      status: 'active',
      activation_limit: 1,
    });
  });

  it('subscription-linked licenses show the subscription in the view', async () => {
    const owner = await adminId(t);
    const p = await createProduct(t, {}, { via: 'database' });
    const sub = await createSubscription(db(), owner, p.id, 'on-hold');
    const lic = await createLicense(t, { product_id: p.id, user_id: owner, subscription_id: sub });
    expect(lic.subscription_id).toBe(sub);
    expect(lic.entitlements).toMatchObject({
      subscription_linked: true,
      subscription_status: 'on-hold',
      license_active: false,
    });
  });
});
