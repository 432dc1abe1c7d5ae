import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, setSettings, type TestApp } from '../helpers/app.js';
import { type Customer, createCustomer, identity } from '../helpers/factories.js';
import { approvalFixture, requestApproval } from './helpers.js';

// The approval page warns that no seat is free only when activation would refuse the site: a
// staging site counts against the staging cap, a reinstall that takes over needs no seat
// (docs/licensing.md, '2.3 Staging and development sites', '2.4 Reinstalls').

let t: TestApp;
let owner: Customer;
beforeAll(async () => {
  t = await createTestApp();
  owner = await createCustomer(t, 'staging-approval@example.com');
});
afterAll(async () => t.close());

const WARNING = 'All activations of this license are in use';

/** A full license (limit 1, one production site active through the simple mode) in approval mode. */
async function fullLicense(domain: string) {
  const f = await approvalFixture(t, owner, { limit: 1, mode: 'simple', domain });
  const first = await post(t, '/licenses/activate', { license_key: f.key, ...identity('taken.example.com') });
  expect(first.statusCode).toBe(200);
  await t.app.services.database.db
    .updateTable('products')
    .set({ activation_mode: 'oauth' })
    .where('id', '=', f.product.id)
    .execute();
  return f;
}

async function approvalPage(
  key: string,
  site: { domain: string; installation_id: string },
  returnUrl: string,
) {
  const { url } = await requestApproval(t, key, site, returnUrl);
  const res = await t.app.inject({
    method: 'GET',
    url: `${url.pathname}${url.search}`,
    headers: { cookie: owner.headers.cookie },
  });
  expect(res.statusCode).toBe(200);
  return res.body;
}

describe('the approval page of a full license', () => {
  it('warns for a production site', async () => {
    const f = await fullLicense('https://shop.example.com/');
    expect(await approvalPage(f.key, f.site, 'https://shop.example.com/cb')).toContain(WARNING);
  });

  it('does not warn for a staging site within the staging cap', async () => {
    const f = await fullLicense('https://staging.example.com/');
    expect(await approvalPage(f.key, f.site, 'https://staging.example.com/cb')).not.toContain(WARNING);
  });

  it('does not warn for a reinstall that takes the site over', async () => {
    await setSettings(t, { reinstall_takeover: true });
    try {
      const f = await fullLicense('https://taken.example.com/');
      expect(await approvalPage(f.key, f.site, 'https://taken.example.com/cb')).not.toContain(WARNING);
    } finally {
      await setSettings(t, { reinstall_takeover: false });
    }
  });
});
