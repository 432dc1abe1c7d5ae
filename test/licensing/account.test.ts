import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, post, setSettings, type TestApp } from '../helpers/app.js';
import { createCustomer, createLicense, createProduct, identity } from '../helpers/factories.js';

let t: TestApp;
let alice: Awaited<ReturnType<typeof createCustomer>>;
let bob: Awaited<ReturnType<typeof createCustomer>>;
beforeAll(async () => {
  t = await createTestApp();
  alice = await createCustomer(t, 'alice@example.com');
  bob = await createCustomer(t, 'bob@example.com');
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;

async function ownedLicense(userId: number, limit = 3) {
  const p = await createProduct(
    t,
    { name: 'Forms Pro', activation_limit: limit },
    { via: 'database', software: { slug: 'forms-pro' } },
  );
  const lic = await createLicense(t, { product_id: p.id, user_id: userId });
  const site = identity('alice-shop.example');
  const act = (await post(t, '/licenses/activate', { license_key: lic.license_key, ...site })).json();
  return { lic, site, activationId: act.activation_id as number, productId: p.id };
}

const customerDeactivate = (
  who: { headers: Record<string, string> },
  id: number | string,
  payload: unknown,
) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/account/licenses/${id}/deactivate`,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
const status = async (id: number) =>
  (await db().selectFrom('activations').select('status').where('id', '=', id).executeTakeFirstOrThrow())
    .status;

describe('GET /account/licenses', () => {
  it("lists only the caller's licenses, enriched with product, seats, entitlements and activations", async () => {
    const mine = await ownedLicense(alice.id);
    await ownedLicense(bob.id);
    const res = await t.app.inject({ method: 'GET', url: '/v1/account/licenses', headers: alice.headers });
    expect(res.statusCode).toBe(200);
    const list = res.json();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: mine.lic.id,
      license_key: mine.lic.license_key,
      user_id: alice.id,
      product: { id: mine.productId, name: 'Forms Pro', slug: 'forms-pro' },
      activation_limit: 3,
      activation_count: 1,
      activations_remaining: 2,
      entitlements: { license_active: true, policy_mode: 'legacy' },
    });
    expect(list[0].activations).toHaveLength(1);
    expect(list[0].activations[0]).toMatchObject({
      id: mine.activationId,
      domain_normalized: 'alice-shop.example',
    });
  });

  it('anonymous -> 401 rest_not_logged_in', async () => {
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/account/licenses' }),
      401,
      'rest_not_logged_in',
    );
  });
});

describe('POST /account/licenses/{id}/deactivate', () => {
  it('by activation_id: success, slot freed', async () => {
    const { lic, activationId } = await ownedLicense(alice.id);
    const res = await customerDeactivate(alice, lic.id, { activation_id: activationId });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect(await status(activationId)).toBe('deactivated');
    expect((await customerDeactivate(alice, lic.id, { activation_id: activationId })).json()).toEqual({
      success: true,
    });
  });

  it('by domain and installation_id', async () => {
    const { lic, site, activationId } = await ownedLicense(alice.id);
    expect(
      (
        await customerDeactivate(alice, lic.id, {
          domain: 'https://alice-shop.example/',
          installation_id: site.installation_id,
        })
      ).statusCode,
    ).toBe(200);
    expect(await status(activationId)).toBe('deactivated');
  });

  it("another customer's license -> 404 not_found, nothing changes; an unknown id too", async () => {
    const { lic, activationId } = await ownedLicense(alice.id);
    expectError(await customerDeactivate(bob, lic.id, { activation_id: activationId }), 404, 'not_found');
    expectError(await customerDeactivate(bob, 999999, { activation_id: activationId }), 404, 'not_found');
    expect(await status(activationId)).toBe('active');
  });

  it("an activation of another of the caller's licenses -> 404 no_activation", async () => {
    const a = await ownedLicense(alice.id);
    const b = await ownedLicense(alice.id);
    expectError(
      await customerDeactivate(alice, a.lic.id, { activation_id: b.activationId }),
      404,
      'no_activation',
    );
    expect(await status(b.activationId)).toBe('active');
  });

  it('disabled by the merchant -> 403 deactivation_disabled', async () => {
    const { lic, activationId } = await ownedLicense(alice.id);
    await setSettings(t, { customer_deactivation_enabled: false });
    try {
      expectError(
        await customerDeactivate(alice, lic.id, { activation_id: activationId }),
        403,
        'deactivation_disabled',
      );
    } finally {
      await setSettings(t, { customer_deactivation_enabled: true });
    }
    expect(await status(activationId)).toBe('active');
  });

  it('authentication: anonymous 401; a cookie without the nonce is anonymous; a wrong nonce is 403', async () => {
    const { lic, activationId } = await ownedLicense(alice.id);
    expectError(
      await customerDeactivate({ headers: {} }, lic.id, { activation_id: activationId }),
      401,
      'rest_not_logged_in',
    );
    expectError(
      await customerDeactivate({ headers: { cookie: alice.headers.cookie! } }, lic.id, {
        activation_id: activationId,
      }),
      401,
      'rest_not_logged_in',
    );
    expectError(
      await customerDeactivate({ headers: { ...alice.headers, 'x-rest-nonce': 'wrong' } }, lic.id, {
        activation_id: activationId,
      }),
      403,
      'rest_cookie_invalid_nonce',
    );
    expect(await status(activationId)).toBe('active');
  });

  describe('bad input: specific 400 codes, nothing deactivated', () => {
    const cases: [string, (s: { installation_id: string }) => unknown, string][] = [
      ['empty body', () => ({}), 'missing_identifier'],
      ['no body', () => undefined, 'missing_identifier'],
      ['domain only', () => ({ domain: 'alice-shop.example' }), 'missing_identifier'],
      ['activation_id a string', () => ({ activation_id: '5' }), 'rest_invalid_param'],
      [
        'domain 10 kB',
        (s) => ({ domain: 'a'.repeat(10_240), installation_id: s.installation_id }),
        'invalid_identity',
      ],
      [
        'domain with control characters',
        (s) => ({ domain: 'alice\u001b.example', installation_id: s.installation_id }),
        'invalid_identity',
      ],
      [
        'installation_id malformed',
        () => ({ domain: 'alice-shop.example', installation_id: 'x' }),
        'invalid_identity',
      ],
      [
        'license_key is not a field here',
        () => ({ license_key: 'K', activation_id: 1 }),
        'invalid_parameters',
      ],
    ];
    for (const [why, body, code] of cases) {
      it(`${why} -> 400 ${code}`, async () => {
        const { lic, site, activationId } = await ownedLicense(alice.id);
        expectError(await customerDeactivate(alice, lic.id, body(site)), 400, code);
        expect(await status(activationId)).toBe('active');
      });
    }
    it('a non-numeric license id -> 400 rest_invalid_param', async () => {
      expectError(await customerDeactivate(alice, 'abc', { activation_id: 1 }), 400, 'rest_invalid_param');
    });
  });
});
