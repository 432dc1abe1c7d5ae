import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, post, setSettings, type TestApp } from '../helpers/app.js';
import {
  adminId,
  createLicense,
  createProduct,
  createSubscription,
  identity,
  licenseFixture,
  setLicenseColumns,
  setSubscriptionStatus,
} from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const validate = (payload: unknown) => post(t, '/licenses/validate', payload);
const activate = (payload: unknown) => post(t, '/licenses/activate', payload);

const ENTITLEMENT_FIELDS = [
  'license_active',
  'update_entitled',
  'support_active',
  'usage_expires_at',
  'usage_expires_at_utc',
  'updates_expires_at',
  'support_expires_at',
  'policy_mode',
  'historical_downloads',
  'history_access',
  'updates_mode',
  'support_mode',
  'usage_expiry_valid',
  'policy_valid',
  'policy_error',
  'issued_at',
  'subscription_status',
  'subscription_active',
  'subscription_linked',
].sort();

/** An activated license; returns the key and the activated identity. */
async function activated(product = {}, license = {}) {
  const f = await licenseFixture(t, { activation_limit: 3, ...product }, license);
  const site = identity('https://www.example.org/');
  const res = await activate({ license_key: f.key, ...site });
  expect(res.statusCode).toBe(200);
  return { ...f, site };
}

describe('POST /licenses/validate', () => {
  it('valid: 200 with every field of the success shape and the full entitlements object', async () => {
    const future = new Date(t.app.services.clock.now().getTime() + 30 * 86400_000);
    const { key, site, product } = await activated({}, { usage_expires_at: future.toISOString() });
    const res = await validate({ license_key: key, ...site });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(
      [
        'valid',
        'error',
        'message',
        'effective_status',
        'license_key',
        'product_id',
        'variation_id',
        'status',
        'activation_limit',
        'activation_count',
        'activations_remaining',
        'expires_at',
        'usage_expires_at_utc',
        'is_expired',
        'subscription_status',
        'subscription_active',
        'domain_active',
        'entitlements',
      ].sort(),
    );
    expect(body).toMatchObject({
      valid: true,
      error: null,
      message: null,
      effective_status: 'valid',
      license_key: key,
      product_id: product.id,
      variation_id: 0,
      status: 'active',
      activation_limit: 3,
      activation_count: 1,
      activations_remaining: 2,
      is_expired: false,
      subscription_status: null,
      subscription_active: false,
      domain_active: true,
    });
    expect(body.expires_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(body.usage_expires_at_utc).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(Object.keys(body.entitlements).sort()).toEqual(ENTITLEMENT_FIELDS);
    expect(body.entitlements).toMatchObject({
      license_active: true,
      policy_mode: 'legacy',
      update_entitled: true,
    });
  });

  it('another spelling of the activated site validates; another port does not', async () => {
    const { key, site } = await activated();
    const spelled = await validate({
      license_key: key,
      domain: 'WWW.EXAMPLE.ORG:443/x?y',
      installation_id: site.installation_id,
    });
    expect(spelled.statusCode).toBe(200);
    const port = await validate({
      license_key: key,
      domain: 'www.example.org:8443',
      installation_id: site.installation_id,
    });
    expect(port.statusCode).toBe(403);
    expect(port.json().error).toBe('domain_not_activated');
  });

  it('invalid_license: 403, valid false, entitlements null', async () => {
    const res = await validate({ license_key: 'NO-SUCH-KEY', ...identity() });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({
      valid: false,
      error: 'invalid_license',
      effective_status: 'invalid_license',
      message: expect.any(String),
      entitlements: null,
    });
  });

  it('domain_not_activated: 403 with domain_active false, product_id and variation_id', async () => {
    const p = await createProduct(
      t,
      { variations: [{ name: 'Pro', activation_limit: 2 }] },
      { via: 'database' },
    );
    const lic = await createLicense(t, {
      product_id: p.id,
      user_id: await adminId(t),
      variation_id: p.variations[0]!.id,
    });
    const res = await validate({ license_key: lic.license_key, ...identity() });
    expect(res.statusCode).toBe(403);
    const body = res.json();
    expect(body).toMatchObject({
      valid: false,
      error: 'domain_not_activated',
      effective_status: 'domain_not_activated',
      domain_active: false,
      product_id: p.id,
      variation_id: p.variations[0]!.id,
    });
    expect(Object.keys(body.entitlements).sort()).toEqual(ENTITLEMENT_FIELDS);
    expect(body.entitlements.license_active).toBe(true);
  });

  const failureShape = (body: Record<string, unknown>, status: string) => {
    expect(body).toMatchObject({
      valid: false,
      error: status,
      effective_status: status,
      message: expect.any(String),
    });
    expect(Object.keys(body.entitlements as object).sort()).toEqual(ENTITLEMENT_FIELDS);
    expect(body).not.toHaveProperty('domain_active');
  };

  it('revoked: 403 revoked with the entitlements object, even for an activated identity', async () => {
    const { key, site, license } = await activated();
    await t.app.inject({ method: 'DELETE', url: `/v1/licenses/${license.id}`, headers: t.adminAuth });
    const res = await validate({ license_key: key, ...site });
    expect(res.statusCode).toBe(403);
    failureShape(res.json(), 'revoked');
    expect(res.json().entitlements.license_active).toBe(false);
  });

  it('expired: 403 expired once the test clock passes the usage expiry', async () => {
    const soon = new Date(t.app.services.clock.now().getTime() + 60_000);
    const { key, site } = await activated({}, { usage_expires_at: soon.toISOString() });
    expect((await validate({ license_key: key, ...site })).statusCode).toBe(200);
    await t.app.services.testClock!.advance(120);
    const res = await validate({ license_key: key, ...site });
    expect(res.statusCode).toBe(403);
    failureShape(res.json(), 'expired');
    expect(res.json().entitlements.usage_expiry_valid).toBe(true);
  });

  it('subscription_inactive: 403 when the linked subscription lapses; valid again when it resumes', async () => {
    const owner = await adminId(t);
    const p = await createProduct(t, { activation_limit: 2 }, { via: 'database' });
    const sub = await createSubscription(db(), owner, p.id, 'active');
    const lic = await createLicense(t, { product_id: p.id, user_id: owner, subscription_id: sub });
    const site = identity();
    await activate({ license_key: lic.license_key, ...site });
    const ok = await validate({ license_key: lic.license_key, ...site });
    expect(ok.json()).toMatchObject({
      valid: true,
      subscription_status: 'active',
      subscription_active: true,
    });
    for (const status of ['on-hold', 'cancelled', 'expired']) {
      await setSubscriptionStatus(db(), sub, status);
      const res = await validate({ license_key: lic.license_key, ...site });
      expect(res.statusCode).toBe(403);
      failureShape(res.json(), 'subscription_inactive');
      expect(res.json().entitlements).toMatchObject({
        subscription_linked: true,
        subscription_status: status,
      });
    }
    await setSubscriptionStatus(db(), sub, 'pending-cancel');
    expect((await validate({ license_key: lic.license_key, ...site })).statusCode).toBe(200);
  });

  it('invalid_usage_expiry: 403 when the stored expiry cannot be read', async () => {
    const { key, site, license } = await activated();
    await setLicenseColumns(db(), license.id, { usage_expires_at: '31/12/2030' });
    const res = await validate({ license_key: key, ...site });
    expect(res.statusCode).toBe(403);
    failureShape(res.json(), 'invalid_usage_expiry');
    expect(res.json().entitlements.usage_expiry_valid).toBe(false);
  });

  it('license_inactive: 403 for a stored status that is neither active nor revoked', async () => {
    const { key, site, license } = await activated();
    await db()
      .updateTable('licenses')
      .set({ status: 'suspended' as 'active' })
      .where('id', '=', license.id)
      .execute();
    const res = await validate({ license_key: key, ...site });
    expect(res.statusCode).toBe(403);
    failureShape(res.json(), 'license_inactive');
  });

  it('an unreadable entitlement snapshot: still valid to use, policy missing and no update rights', async () => {
    const { key, site, license } = await activated();
    await setLicenseColumns(db(), license.id, { entitlement_policy: '{"updates":' });
    const res = await validate({ license_key: key, ...site });
    expect(res.statusCode).toBe(200);
    expect(res.json().entitlements).toMatchObject({
      policy_mode: 'missing',
      policy_valid: false,
      policy_error: 'invalid_entitlement_snapshot',
      update_entitled: false,
    });
  });

  it('an explicit policy from POST /licenses shows in the entitlements', async () => {
    const { key, site } = await activated(
      {},
      {
        entitlement_policy: {
          usage: { mode: 'lifetime' },
          updates: { mode: 'days', days: 365 },
          support: { mode: 'days', days: 30 },
          historical_downloads: true,
        },
      },
    );
    const e = (await validate({ license_key: key, ...site })).json().entitlements;
    expect(e).toMatchObject({
      policy_mode: 'explicit',
      updates_mode: 'days',
      support_mode: 'days',
      update_entitled: true,
      support_active: true,
      historical_downloads: true,
      history_access: true,
    });
  });

  it('a deactivated identity is domain_not_activated again', async () => {
    const { key, site } = await activated();
    await post(t, '/licenses/deactivate', { license_key: key, ...site });
    const res = await validate({ license_key: key, ...site });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('domain_not_activated');
  });

  it('licensing switched off: 503 licensing_unavailable (never valid)', async () => {
    const { key, site } = await activated();
    await setSettings(t, { licensing_enabled: false });
    try {
      expectError(await validate({ license_key: key, ...site }), 503, 'licensing_unavailable');
    } finally {
      await setSettings(t, { licensing_enabled: true });
    }
  });

  describe('bad input: specific 400 codes', () => {
    const ok = () => ({ license_key: 'ANY-KEY-VALUE', ...identity() });
    const cases: [string, () => unknown, string][] = [
      ['license_key missing', () => ({ ...ok(), license_key: undefined }), 'missing_key'],
      ['license_key empty', () => ({ ...ok(), license_key: '' }), 'missing_key'],
      ['license_key a boolean', () => ({ ...ok(), license_key: true }), 'rest_invalid_param'],
      ['domain missing', () => ({ ...ok(), domain: undefined }), 'missing_identity'],
      ['installation_id missing', () => ({ ...ok(), installation_id: undefined }), 'missing_identity'],
      ['domain blank', () => ({ ...ok(), domain: '   ' }), 'missing_identity'],
      ['domain an object', () => ({ ...ok(), domain: { host: 'x' } }), 'invalid_identity'],
      ['domain 10 kB', () => ({ ...ok(), domain: 'd'.repeat(10_240) }), 'invalid_identity'],
      [
        'domain with a control character',
        () => ({ ...ok(), domain: 'example.com\u0000' }),
        'invalid_identity',
      ],
      ['installation_id malformed', () => ({ ...ok(), installation_id: '1234' }), 'invalid_identity'],
      ['installation_id null', () => ({ ...ok(), installation_id: null }), 'invalid_identity'],
      ['an unknown field', () => ({ ...ok(), site_url: 'x' }), 'invalid_parameters'],
    ];
    for (const [why, body, code] of cases) {
      it(`${why} -> 400 ${code}`, async () => expectError(await validate(body()), 400, code));
    }
    it('malformed identity is 400 even for an unknown key (identity is checked first)', async () => {
      expectError(
        await validate({ license_key: 'NOPE', domain: 'a b', installation_id: 'x' }),
        400,
        'invalid_identity',
      );
    });
  });
});
