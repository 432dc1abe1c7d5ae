import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { sha256 } from '../../src/random.js';
import { createTestApp, post, setSettings, type TestApp } from '../helpers/app.js';
import { type Customer, createCustomer, identity } from '../helpers/factories.js';
import {
  approvalFixture,
  approvedToken,
  confirm,
  exchange,
  requestApproval,
  validateApproval,
  validateLicense,
} from './helpers.js';

let t: TestApp;
let alice: Customer;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1', PUBLIC_URL: 'https://store.example' } });
  alice = await createCustomer(t, 'alice@example.com');
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const advance = (seconds: number) => t.app.services.testClock!.advance(seconds);
const activeRows = (licenseId: number) =>
  db()
    .selectFrom('activations')
    .selectAll()
    .where('license_id', '=', licenseId)
    .where('status', '=', 'active')
    .execute();
const tokenRows = (licenseId: number) =>
  db().selectFrom('oauth_activation_tokens').selectAll().where('license_id', '=', licenseId).execute();

describe('approval step 1: activate with return_url when approval is required', () => {
  it('answers 200 {success:false, code:oauth_required, message, redirect_url} to our approval page', async () => {
    const { key, site, returnUrl, license } = await approvalFixture(t, alice);
    const res = await post(t, '/licenses/activate', { license_key: key, ...site, return_url: returnUrl });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['code', 'message', 'redirect_url', 'success']);
    expect(body).toMatchObject({ success: false, code: 'oauth_required', message: expect.any(String) });
    const url = new URL(body.redirect_url);
    expect(`${url.origin}${url.pathname}`).toBe('https://store.example/account/approve');
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('nonce')).toMatch(/^[0-9a-f]{32}$/);
    // The key never travels inside the redirect URL, and nothing was activated.
    expect(body.redirect_url).not.toContain(key);
    expect(Buffer.from(url.searchParams.get('state')!.split('.')[0]!, 'base64url').toString()).not.toContain(
      key,
    );
    expect(await activeRows(license.id)).toHaveLength(0);
  });

  it('follows the store setting when the product has no override; a simple override beats it', async () => {
    await setSettings(t, { activation_mode: 'oauth' });
    try {
      const follows = await approvalFixture(t, alice, { mode: null });
      await requestApproval(t, follows.key, follows.site, follows.returnUrl);
      const simple = await approvalFixture(t, alice, { mode: 'simple' });
      const res = await post(t, '/licenses/activate', { license_key: simple.key, ...simple.site });
      expect(res.json()).toMatchObject({ success: true });
    } finally {
      await setSettings(t, { activation_mode: 'simple' });
    }
  });

  it('each request gets its own state and nonce', async () => {
    const { key, site, returnUrl } = await approvalFixture(t, alice);
    const a = await requestApproval(t, key, site, returnUrl);
    const b = await requestApproval(t, key, site, returnUrl);
    expect(a.state).not.toBe(b.state);
    expect(a.nonce).not.toBe(b.nonce);
  });

  it('the signing secret is created once in app_state and shared by every server process', async () => {
    const { key, site, returnUrl } = await approvalFixture(t, alice);
    const { state } = await requestApproval(t, key, site, returnUrl);
    const secrets = await db()
      .selectFrom('app_state')
      .selectAll()
      .where('key', '=', 'oauth_state_secret')
      .execute();
    expect(secrets).toHaveLength(1);
    expect(secrets[0]!.value).toMatch(/^[0-9a-f]{64}$/);
    // A second app on the same database (another process) accepts the state the first one signed.
    const other = await buildApp({ ...t.config, logLevel: 'silent' }, t.db.database);
    try {
      const res = await other.inject({
        method: 'GET',
        url: `/v1/licenses/oauth/validate?${new URLSearchParams({ license_key: key, state })}`,
        headers: alice.headers,
      });
      expect(res.statusCode).toBe(200);
    } finally {
      // Closing the second app must not close the shared database: it was never handed ownership.
      await other.close();
    }
  });
});

describe('GET /licenses/oauth/validate (owner reviews the request)', () => {
  it('answers exactly the documented fields for the owner', async () => {
    const { key, site, returnUrl, license, product } = await approvalFixture(t, alice, { limit: 2 });
    const { state } = await requestApproval(t, key, site, returnUrl);
    const res = await validateApproval(t, alice.headers, { license_key: key, state });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      license_key: key,
      product_id: product.id,
      variation_id: 0,
      product_name: 'Forms Pro',
      variation_name: '',
      status: 'active',
      activation_limit: 2,
      activation_count: 0,
      expires_at: null,
      usage_expires_at_utc: license.usage_expires_at_utc,
    });
  });
});

describe('approval step 2: POST /licenses/oauth/confirm by the owning customer', () => {
  it('issues a single-use token and the callback URL with activation_token, license_key and nonce', async () => {
    const { key, site, returnUrl, license } = await approvalFixture(t, alice);
    const { state, nonce } = await requestApproval(t, key, site, returnUrl);
    const res = await confirm(t, alice.headers, { license_key: key, state, nonce });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['activation_token', 'redirect_url', 'success']);
    expect(body.success).toBe(true);
    expect(body.activation_token).toMatch(/^[0-9a-f]{64}$/);
    const cb = new URL(body.redirect_url);
    expect(`${cb.origin}${cb.pathname}`).toBe('https://shop.example.com/wp-admin/cb');
    expect(cb.searchParams.get('page')).toBe('lic'); // the site's own query is kept
    expect(cb.searchParams.get('activation_token')).toBe(body.activation_token);
    expect(cb.searchParams.get('license_key')).toBe(key);
    expect(cb.searchParams.get('nonce')).toBe(nonce);
    expect(cb.searchParams.has('state')).toBe(false);
    expect(await activeRows(license.id)).toHaveLength(0);
  });

  it('stores only the SHA-256 of the token, bound to the identity and license, for 5 minutes', async () => {
    const { key, site, returnUrl, license } = await approvalFixture(t, alice);
    const { token } = await approvedToken(t, alice, key, site, returnUrl);
    const rows = await tokenRows(license.id);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.token_hash).toBe(sha256(token));
    expect(Object.values(row).map(String)).not.toContain(token);
    expect(row).toMatchObject({
      domain_normalized: 'shop.example.com',
      installation_id: site.installation_id,
      user_id: alice.id,
      used_at: null,
    });
    expect(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()).toBe(300_000);
  });
});

describe('approval step 4: activate with activation_token', () => {
  it('creates the activation and consumes the token; validate then answers valid', async () => {
    const { key, site, returnUrl, license } = await approvalFixture(t, alice, { limit: 3 });
    const { token } = await approvedToken(t, alice, key, site, returnUrl);
    const res = await exchange(t, key, site, token);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(
      ['activation_id', 'activations_remaining', 'product_id', 'success', 'variation_id'].sort(),
    );
    expect(body).toMatchObject({ success: true, activations_remaining: 2 });
    const rows = await activeRows(license.id);
    expect(rows.map((r) => r.id)).toEqual([body.activation_id]);
    expect(rows[0]).toMatchObject({
      domain_normalized: 'shop.example.com',
      installation_id: site.installation_id,
    });
    expect((await tokenRows(license.id))[0]!.used_at).not.toBeNull();
    const v = await validateLicense(t, key, site);
    expect(v.statusCode).toBe(200);
    expect(v.json()).toMatchObject({ valid: true, effective_status: 'valid' });
    // Once active, a repeat needs no approval and uses no slot.
    const again = await post(t, '/licenses/activate', { license_key: key, ...site });
    expect(again.json()).toMatchObject({
      success: true,
      activation_id: body.activation_id,
      message: 'Already activated',
    });
  });

  it('a reused token -> 403 token_consumed, while active and after deactivation; no second activation', async () => {
    const { key, site, returnUrl, license } = await approvalFixture(t, alice);
    const { token } = await approvedToken(t, alice, key, site, returnUrl);
    expect((await exchange(t, key, site, token)).statusCode).toBe(200);
    const reuse = await exchange(t, key, site, token);
    expect([reuse.statusCode, reuse.json().code]).toEqual([403, 'token_consumed']);
    await post(t, '/licenses/deactivate', { license_key: key, ...site });
    const after = await exchange(t, key, site, token);
    expect([after.statusCode, after.json().code]).toEqual([403, 'token_consumed']);
    expect(await activeRows(license.id)).toHaveLength(0);
  });

  it('a token refused for the activation limit stays usable once a slot is free', async () => {
    const { key, site, returnUrl, license } = await approvalFixture(t, alice, { limit: 1 });
    const { token } = await approvedToken(t, alice, key, site, returnUrl);
    const other = identity('other.example');
    const first = await approvedToken(t, alice, key, other, 'https://other.example/cb');
    expect((await exchange(t, key, other, first.token)).statusCode).toBe(200);
    const full = await exchange(t, key, site, token);
    expect([full.statusCode, full.json().code]).toEqual([403, 'activation_limit_reached']);
    expect((await tokenRows(license.id)).find((r) => r.token_hash === sha256(token))!.used_at).toBeNull();
    await post(t, '/licenses/deactivate', { license_key: key, ...other });
    expect((await exchange(t, key, site, token)).statusCode).toBe(200);
  });
});

describe('lifetimes on the test clock', () => {
  // The test clock runs on from real time: a margin of 10 s before each lifetime's end keeps the
  // "still good" step true on a loaded machine, where the requests between issue and use take
  // seconds.
  it('the signed state lives 10 minutes: good at 9:50, invalid_state after 10:00', async () => {
    const { key, site, returnUrl } = await approvalFixture(t, alice);
    const { state, nonce } = await requestApproval(t, key, site, returnUrl);
    await advance(590);
    expect((await validateApproval(t, alice.headers, { license_key: key, state })).statusCode).toBe(200);
    await advance(11);
    const late = await validateApproval(t, alice.headers, { license_key: key, state });
    expect([late.statusCode, late.json().code]).toEqual([400, 'invalid_state']);
    const res = await confirm(t, alice.headers, { license_key: key, state, nonce });
    expect([res.statusCode, res.json().code]).toEqual([400, 'invalid_state']);
  });

  it('the activation token lives 5 minutes: exchanged at 4:50, invalid_token after 5:00', async () => {
    const { key, site, returnUrl } = await approvalFixture(t, alice);
    const early = await approvedToken(t, alice, key, site, returnUrl);
    const other = identity('late.example');
    const late = await approvedToken(t, alice, key, other, 'https://late.example/cb');
    await advance(290);
    expect((await exchange(t, key, site, early.token)).statusCode).toBe(200);
    await advance(11);
    const res = await exchange(t, key, other, late.token);
    expect([res.statusCode, res.json().code]).toEqual([403, 'invalid_token']);
    expect((await validateLicense(t, key, other)).json().error).toBe('domain_not_activated');
  });
});
