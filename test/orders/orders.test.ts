import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { licensesOfOrder, payOrder } from '../checkout/helpers.js';
import { admin, adminOk, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import {
  BILLING,
  createOrder,
  createProduct,
  enableOfflineGateways,
  identity,
  uniqueEmail,
} from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  // Orders here are paid by bank transfer or cheque, which a new store starts without.
  await enableOfflineGateways(t);
  await setSettings(t, { checkout_rate_limit: 1000 });
});
afterAll(async () => t.close());

const order = (items: unknown[], extra: Record<string, unknown> = {}) =>
  createOrder(t, {
    items,
    billing: { ...BILLING, email: uniqueEmail('ord') },
    payment_method: 'bacs',
    ...extra,
  });

describe('license issuance on payment', () => {
  it('entering processing or completed issues one license per licensed line, exactly once', async () => {
    const licensed = await createProduct(t, { activation_limit: 3 });
    const unlimited = await createProduct(t, { activation_limit: 0 });
    const free = await createProduct(t, { licensing_enabled: 'no' });
    const variable = await createProduct(t, {
      type: 'variable',
      activation_limit: 5,
      entitlement_policy: { usage: { mode: 'lifetime' }, updates: { mode: 'days', days: 365 } },
      variations: [
        { name: 'Agency', price: '99.00', attributes: { Sites: 'many' }, activation_limit: 10 },
        { name: 'Single', price: '29.00', attributes: { Sites: 'one' }, activation_limit: '' },
      ],
    });
    const [agency, single] = variable.variations;
    const out = await order([
      { product_id: licensed.id, qty: 2 },
      { product_id: unlimited.id, qty: 4 },
      { product_id: free.id, qty: 1 },
      { product_id: variable.id, variation_id: agency!.id, qty: 1 },
      { product_id: variable.id, variation_id: single!.id, qty: 3 },
    ]);
    for (const status of ['processing', 'on-hold', 'completed', 'processing', 'completed']) {
      await adminOk(t, 'POST', `/orders/${out.order_id}/status`, { status });
    }
    const licenses = await licensesOfOrder(t, out.order_id);
    expect(licenses).toHaveLength(4);
    const o = await adminOk<{
      customer_id: number;
      items: { id: number; product_id: number; variation_id: number }[];
    }>(t, 'GET', `/orders/${out.order_id}`);
    const byItem = (pid: number, vid = 0) => {
      const item = o.items.find((i) => i.product_id === pid && i.variation_id === vid)!;
      return licenses.find((l) => l.order_item_id === item.id)!;
    };
    expect(byItem(licensed.id).activation_limit).toBe(6);
    expect(byItem(unlimited.id).activation_limit).toBe(0);
    expect(byItem(variable.id, agency!.id).activation_limit).toBe(10);
    expect(byItem(variable.id, single!.id).activation_limit).toBe(15);
    for (const l of licenses) {
      expect(l.user_id).toBe(o.customer_id);
      expect(l.order_id).toBe(out.order_id);
    }
    expect(JSON.parse(byItem(variable.id, agency!.id).entitlement_policy!).updates).toEqual({
      mode: 'days',
      days: 365,
    });
    expect(byItem(licensed.id).entitlement_policy).toBeNull();
  });

  it('admin order routes: list by customer and status, bad status, unknown order, administrators only', async () => {
    const p = await createProduct(t);
    const out = await order([{ product_id: p.id, qty: 1 }]);
    const o = await adminOk<{ customer_id: number }>(t, 'GET', `/orders/${out.order_id}`);
    const list = await adminOk<{ id: number }[]>(
      t,
      'GET',
      `/orders?customer_id=${o.customer_id}&status=pending`,
    );
    expect(list.map((x) => x.id)).toContain(out.order_id);
    expect(
      await adminOk<unknown[]>(t, 'GET', `/orders?customer_id=${o.customer_id}&status=completed`),
    ).toEqual([]);
    expectError(
      await admin(t, 'POST', `/orders/${out.order_id}/status`, { status: 'shipped' }),
      400,
      'rest_invalid_param',
    );
    expectError(await admin(t, 'POST', `/orders/${out.order_id}/status`, {}), 400, 'rest_missing_param');
    expectError(await admin(t, 'GET', '/orders/999999'), 404, 'order_not_found');
    expectError(
      await t.app.inject({ method: 'GET', url: `/v1/orders/${out.order_id}` }),
      401,
      'rest_not_logged_in',
    );
    expect((await adminOk<{ status: string }>(t, 'GET', `/orders/${out.order_id}`)).status).toBe('pending');
  });
});

describe('end to end', () => {
  it('empty cart → add → submit → test_card payment → license issued → activation', async () => {
    const p = await createProduct(t, { activation_limit: 1 });
    const b = new Browser(t);
    expect((await b.cart()).items).toEqual([]);
    await b.add(p.id);
    const boot = (await b.get('/checkout/bootstrap')).json();
    const items = boot.cart.items.map(
      (i: { product_id: number; variation_id: number; quantity: number }) => ({
        product_id: i.product_id,
        variation_id: i.variation_id,
        qty: i.quantity,
      }),
    );
    const quote = (await b.post('/checkout/quote', { items, billing: { country: 'GB' } })).json();
    expect(quote.totals.grand_total).toBe('49.00');
    const out = await createOrder(t, { items, billing: { ...BILLING, email: uniqueEmail('e2e') } }, b);
    const pay = await payOrder(b, out.order_id, {
      key: out.order_key,
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    });
    expect(pay.json()).toEqual({ ok: true, redirect: out.thankyou_url });
    const receipt = (await b.get(out.thankyou_url.replace(/^.*\/v1/, ''))).json();
    expect(receipt.status).toBe('processing');
    const [license] = await licensesOfOrder(t, out.order_id);
    expect(license).toBeTruthy();
    // The new customer sees the license and activates it on a site.
    const mine = await b.get('/account/licenses');
    expect(mine.statusCode).toBe(200);
    const activation = await t.app.inject({
      method: 'POST',
      url: '/v1/licenses/activate',
      payload: { license_key: license!.license_key, ...identity('shop.example.com') },
    });
    expect(activation.statusCode, activation.body).toBe(200);
    const second = await t.app.inject({
      method: 'POST',
      url: '/v1/licenses/activate',
      payload: { license_key: license!.license_key, ...identity('other.example.com') },
    });
    expectError(second, 403, 'activation_limit_reached');
  });
});
