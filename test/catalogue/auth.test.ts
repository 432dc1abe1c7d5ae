import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { createCustomer, createProduct, enableOfflineGateways } from '../helpers/factories.js';

let t: TestApp;
let customer: Awaited<ReturnType<typeof createCustomer>>;
let productId: number;
beforeAll(async () => {
  t = await createTestApp();
  // Orders here are paid by bank transfer or cheque, which a new store starts without.
  await enableOfflineGateways(t);
  customer = await createCustomer(t, 'shopper@example.com');
  productId = (await createProduct(t)).id;
});
afterAll(async () => t.close());

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** Every catalogue route with a body that would succeed for an administrator. */
const routes = (): [Method, string, object?][] => [
  ['POST', '/products', { name: 'x', price: '1' }],
  ['GET', '/products'],
  ['GET', `/products/${productId}`],
  ['PATCH', `/products/${productId}`, { name: 'hijacked' }],
  ['GET', `/software/products/${productId}/config`],
  ['POST', `/software/products/${productId}/config`, { slug: 'hijacked', software_enabled: 'yes' }],
  ['POST', '/coupons', { code: 'free', discount_type: 'percent', amount: '100' }],
  ['GET', '/coupons'],
  ['GET', '/coupons/1'],
  ['PATCH', '/coupons/1', { amount: '1' }],
  ['DELETE', '/coupons/1'],
  ['POST', '/tax-rates', { country: 'GB', rate: '0', name: 'none' }],
  ['GET', '/tax-rates'],
  ['PATCH', '/tax-rates/1', { rate: '99' }],
  ['DELETE', '/tax-rates/1'],
  ['POST', '/shipping-zones', { name: 'z', regions: [{ country: 'GB' }], methods: [] }],
  ['GET', '/shipping-zones'],
  ['PATCH', '/shipping-zones/1', { name: 'hijacked' }],
  ['DELETE', '/shipping-zones/1'],
  ['GET', '/payment-gateways'],
  ['PATCH', '/payment-gateways/bacs', { enabled: false }],
];

describe('catalogue routes are for administrators only', () => {
  it('answers 401 rest_not_logged_in without credentials, even for a malformed body', async () => {
    for (const [method, url, payload] of routes()) {
      const res = await t.app.inject({ method, url: `/v1${url}`, payload });
      expectError(res, 401, 'rest_not_logged_in');
      if (payload) {
        expectError(
          await t.app.inject({ method, url: `/v1${url}`, payload: { bogus: true } }),
          401,
          'rest_not_logged_in',
        );
      }
    }
  });

  it('answers 403 rest_forbidden for a signed-in customer', async () => {
    for (const [method, url, payload] of routes()) {
      expectError(
        await t.app.inject({ method, url: `/v1${url}`, headers: customer.headers, payload }),
        403,
        'rest_forbidden',
      );
    }
  });

  it('a session cookie without the nonce is anonymous for writes', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/products',
      headers: { cookie: customer.headers.cookie },
      payload: { name: 'x', price: '1' },
    });
    expectError(res, 401, 'rest_not_logged_in');
  });

  it('none of the refused requests changed anything', async () => {
    const product = await t.app.inject({
      method: 'GET',
      url: `/v1/products/${productId}`,
      headers: t.adminAuth,
    });
    // The slug it was given at creation, from its name (docs/catalogue.md), not the refused one.
    expect(product.json()).toMatchObject({
      slug: expect.stringMatching(/^test-product-\d+$/),
      software_enabled: 'no',
    });
    expect(product.json().name).not.toBe('hijacked');
    const all = await t.app.inject({ method: 'GET', url: '/v1/products', headers: t.adminAuth });
    expect(all.headers['x-wp-total']).toBe('1');
    for (const url of ['/coupons', '/tax-rates', '/shipping-zones']) {
      expect((await t.app.inject({ method: 'GET', url: `/v1${url}`, headers: t.adminAuth })).json()).toEqual(
        [],
      );
    }
    const gateways = await t.app.inject({ method: 'GET', url: '/v1/payment-gateways', headers: t.adminAuth });
    expect(gateways.json()[0]).toMatchObject({ id: 'bacs', enabled: true });
  });
});
