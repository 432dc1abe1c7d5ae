import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type Customer, createCustomer } from '../helpers/factories.js';
import {
  approvalFixture,
  approvedToken,
  exchange,
  formPost,
  requestApproval,
  validateApproval,
} from './helpers.js';

let t: TestApp;
let alice: Customer;
beforeAll(async () => {
  t = await createTestApp({ captureLogs: true });
  alice = await createCustomer(t, 'alice@example.com');
});
afterAll(async () => t.close());

describe('secrets of the approval flow never reach a log line', () => {
  it('license key, state, request nonce and activation token are absent from the logs', async () => {
    const f = await approvalFixture(t, alice);
    const { url, state, nonce } = await requestApproval(t, f.key, f.site, f.returnUrl);
    await validateApproval(t, alice.headers, { license_key: f.key, state });
    await t.app.inject({
      method: 'GET',
      url: url.pathname + url.search,
      headers: { cookie: alice.headers.cookie },
    });
    const approved = await formPost(t, '/account/approve', alice.headers.cookie, {
      _nonce: alice.headers['x-rest-nonce'],
      state,
      decision: 'approve',
    });
    const pageToken = new URL(approved.headers.location as string).searchParams.get('activation_token')!;
    const other = { ...f.site, installation_id: '6f1c2b9e-8d4a-4c3b-9a2e-1f0e9d8c7b6a' };
    const { token } = await approvedToken(t, alice, f.key, other, f.returnUrl);
    await exchange(t, f.key, f.site, pageToken);
    await exchange(t, f.key, other, token);
    await exchange(t, f.key, other, token); // token_consumed is logged as a 403 too

    const logs = t.logs();
    expect(logs).toContain('/account/approve');
    for (const secret of [f.key, state, state.split('.')[1]!, nonce, token, pageToken]) {
      expect(logs).not.toContain(secret);
    }
  });
});
