import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, setSettings, type TestApp } from '../helpers/app.js';
import {
  type Customer,
  createCustomer,
  createLicense,
  createProduct,
  identity,
} from '../helpers/factories.js';
import { formPost } from '../oauth/helpers.js';

// My licenses, "Move to another site" (docs/licensing.md, '4. Deactivate'): the site's slot is
// freed in one step and the page says how to activate the new site.

let t: TestApp;
let alice: Customer;
let bob: Customer;
beforeAll(async () => {
  t = await createTestApp();
  alice = await createCustomer(t, 'move-alice@example.com');
  bob = await createCustomer(t, 'move-bob@example.com');
});
afterAll(async () => t.close());

const page = (who: Customer, query = '') =>
  t.app.inject({ method: 'GET', url: `/account/licenses${query}`, headers: { cookie: who.headers.cookie } });
const status = async (id: number) =>
  (
    await t.app.services.database.db
      .selectFrom('activations')
      .select('status')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  ).status;

async function activated(owner: Customer) {
  const product = await createProduct(t, { activation_limit: 1 }, { via: 'database' });
  const license = await createLicense(t, { product_id: product.id, user_id: owner.id });
  const site = identity('old-shop.example.com');
  const res = await post(t, '/licenses/activate', { license_key: license.license_key, ...site });
  expect(res.statusCode).toBe(200);
  return { license, key: license.license_key, site, activationId: res.json().activation_id as number };
}

const move = (who: Customer, licenseId: number, fields: Record<string, string>) =>
  formPost(t, `/account/licenses/${licenseId}/move`, who.headers.cookie, fields);

describe('My licenses: Move to another site', () => {
  it('is offered beside Deactivate on each active site', async () => {
    const f = await activated(alice);
    const res = await page(alice);
    expect(res.body).toContain(`action="/account/licenses/${f.license.id}/move"`);
    expect(res.body).toContain('Move to another site: old-shop.example.com');
  });

  it('frees the slot in one step, says how to activate the new site, and the new site activates', async () => {
    const f = await activated(alice);
    const res = await move(alice, f.license.id, {
      _nonce: alice.headers['x-rest-nonce'],
      activation_id: String(f.activationId),
    });
    expect([res.statusCode, res.headers.location]).toEqual([303, '/account/licenses?notice=moved']);
    expect(await status(f.activationId)).toBe('deactivated');
    expect((await page(alice, '?notice=moved')).body).toContain('free for your new site');
    const next = await post(t, '/licenses/activate', {
      license_key: f.key,
      ...identity('new-shop.example.com'),
    });
    expect(next.statusCode).toBe(200);
  });

  it('without the session nonce: 403, nothing changes', async () => {
    const f = await activated(alice);
    const res = await move(alice, f.license.id, { activation_id: String(f.activationId) });
    expect(res.statusCode).toBe(403);
    expect(await status(f.activationId)).toBe('active');
  });

  it("another customer's license, or a malformed id: not found, nothing changes", async () => {
    const f = await activated(alice);
    const theirs = await move(bob, f.license.id, {
      _nonce: bob.headers['x-rest-nonce'],
      activation_id: String(f.activationId),
    });
    expect(theirs.headers.location).toBe('/account/licenses?error=not_found');
    const malformed = await move(alice, f.license.id, {
      _nonce: alice.headers['x-rest-nonce'],
      activation_id: '1 OR 1=1; <script>',
    });
    expect(malformed.headers.location).toBe('/account/licenses?error=not_found');
    expect(await status(f.activationId)).toBe('active');
  });

  it('signed out: to the sign-in page, nothing changes', async () => {
    const f = await activated(alice);
    const res = await formPost(t, `/account/licenses/${f.license.id}/move`, undefined, {
      activation_id: String(f.activationId),
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toMatch(/^\/account\/sign-in/);
    expect(await status(f.activationId)).toBe('active');
  });

  it('respects customer_deactivation_enabled: not offered, and a post is refused', async () => {
    const f = await activated(alice);
    await setSettings(t, { customer_deactivation_enabled: false });
    try {
      expect((await page(alice)).body).not.toContain('/move"');
      const res = await move(alice, f.license.id, {
        _nonce: alice.headers['x-rest-nonce'],
        activation_id: String(f.activationId),
      });
      expect(res.headers.location).toBe('/account/licenses?error=deactivation_disabled');
      expect(await status(f.activationId)).toBe('active');
    } finally {
      await setSettings(t, { customer_deactivation_enabled: true });
    }
  });
});
