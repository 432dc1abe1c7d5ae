import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, post, type TestApp } from '../helpers/app.js';
import { type Customer, createCustomer, identity } from '../helpers/factories.js';
import {
  approvalFixture,
  approvedToken,
  confirm,
  exchange,
  requestApproval,
  validateApproval,
} from './helpers.js';

let t: TestApp;
let alice: Customer;
let bob: Customer;
beforeAll(async () => {
  t = await createTestApp();
  alice = await createCustomer(t, 'alice@example.com');
  bob = await createCustomer(t, 'bob@example.com');
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;

/** A pending approval request of alice's. */
async function pending(opts: { limit?: number } = {}) {
  const f = await approvalFixture(t, alice, opts);
  const r = await requestApproval(t, f.key, f.site, f.returnUrl);
  return { ...f, ...r };
}

/** Variants of a state that must all be refused as invalid_state. */
function tamperedStates(state: string): Record<string, string> {
  const [payload, sig] = state.split('.') as [string, string];
  const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
  const reencode = (p: unknown) => Buffer.from(JSON.stringify(p)).toString('base64url');
  const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
  return {
    'a flipped signature': `${payload}.${flip(sig)}`,
    'a payload changed under the old signature (other installation)': `${reencode({ ...decoded, iid: '00000000-0000-4000-8000-000000000000' })}.${sig}`,
    'a payload with a later expiry': `${reencode({ ...decoded, exp: decoded.exp + 86400 })}.${sig}`,
    'no signature': payload,
    'three parts': `${state}.x`,
    garbage: 'not-a-state',
    'non-base64 characters': `${payload}!.${sig}`,
  };
}

describe('activate in approval mode', () => {
  it('400 missing_return_url without a callback URL', async () => {
    const { key, site } = await approvalFixture(t, alice);
    expectError(
      await post(t, '/licenses/activate', { license_key: key, ...site }),
      400,
      'missing_return_url',
    );
  });

  it('400 invalid_return_url for a callback on another domain, scheme or port', async () => {
    const { key } = await approvalFixture(t, alice);
    const site = identity('shop.example.com');
    for (const return_url of [
      'https://evil.example/cb',
      'https://shop.example.com.evil.example/cb',
      'https://shop.example.com:8443/cb',
      'javascript:alert(1)//shop.example.com',
      'ftp://shop.example.com/cb',
      '/relative/cb',
    ]) {
      expectError(
        await post(t, '/licenses/activate', { license_key: key, ...site, return_url }),
        400,
        'invalid_return_url',
      );
    }
  });

  it('400 missing_key without license_key, 400 missing_identity with a token but no identity', async () => {
    expectError(
      await post(t, '/licenses/activate', { ...identity(), activation_token: 'x' }),
      400,
      'missing_key',
    );
    const { key } = await approvalFixture(t, alice);
    expectError(
      await post(t, '/licenses/activate', { license_key: key, activation_token: 'x' }),
      400,
      'missing_identity',
    );
  });

  it('403 invalid_token: unknown token, a token of another identity, of another license', async () => {
    const a = await approvalFixture(t, alice);
    const { token } = await approvedToken(t, alice, a.key, a.site, a.returnUrl);
    expectError(await exchange(t, a.key, a.site, 'f'.repeat(64)), 403, 'invalid_token');
    expectError(await exchange(t, a.key, a.site, ''.padEnd(10, 'x')), 403, 'invalid_token');
    // Same domain, another installation: a different identity.
    expectError(
      await exchange(t, a.key, { ...a.site, installation_id: identity().installation_id }, token),
      403,
      'invalid_token',
    );
    expectError(
      await exchange(t, a.key, { ...a.site, domain: 'other.example' }, token),
      403,
      'invalid_token',
    );
    const b = await approvalFixture(t, alice);
    expectError(await exchange(t, b.key, a.site, token), 403, 'invalid_token');
    // None of those attempts used it up.
    expect((await exchange(t, a.key, a.site, token)).statusCode).toBe(200);
  });

  it('403 token_consumed for a used token', async () => {
    const a = await approvalFixture(t, alice);
    const { token } = await approvedToken(t, alice, a.key, a.site, a.returnUrl);
    expect((await exchange(t, a.key, a.site, token)).statusCode).toBe(200);
    expectError(await exchange(t, a.key, a.site, token), 403, 'token_consumed');
  });

  it('403 revoked: a token of a license revoked after approval activates nothing', async () => {
    const a = await approvalFixture(t, alice);
    const { token } = await approvedToken(t, alice, a.key, a.site, a.returnUrl);
    await t.app.inject({ method: 'DELETE', url: `/v1/licenses/${a.license.id}`, headers: t.adminAuth });
    expectError(await exchange(t, a.key, a.site, token), 403, 'revoked');
  });
});

describe('GET /licenses/oauth/validate', () => {
  it('401 rest_not_logged_in when anonymous, before looking at the parameters', async () => {
    const p = await pending();
    expectError(
      await validateApproval(t, {}, { license_key: p.key, state: p.state }),
      401,
      'rest_not_logged_in',
    );
    expectError(await validateApproval(t, {}, {}), 401, 'rest_not_logged_in');
  });

  it('400 missing_license_key and 400 missing_state', async () => {
    const p = await pending();
    expectError(await validateApproval(t, alice.headers, { state: p.state }), 400, 'missing_license_key');
    expectError(
      await validateApproval(t, alice.headers, { license_key: '', state: p.state }),
      400,
      'missing_license_key',
    );
    expectError(await validateApproval(t, alice.headers, { license_key: p.key }), 400, 'missing_state');
    expectError(
      await validateApproval(t, alice.headers, { license_key: p.key, state: '' }),
      400,
      'missing_state',
    );
  });

  it('400 invalid_state for a tampered, forged or truncated state', async () => {
    const p = await pending();
    for (const [why, state] of Object.entries(tamperedStates(p.state))) {
      const res = await validateApproval(t, alice.headers, { license_key: p.key, state });
      expect([why, res.statusCode, res.json().code]).toEqual([why, 400, 'invalid_state']);
    }
  });

  it("400 invalid_state when license_key is not the state's key (even another key of the owner)", async () => {
    const p = await pending();
    const mine = await approvalFixture(t, alice);
    expectError(
      await validateApproval(t, alice.headers, { license_key: mine.key, state: p.state }),
      400,
      'invalid_state',
    );
  });

  it('403 unauthorized for a customer who does not own the license', async () => {
    const p = await pending();
    expectError(
      await validateApproval(t, bob.headers, { license_key: p.key, state: p.state }),
      403,
      'unauthorized',
    );
  });

  it('404 license_not_found when the license of the state is gone', async () => {
    const p = await pending();
    await db().deleteFrom('licenses').where('id', '=', p.license.id).execute();
    expectError(
      await validateApproval(t, alice.headers, { license_key: p.key, state: p.state }),
      404,
      'license_not_found',
    );
  });
});

describe('POST /licenses/oauth/confirm', () => {
  it('401 rest_not_logged_in: anonymous, or a session cookie without X-REST-Nonce', async () => {
    const p = await pending();
    const body = { license_key: p.key, state: p.state, nonce: p.nonce };
    expectError(await confirm(t, {}, body), 401, 'rest_not_logged_in');
    expectError(await confirm(t, { cookie: alice.headers.cookie }, body), 401, 'rest_not_logged_in');
  });

  it('403 rest_cookie_invalid_nonce with a wrong X-REST-Nonce (the body nonce is not a session nonce)', async () => {
    const p = await pending();
    expectError(
      await confirm(
        t,
        { cookie: alice.headers.cookie, 'x-rest-nonce': p.nonce },
        { license_key: p.key, state: p.state, nonce: p.nonce },
      ),
      403,
      'rest_cookie_invalid_nonce',
    );
  });

  it('400 missing_params when license_key, state or nonce is missing or empty', async () => {
    const p = await pending();
    const full = { license_key: p.key, state: p.state, nonce: p.nonce };
    for (const field of ['license_key', 'state', 'nonce'] as const) {
      const { [field]: _, ...without } = full;
      expectError(await confirm(t, alice.headers, without), 400, 'missing_params');
      expectError(await confirm(t, alice.headers, { ...full, [field]: '' }), 400, 'missing_params');
    }
    expectError(await confirm(t, alice.headers, {}), 400, 'missing_params');
  });

  it('400 invalid_state: tampered state, a nonce that is not the request nonce, another key', async () => {
    const p = await pending();
    for (const [why, state] of Object.entries(tamperedStates(p.state))) {
      const res = await confirm(t, alice.headers, { license_key: p.key, state, nonce: p.nonce });
      expect([why, res.statusCode, res.json().code]).toEqual([why, 400, 'invalid_state']);
    }
    const other = await pending();
    expectError(
      await confirm(t, alice.headers, { license_key: p.key, state: p.state, nonce: other.nonce }),
      400,
      'invalid_state',
    );
    expectError(
      await confirm(t, alice.headers, { license_key: other.key, state: p.state, nonce: p.nonce }),
      400,
      'invalid_state',
    );
  });

  it('403 unauthorized for a customer who does not own the license; nothing is issued', async () => {
    const p = await pending();
    expectError(
      await confirm(t, bob.headers, { license_key: p.key, state: p.state, nonce: p.nonce }),
      403,
      'unauthorized',
    );
    const tokens = await db()
      .selectFrom('oauth_activation_tokens')
      .selectAll()
      .where('license_id', '=', p.license.id)
      .execute();
    expect(tokens).toHaveLength(0);
  });

  it('403 revoked: no token is issued for a revoked license', async () => {
    const p = await pending();
    await t.app.inject({ method: 'DELETE', url: `/v1/licenses/${p.license.id}`, headers: t.adminAuth });
    expectError(
      await confirm(t, alice.headers, { license_key: p.key, state: p.state, nonce: p.nonce }),
      403,
      'revoked',
    );
  });

  it('400 invalid_parameters for an unknown field', async () => {
    const p = await pending();
    expectError(
      await confirm(t, alice.headers, {
        license_key: p.key,
        state: p.state,
        nonce: p.nonce,
        user_id: bob.id,
      }),
      400,
      'invalid_parameters',
    );
  });
});
