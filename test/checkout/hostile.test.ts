import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { admin, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { BILLING, createOrder, createProduct, uniqueEmail } from '../helpers/factories.js';
import { orderCount, submit } from './helpers.js';

let t: TestApp;
let productId: number;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { checkout_rate_limit: 1000 });
  productId = (await createProduct(t, { price: '10.00' })).id;
});
afterAll(async () => t.close());

const items = () => [{ product_id: productId, qty: 1 }];

describe('hostile strings on checkout routes', () => {
  it('SQL metacharacters and path-like text are stored as plain text, harmlessly', async () => {
    const b = new Browser(t);
    const name = "Robert'); DROP TABLE orders; --";
    const out = await createOrder(
      t,
      {
        items: items(),
        billing: { ...BILLING, email: uniqueEmail(), first_name: name, address_1: '../../etc/passwd' },
      },
      b,
    );
    const receipt = await b.get(`/checkout/order/${out.order_id}?key=${out.order_key}`);
    expect(receipt.json().billing.first_name).toBe(name);
    // The table is still there and still counts.
    expect(await orderCount(t)).toBeGreaterThan(0);
  });

  it.each([
    ['header injection in a name', { first_name: 'Eve\r\nSet-Cookie: admin=1' }],
    ['a NUL byte', { last_name: 'Mallory\u0000' }],
    ['a 10 kB name', { first_name: 'x'.repeat(10_000) }],
    ['a country that is not a code', { country: "GB' OR '1'='1" }],
  ])('refuses %s with 400 rest_invalid_param and creates nothing', async (_label, extra) => {
    const before = await orderCount(t);
    const { res } = await submit(new Browser(t), {
      items: items(),
      billing: { ...BILLING, email: uniqueEmail(), ...extra },
    });
    expectError(res, 400, 'rest_invalid_param');
    expect(await orderCount(t)).toBe(before);
  });

  it('a body over the limit is 413 and creates nothing', async () => {
    const before = await orderCount(t);
    const { res } = await submit(new Browser(t), {
      items: items(),
      billing: { ...BILLING, email: uniqueEmail() },
      customer_note: 'n'.repeat(2 * 1024 * 1024),
    });
    expectError(res, 413, 'rest_body_too_large');
    expect(await orderCount(t)).toBe(before);
  });

  it('order and subscription administration refuse hostile status values', async () => {
    expectError(
      await admin(t, 'POST', '/orders/1/status', { status: "processing'; DROP TABLE orders; --" }),
      400,
      'rest_invalid_param',
    );
    expectError(await admin(t, 'GET', '/orders/1%27%20OR%201=1'), 400, 'rest_invalid_param');
    expectError(
      await admin(t, 'POST', '/subscriptions/1/status', { status: 'active', reason: 'x\r\ny' }),
      400,
      'rest_invalid_param',
    );
  });
});
