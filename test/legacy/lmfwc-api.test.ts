import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/http/redact.js';
import { legacyIdentity, URL_ONLY_INSTALLATION } from '../../src/modules/identity/identity.js';
import { sha256 } from '../../src/random.js';
import { createTestApp, expectError, post, type TestApp } from '../helpers/app.js';
import {
  adminId,
  createLicense,
  installationId,
  setLicenseColumns,
  softwareProduct,
} from '../helpers/factories.js';

// License Manager for WooCommerce's v2 license routes (docs/migrating.md, 'License Manager for
// WooCommerce'), with the old store's REST key.
const CK = `ck_${'a1'.repeat(20)}`;
const CS = `cs_${'b2'.repeat(20)}`;
const BASE = '/wp-json/lmfwc/v2/licenses';
const basic = (key: string, secret: string) => `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;

let t: TestApp;
let origin: string;
beforeAll(async () => {
  t = await createTestApp({ captureLogs: true });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => t.close());

async function configureKey(key = CK, secretHash = sha256(CS)) {
  const res = await t.app.inject({
    method: 'PATCH',
    url: '/v1/settings',
    headers: t.adminAuth,
    payload: { lmfwc_consumer_key: key, lmfwc_consumer_secret_sha256: secretHash },
  });
  expect(res.statusCode, res.body).toBe(200);
}

/** One LMFWC call, with the store's REST key as HTTP Basic unless told otherwise. */
function call(
  path: string,
  query: Record<string, string> = {},
  authorization: string | null = basic(CK, CS),
) {
  const qs = new URLSearchParams(query).toString();
  return t.app.inject({
    method: 'GET',
    url: `${BASE}/${path}${qs ? `?${qs}` : ''}`,
    headers: authorization === null ? {} : { authorization },
  });
}

async function ok(path: string, query: Record<string, string> = {}) {
  const res = await call(path, query);
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { success: boolean; data: Record<string, unknown> };
  expect(body.success).toBe(true);
  return body.data;
}

/** A product with the compatibility API on (unless told), and a license of limit `limit`. */
async function fixture(limit = 2, legacy = true) {
  const product = await softwareProduct(t, { legacy_api: legacy }, { activation_limit: limit });
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

describe('the REST key', () => {
  it('refuses every call while no key is configured (fail closed)', async () => {
    const f = await fixture();
    expectError(
      await call(`activate/${f.key}`, { label: 'https://a.example.com' }),
      401,
      'woocommerce_rest_authentication_error',
    );
    expectError(
      await call(`activate/${f.key}`, {}, basic('', '')),
      401,
      'woocommerce_rest_authentication_error',
    );
    expect(await activeRows(f.licenseId)).toHaveLength(0);
  });

  it('refuses no credentials, a wrong key and a wrong secret, and accepts query parameters', async () => {
    await configureKey();
    const f = await fixture();
    const label = { label: 'https://a.example.com' };
    expectError(await call(`activate/${f.key}`, label, null), 401, 'lmfwc_rest_cannot_edit');
    expectError(await call(`deactivate/${f.key}`, label, null), 401, 'lmfwc_rest_cannot_edit');
    expectError(await call(`validate/${f.key}`, {}, null), 401, 'lmfwc_rest_cannot_view');
    expectError(await call(f.key, {}, null), 401, 'lmfwc_rest_cannot_view');
    expectError(
      await call(`activate/${f.key}`, label, basic(CK, `${CS}x`)),
      401,
      'woocommerce_rest_authentication_error',
    );
    expectError(
      await call(`activate/${f.key}`, label, basic(`ck_${'c3'.repeat(20)}`, CS)),
      401,
      'woocommerce_rest_authentication_error',
    );
    expectError(
      await call(`activate/${f.key}`, label, 'Basic !!!'),
      401,
      'woocommerce_rest_authentication_error',
    );
    expectError(
      await call(`activate/${f.key}`, { ...label, consumer_key: CK, consumer_secret: 'cs_wrong' }, null),
      401,
      'woocommerce_rest_authentication_error',
    );
    expect(await activeRows(f.licenseId)).toHaveLength(0);
    const res = await call(`activate/${f.key}`, { ...label, consumer_key: CK, consumer_secret: CS }, null);
    expect(res.statusCode, res.body).toBe(200);
    expect(await activeRows(f.licenseId)).toHaveLength(1);
  });

  it('is a setting of its own form: a malformed key or hash is refused and changes nothing', async () => {
    const bad = await t.app.inject({
      method: 'PATCH',
      url: '/v1/settings',
      headers: t.adminAuth,
      payload: { lmfwc_consumer_key: 'ck_short', lmfwc_consumer_secret_sha256: CS },
    });
    expectError(bad, 400, 'rest_invalid_param');
    const view = (await t.app.inject({ method: 'GET', url: '/v1/settings', headers: t.adminAuth })).json();
    expect(view).toMatchObject({ lmfwc_consumer_key: CK, lmfwc_consumer_secret_sha256: sha256(CS) });
  });
});

describe('activate, validate, deactivate, retrieve', () => {
  it('refuses a license whose product did not turn the compatibility API on', async () => {
    await configureKey();
    const f = await fixture(2, false);
    for (const path of [`activate/${f.key}`, `deactivate/${f.key}`, `validate/${f.key}`, f.key]) {
      expectError(await call(path, { label: 'https://a.example.com' }), 404, 'lmfwc_rest_data_error');
    }
    expectError(await call('activate/NO-SUCH-KEY'), 404, 'lmfwc_rest_data_error');
    expect(await activeRows(f.licenseId)).toHaveLength(0);
  });

  it('activates a site by its label, the same seat twice, and answers LMFWC shapes', async () => {
    await configureKey();
    const f = await fixture(2);
    const site = legacyIdentity('https://one.example.com');
    const first = await ok(`activate/${f.key}`, { label: 'https://one.example.com/' });
    expect(first).toMatchObject({
      id: f.licenseId,
      productId: f.product.id,
      licenseKey: f.key,
      expiresAt: null,
      status: 3,
      timesActivated: 1,
      timesActivatedMax: 2,
      activationData: { token: site.identity_key, license_id: f.licenseId, deactivated_at: null },
    });
    expect(first.createdAt).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(first).not.toHaveProperty('hash');
    // The same site in another spelling: the same seat.
    expect(await ok(`activate/${f.key}`, { label: 'http://ONE.example.com' })).toMatchObject({
      timesActivated: 1,
    });
    const rows = await activeRows(f.licenseId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      domain_normalized: 'one.example.com',
      installation_id: URL_ONLY_INSTALLATION,
    });

    expect(await ok(`validate/${f.key}`)).toMatchObject({
      timesActivated: 1,
      timesActivatedMax: 2,
      remainingActivations: 1,
      activationData: [{ token: site.identity_key }],
    });
    expect(await ok(`validate/${f.key}`, { token: site.identity_key })).toMatchObject({
      activationData: [{ token: site.identity_key }],
    });
    expect(
      ((await ok(`validate/${f.key}`, { token: 'f'.repeat(64) })).activationData as unknown[]).length,
    ).toBe(0);
    expect(await ok(f.key)).toMatchObject({
      licenseKey: f.key,
      activationData: [{ token: site.identity_key }],
    });

    // Deactivate by the token the activation answered.
    expect(await ok(`deactivate/${f.key}`, { token: site.identity_key })).toMatchObject({
      timesActivated: 0,
    });
    expect(await activeRows(f.licenseId)).toHaveLength(0);
    expectError(
      await call(`deactivate/${f.key}`, { token: site.identity_key }),
      404,
      'lmfwc_rest_data_error',
    );
    // The token reactivates its deactivated activation (LMFWC 2.2); an active one is refused.
    expect(await ok(`activate/${f.key}`, { token: site.identity_key })).toMatchObject({
      timesActivated: 1,
      activationData: { token: site.identity_key },
    });
    expectError(await call(`activate/${f.key}`, { token: site.identity_key }), 404, 'lmfwc_rest_data_error');
    expectError(await call(`activate/${f.key}`, { token: 'e'.repeat(64) }), 404, 'lmfwc_rest_data_error');
    // By the label.
    const byLabel = await ok(`deactivate/${f.key}`, { label: 'one.example.com' });
    expect(byLabel).toMatchObject({ timesActivated: 0, activationData: { token: site.identity_key } });
    expect((byLabel.activationData as { deactivated_at: string | null }).deactivated_at).not.toBeNull();
    expect(await activeRows(f.licenseId)).toHaveLength(0);
  });

  it('deactivates every activation it made when named by neither token nor label, as LMFWC 2.2', async () => {
    await configureKey();
    const f = await fixture(3);
    await ok(`activate/${f.key}`, { label: 'https://a.example.com' });
    await ok(`activate/${f.key}`, { label: 'https://b.example.com' });
    const all = await ok(`deactivate/${f.key}`);
    expect(all).toMatchObject({ timesActivated: 0 });
    expect(all.activationData).toHaveLength(2);
    expect(await activeRows(f.licenseId)).toHaveLength(0);
    expectError(await call(`deactivate/${f.key}`), 404, 'lmfwc_rest_data_error');
  });

  it('names a site without a label by the caller address, as LMFWC records it', async () => {
    await configureKey();
    const f = await fixture(2);
    await ok(`activate/${f.key}`);
    const rows = await activeRows(f.licenseId);
    expect(rows.map((r) => r.domain_normalized)).toEqual(['127.0.0.1']);
    // An IPv6 caller, and a label that is free text rather than a host: the address is the site.
    const v6 = await t.app.inject({
      method: 'GET',
      url: `${BASE}/activate/${f.key}?label=My%20shop`,
      remoteAddress: '2001:db8::7',
      headers: { authorization: basic(CK, CS) },
    });
    expect(v6.statusCode, v6.body).toBe(200);
    expect((await activeRows(f.licenseId)).map((r) => r.domain_normalized).sort()).toEqual([
      '127.0.0.1',
      '[2001:db8::7]',
    ]);
    // A free-text label names no site to deactivate: every activation LMFWC's way is freed.
    expect((await ok(`deactivate/${f.key}`, { label: 'My shop' })).activationData).toHaveLength(2);
    expect(await activeRows(f.licenseId)).toHaveLength(0);
  });

  it('answers an expired license with LMFWC expiry error and changes nothing', async () => {
    await configureKey();
    const f = await fixture(2);
    await setLicenseColumns(t.app.services.database.db, f.licenseId, {
      usage_expires_at: '2020-01-01T00:00:00.000Z',
    });
    expectError(
      await call(`activate/${f.key}`, { label: 'https://x.example.com' }),
      405,
      'lmfwc_rest_license_expired',
    );
    expectError(
      await call(`deactivate/${f.key}`, { label: 'https://x.example.com' }),
      405,
      'lmfwc_rest_license_expired',
    );
    expect(await activeRows(f.licenseId)).toHaveLength(0);
  });

  it('gives 12 parallel activations of different sites one seat each, never past the limit', async () => {
    await configureKey();
    const f = await fixture(3);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        fetch(
          `${origin}${BASE}/activate/${f.key}?label=${encodeURIComponent(`https://site${i}.example.com`)}`,
          {
            headers: { authorization: basic(CK, CS) },
          },
        ).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { code?: string; success?: boolean },
        })),
      ),
    );
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(3);
    expect(won.every((r) => r.body.success === true)).toBe(true);
    const lost = results.filter((r) => r.status !== 200);
    expect(lost.every((r) => r.status === 404 && r.body.code === 'lmfwc_rest_data_error')).toBe(true);
    const rows = await activeRows(f.licenseId);
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((r) => r.domain_normalized)).size).toBe(3);
  });
});

describe('leaving the compatibility API', () => {
  it("a Tollgate SDK activation of the same domain takes the seat over in place, and is no longer LMFWC's", async () => {
    await configureKey();
    const f = await fixture(1);
    const made = await ok(`activate/${f.key}`, { label: 'https://shop.example.com/' });
    const activationId = (made.activationData as { id: number }).id;
    const full = { domain: 'shop.example.com', installation_id: installationId() };
    const res = await post(t, '/licenses/activate', { license_key: f.key, ...full });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      success: true,
      activation_id: activationId,
      activations_remaining: 0,
    });
    const rows = await activeRows(f.licenseId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: activationId, installation_id: full.installation_id });
    // LMFWC's deactivate-all leaves the SDK's site alone; its token is gone.
    expectError(await call(`deactivate/${f.key}`), 404, 'lmfwc_rest_data_error');
    expect(await ok(f.key)).toMatchObject({ activationData: [{ id: activationId, token: null }] });
    expect(await activeRows(f.licenseId)).toHaveLength(1);
  });
});

describe('hostile input', () => {
  it('is answered with a 4xx and changes nothing', async () => {
    await configureKey();
    const f = await fixture(2);
    const hostile = [
      `activate/..%2F..%2Fetc%2Fpasswd`,
      `activate/${encodeURIComponent(`${f.key}' OR '1'='1`)}`,
      `activate/${encodeURIComponent(`${f.key}; DROP TABLE licenses; --`)}`,
      `activate/${'A'.repeat(5000)}`,
      `activate/${f.key}%00`,
      `validate/${encodeURIComponent('<script>alert(1)</script>')}`,
    ];
    for (const path of hostile) {
      const res = await call(path, { label: 'https://h.example.com' });
      expect(res.statusCode, `${path.slice(0, 80)} ${res.body}`).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
      expect(res.body).not.toContain('    at ');
    }
    expectError(
      await call(`activate/${f.key}`, { label: `https://${'a'.repeat(3000)}.example.com` }),
      400,
      'rest_invalid_param',
    );
    expectError(await call(`deactivate/${f.key}`, { token: 'x'.repeat(5000) }), 400, 'rest_invalid_param');
    expectError(await call(`deactivate/${f.key}`, { token: "' OR 1=1; --" }), 404, 'lmfwc_rest_data_error');
    const repeated = await t.app.inject({
      method: 'GET',
      url: `${BASE}/activate/${f.key}?label=https://a.example.com&label=https://b.example.com`,
      headers: { authorization: basic(CK, CS) },
    });
    expectError(repeated, 400, 'rest_invalid_param');
    expect(await activeRows(f.licenseId)).toHaveLength(0);
  });
});

describe('the keys the plugins send', () => {
  it('never reach a log line', async () => {
    await configureKey();
    const f = await fixture(2);
    await ok(`activate/${f.key}`, { label: 'https://logged.example.com' });
    await call(`validate/${f.key}`, { consumer_key: CK, consumer_secret: CS }, null);
    const logs = t.logs();
    expect(logs).toContain('/wp-json/lmfwc/v2/licenses/activate/[REDACTED]');
    expect(logs).not.toContain(f.key);
    expect(logs).not.toContain(CS);
    expect(logs).not.toContain(CK);
    expect(redactUrl(`${BASE}/${f.key}?x=1`)).toBe(`${BASE}/[REDACTED]?x=1`);
    expect(redactUrl(`${BASE}/deactivate/${f.key}?token=abc`)).toBe(
      `${BASE}/deactivate/[REDACTED]?token=[REDACTED]`,
    );
  });
});
