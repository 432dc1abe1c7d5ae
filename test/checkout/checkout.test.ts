import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../src/modules/accounts/password.js';
import { Browser, createCoupon } from '../cart/helpers.js';
import {
  admin,
  adminOk,
  advanceClock,
  createTestApp,
  expectError,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import {
  BILLING,
  createOrder,
  createProduct,
  enableOfflineGateways,
  uniqueEmail,
} from '../helpers/factories.js';
import { expectBody, licensesOfOrder, orderCount, payOrder, submit } from './helpers.js';

let t: TestApp;
let verifier: Server;
let verifierUrl: string;
const verified: { type: string; body: string }[] = [];

beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  // Orders here are paid by bank transfer or cheque, which a new store starts without.
  await enableOfflineGateways(t);
  await setSettings(t, { checkout_rate_limit: 1000 });
  // A local stand-in for the CAPTCHA provider's siteverify endpoint.
  verifier = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      verified.push({ type: req.headers['content-type'] ?? '', body });
      const token =
        req.headers['content-type'] === 'application/json'
          ? (JSON.parse(body) as { response: string }).response
          : new URLSearchParams(body).get('response');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: token === 'good-token' }));
    });
  });
  await new Promise<void>((r) => verifier.listen(0, '127.0.0.1', r));
  verifierUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`;
});
afterAll(async () => {
  verifier.close();
  await t.close();
});

const billing = (extra: Record<string, unknown> = {}) => ({ ...BILLING, email: uniqueEmail(), ...extra });

describe('bootstrap', () => {
  it('answers no-store headers exactly and the bootstrap object for a guest', async () => {
    const p = await createProduct(t);
    const b = new Browser(t);
    await b.add(p.id, { quantity: 2 });
    const res = await b.get('/checkout/bootstrap');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store, no-cache, must-revalidate, max-age=0');
    expect(res.headers.pragma).toBe('no-cache');
    const body = res.json();
    expect(body).toMatchObject({
      ok: true,
      cart: { currency: 'USD', subtotal: '98.00', total: '98.00', needs_shipping: false },
      customer: { is_logged_in: false, id: 0 },
      currency: { base_currency: 'USD', currency: 'USD', symbol: '$', decimals: 2, rate: '1' },
      requires_shipping: false,
      is_digital_only: true,
      security: { captcha_provider: 'none', recaptcha_site_key: '', turnstile_site_key: '' },
      addresses: [],
    });
    expect(body.cart.items).toHaveLength(1);
    expect(body.countries.find((c: { code: string }) => c.code === 'DE')).toBeTruthy();
    expect(body.states.US.CA).toBe('California');
    expect(typeof body.default_country).toBe('string');
    expect(body.fields.some((f: { key: string }) => f.key.startsWith('shipping_'))).toBe(false);
    expect(body.nonce).toBeUndefined();
  });

  it('verifies a nonce only when one is sent, and gives a signed-in session its nonce', async () => {
    const email = uniqueEmail('boot');
    await adminOk(t, 'POST', '/users', { email, password: 'customer-password-1', role: 'customer' });
    const b = new Browser(t);
    await b.login(email, 'customer-password-1');
    const plain = await b.get('/checkout/bootstrap');
    expect(plain.json()).toMatchObject({ customer: { is_logged_in: true }, nonce: b.nonce });
    const good = await b.send('GET', '/checkout/bootstrap', undefined, {
      headers: { 'x-rest-nonce': b.nonce! },
    });
    expect(good.statusCode).toBe(200);
    const bad = await b.send('GET', '/checkout/bootstrap', undefined, {
      headers: { 'x-rest-nonce': 'wrong' },
    });
    expectError(bad, 403, 'rest_cookie_invalid_nonce');
    const guest = await new Browser(t).send('GET', '/checkout/bootstrap', undefined, {
      headers: { 'x-rest-nonce': 'x' },
    });
    expectError(guest, 403, 'rest_cookie_invalid_nonce');
  });
});

describe('quote, fields, countries, shipping rates', () => {
  it('quote prices with the totals engine (coupon, tax) and never changes the session', async () => {
    const p = await createProduct(t, { price: '30.00' });
    await adminOk(t, 'POST', '/tax-rates', {
      country: 'FR',
      rate: '20.0000',
      name: 'TVA',
      shipping: true,
      compound: false,
      priority: 1,
    });
    await createCoupon(t, { code: 'QUOTE10', discount_type: 'percent', amount: '10' });
    const b = new Browser(t);
    const before = await b.cart();
    const res = await b.post('/checkout/quote', {
      items: [{ product_id: p.id, variation_id: 0, qty: 2 }],
      billing: { country: 'FR', state: '', postcode: '75001' },
      coupons: ['quote10'],
    });
    expectBody(res, 200, {
      ok: true,
      items: [{ product_id: p.id, qty: 2, price: '30.00', line_total: '60.00' }],
      totals: {
        subtotal: '60.00',
        discount_total: '6.00',
        shipping_total: '0.00',
        tax_total: '10.80',
        grand_total: '64.80',
        currency: 'USD',
        currency_symbol: '$',
        decimals: 2,
      },
    });
    expect(await b.cart()).toEqual(before);
  });

  it('quote failures are {error} with HTTP 200', async () => {
    const b = new Browser(t);
    const none = await b.post('/checkout/quote', { items: [] });
    expect(none.statusCode).toBe(200);
    expect(none.json()).toEqual({ error: 'No items provided' });
    const missing = await b.post('/checkout/quote', { items: [{ product_id: 999999, qty: 1 }] });
    expect(missing.statusCode).toBe(200);
    expect(Object.keys(missing.json())).toEqual(['error']);
    const p = await createProduct(t);
    const coupon = await b.post('/checkout/quote', {
      items: [{ product_id: p.id, qty: 1 }],
      coupons: ['nope'],
    });
    expect(coupon.statusCode).toBe(200);
    expect(coupon.json().error).toEqual(expect.any(String));
  });

  it('fields: digital-only orders have no shipping address fields', async () => {
    const digital = (await new Browser(t).post('/checkout/fields', { is_digital_only: true })).json();
    expect(digital.ok).toBe(true);
    expect(digital.is_digital_only).toBe(true);
    expect(digital.fields.filter((f: { fieldset: string }) => f.fieldset === 'shipping')).toEqual([]);
    const physical = (await new Browser(t).post('/checkout/fields', { is_digital_only: false })).json();
    expect(physical.fields.some((f: { key: string }) => f.key === 'shipping_address_1')).toBe(true);
    for (const f of physical.fields) {
      expect(Object.keys(f).sort()).toEqual(
        [
          'class',
          'custom',
          'fieldset',
          'hidden',
          'key',
          'label',
          'placeholder',
          'priority',
          'required',
          'type',
        ].sort(),
      );
    }
  });

  it('countries are public: codes, names, states, default country', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/countries' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.countries.length).toBeGreaterThan(200);
    expect(body.states.CA.ON).toBe('Ontario');
    expect(body.default_country).toMatch(/^[A-Z]{2}$/);
  });

  it('shipping rates: flat_rate, free_shipping from its minimum, local_pickup', async () => {
    await adminOk(t, 'POST', '/shipping-zones', {
      name: 'Germany',
      regions: [{ country: 'DE' }],
      methods: [
        { method_id: 'flat_rate', title: 'Flat', cost: '5.00' },
        { method_id: 'free_shipping', title: 'Free', min_amount: '100.00' },
        { method_id: 'local_pickup', title: 'Pickup' },
      ],
    });
    const p = await createProduct(t, { virtual: false, price: '40.00' });
    const ask = (quantity: number) =>
      new Browser(t).post('/checkout/shipping-rates', {
        shipping: { country: 'DE', state: '', city: 'Berlin', postcode: '10115' },
        items: [{ product_id: p.id, quantity }],
      });
    const small = (await ask(1)).json();
    expect(small.zone_name).toBe('Germany');
    expect(small.rates.map((r: { method_id: string }) => r.method_id)).toEqual(['flat_rate', 'local_pickup']);
    expect(small.rates[0]).toEqual({
      id: 'flat_rate:1',
      label: 'Flat',
      cost: 5,
      method_id: 'flat_rate',
      instance_id: 1,
    });
    const big = (await ask(3)).json();
    expect(big.rates.map((r: { method_id: string }) => r.method_id)).toEqual([
      'flat_rate',
      'free_shipping',
      'local_pickup',
    ]);
  });
});

describe('submit', () => {
  it('answers the submit result and creates a pending checkout order with locked currency; the cart is emptied', async () => {
    const p = await createProduct(t);
    const b = new Browser(t);
    await b.add(p.id);
    const out = await createOrder(
      t,
      {
        items: [{ product_id: p.id, variation_id: 0, qty: 1, meta: [] }],
        billing: billing(),
      },
      b,
    );
    expect(out).toMatchObject({ ok: true, status: 'pending', user_logged_in: true });
    expect(out.order_key).toMatch(/^order_[0-9a-f]{32}$/);
    expect(out.pay_url).toContain(`/v1/checkout/pay-order/${out.order_id}?key=`);
    expect(out.thankyou_url).toContain(`/v1/checkout/order/${out.order_id}?key=`);
    const order = await adminOk<Record<string, unknown>>(t, 'GET', `/orders/${out.order_id}`);
    expect(order).toMatchObject({
      status: 'pending',
      created_via: 'checkout',
      currency: 'USD',
      exchange_rate: '1',
      total: '49.00',
    });
    expect((await b.cart()).items).toEqual([]);
  });

  it('submit without items: {error:"No items provided"}, nothing created', async () => {
    const n = await orderCount(t);
    const { res, body } = await submit(new Browser(t), { billing: billing() });
    expect(res.statusCode).toBe(400);
    expect(body.error).toBe('No items provided');
    expect(await orderCount(t)).toBe(n);
  });

  it('rate limits order attempts per IP and per email (checkout_rate_limit per 10 minutes)', async () => {
    await setSettings(t, { checkout_rate_limit: 2 });
    try {
      const p = await createProduct(t);
      // The counters are fixed 10-minute windows: start every attempt just inside a fresh one, so
      // a window that ends mid-test (as it did once, on a loaded machine) cannot reset them.
      const nowS = Math.floor(t.app.services.clock.now().getTime() / 1000);
      await advanceClock(t, 600 - (nowS % 600) + 1);
      const send = (ip: string, email: string) =>
        t.app.inject({
          method: 'POST',
          url: '/v1/checkout/submit',
          remoteAddress: ip,
          payload: {
            items: [{ product_id: p.id, qty: 1 }],
            billing: billing({ email }),
            payment_method: 'test_card',
          },
        });
      const email = uniqueEmail('rl');
      expect((await send('10.9.0.1', email)).statusCode).toBe(200);
      expect((await send('10.9.0.2', email)).statusCode).toBe(200);
      const byEmail = await send('10.9.0.3', email);
      expect(byEmail.statusCode).toBe(429);
      expect(byEmail.json().error).toMatch(/too many orders/i);
      expect((await send('10.9.0.4', uniqueEmail('rl'))).statusCode).toBe(200);
      expect((await send('10.9.0.4', uniqueEmail('rl'))).statusCode).toBe(200);
      expect((await send('10.9.0.4', uniqueEmail('rl'))).statusCode).toBe(429);
    } finally {
      await setSettings(t, { checkout_rate_limit: 1000 });
    }
  });

  it('CAPTCHA: missing or failed tokens are captcha_missing; Turnstile JSON and reCAPTCHA form shapes', async () => {
    const p = await createProduct(t);
    const items = [{ product_id: p.id, qty: 1 }];
    for (const provider of ['turnstile', 'recaptcha'] as const) {
      await setSettings(t, {
        captcha_provider: provider,
        captcha_secret: 's3cret',
        captcha_verify_url: verifierUrl,
      });
      try {
        const missing = await submit(new Browser(t), { items, billing: billing() });
        expect(missing.res.statusCode).toBe(403);
        expect(missing.body).toMatchObject({ ok: false, error_code: 'captcha_missing' });
        const bad = await submit(new Browser(t), { items, billing: billing(), captcha_token: 'bad-token' });
        expect(bad.body.error_code).toBe('captcha_missing');
        const good = await submit(new Browser(t), { items, billing: billing(), captcha_token: 'good-token' });
        expect(good.body.ok, JSON.stringify(good.body)).toBe(true);
        const last = verified.at(-1)!;
        if (provider === 'turnstile') {
          expect(last.type).toBe('application/json');
          expect(JSON.parse(last.body)).toMatchObject({ secret: 's3cret', response: 'good-token' });
        } else {
          expect(last.type).toBe('application/x-www-form-urlencoded');
          expect(new URLSearchParams(last.body).get('secret')).toBe('s3cret');
        }
      } finally {
        await setSettings(t, { captcha_provider: 'none', captcha_verify_url: '' });
      }
    }
  });

  it('refuses a guest subscription purchase (login required)', async () => {
    const s = await createProduct(t, {
      type: 'subscription',
      subscription: { period: 'month', interval: 1 },
    });
    const n = await orderCount(t);
    const { res, body } = await submit(new Browser(t), {
      items: [{ product_id: s.id, qty: 1 }],
      billing: billing(),
    });
    expect(res.statusCode).toBe(401);
    expect(body.error).toMatch(/logged in/i);
    expect(await orderCount(t)).toBe(n);
  });

  it('currency checks: currency_rate_stale and currency_gateway_mismatch; the rate is locked on the order', async () => {
    const p = await createProduct(t, { price: '10.00' });
    const items = [{ product_id: p.id, qty: 1 }];
    const old = new Date(Date.now() - 3 * 86400_000).toISOString();
    await setSettings(t, {
      currencies: [
        { code: 'EUR', symbol: '€', decimals: 2, rate: '0.9', rate_updated_at: new Date().toISOString() },
        { code: 'GBP', symbol: '£', decimals: 2, rate: '0.8', rate_updated_at: old },
      ],
    });
    const stale = await new Browser(t).send('POST', '/checkout/submit?currency=GBP', {
      items,
      billing: billing(),
      payment_method: 'test_card',
    });
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toMatchObject({ error_code: 'currency_rate_stale' });
    await adminOk(t, 'PATCH', '/payment-gateways/cheque', { currencies: ['USD'] });
    const mismatch = await new Browser(t).send('POST', '/checkout/submit?currency=EUR', {
      items,
      billing: billing(),
      payment_method: 'cheque',
    });
    expect(mismatch.json()).toMatchObject({ error_code: 'currency_gateway_mismatch' });
    const ok = await new Browser(t).send('POST', '/checkout/submit?currency=EUR', {
      items,
      billing: billing(),
      payment_method: 'test_card',
    });
    const order = await adminOk<Record<string, unknown>>(t, 'GET', `/orders/${ok.json().order_id}`);
    expect(order).toMatchObject({ currency: 'EUR', exchange_rate: '0.9', total: '9.00' });
    await adminOk(t, 'PATCH', '/payment-gateways/cheque', { currencies: [] });
    await setSettings(t, { currencies: [] });
  });

  it('a coupon failing on the persisted order deletes it (coupon_failed) and keeps the cart', async () => {
    const p = await createProduct(t, { price: '20.00' });
    await createCoupon(t, {
      code: 'ONCEEACH',
      discount_type: 'fixed_cart',
      amount: '5',
      usage_limit_per_user: 1,
    });
    const email = uniqueEmail('coupon');
    await createOrder(t, {
      items: [{ product_id: p.id, qty: 1 }],
      billing: billing({ email }),
      coupons: ['ONCEEACH'],
    });
    const n = await orderCount(t);
    const b = new Browser(t);
    await b.add(p.id);
    const { res, body } = await submit(b, {
      items: [{ product_id: p.id, qty: 1 }],
      billing: billing({ email }),
      coupons: ['onceeach'],
    });
    expect(res.statusCode).toBe(409);
    expect(body.error_code).toBe('coupon_failed');
    expect(await orderCount(t)).toBe(n);
    expect((await b.cart()).items).toHaveLength(1);
  });

  it('auto-registration: a new email gets an account and a session; an existing one is linked without login', async () => {
    const p = await createProduct(t);
    const email = uniqueEmail('auto');
    const b = new Browser(t);
    const first = await createOrder(
      t,
      { items: [{ product_id: p.id, qty: 1 }], billing: billing({ email }) },
      b,
    );
    expect(first.user_logged_in).toBe(true);
    expect(first.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(b.cookies.has('tollgate_session')).toBe(true);
    const me = await b.get('/auth/me');
    expect(me.json().user.email).toBe(email);
    const second = await createOrder(t, {
      items: [{ product_id: p.id, qty: 1 }],
      billing: billing({ email }),
    });
    expect(second.user_logged_in).toBe(false);
    const o1 = await adminOk<{ customer_id: number }>(t, 'GET', `/orders/${first.order_id}`);
    const o2 = await adminOk<{ customer_id: number }>(t, 'GET', `/orders/${second.order_id}`);
    expect(o2.customer_id).toBe(o1.customer_id);
    const boot = (await b.get('/checkout/bootstrap')).json();
    expect(boot.addresses[0]).toMatchObject({ type: 'billing', email, city: 'London' });
  });

  it('auto-registration: the account has no password until one is set (a scrypt-shaped hash nothing matches)', async () => {
    const p = await createProduct(t);
    const email = uniqueEmail('nopass');
    await createOrder(
      t,
      { items: [{ product_id: p.id, qty: 1 }], billing: billing({ email }) },
      new Browser(t),
    );
    const user = await t.app.services.database.db
      .selectFrom('users')
      .select('password_hash')
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    expect(user.password_hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(await verifyPassword('', user.password_hash)).toBe(false);
    const login = await new Browser(t).post('/auth/login', { email, password: 'a guess at a password' });
    expect(login.statusCode).not.toBe(200);
  });

  it('Idempotency-Key: a retried submit answers the first order', async () => {
    const p = await createProduct(t);
    const b = new Browser(t);
    const body = { items: [{ product_id: p.id, qty: 1 }], billing: billing() };
    const one = await submit(b, body, { 'idempotency-key': 'retry-abc' });
    const two = await submit(b, body, { 'idempotency-key': 'retry-abc' });
    expect(two.body.order_id).toBe(one.body.order_id);
    expect(two.body.order_key).toBe(one.body.order_key);
  });

  it("an unknown or unpublished product is 404 invalid_product, the cart's status; nothing is created", async () => {
    const draft = await createProduct(t, { status: 'draft' });
    const n = await orderCount(t);
    for (const productId of [999999, draft.id]) {
      const { res, body } = await submit(new Browser(t), {
        items: [{ product_id: productId, qty: 1 }],
        billing: billing(),
      });
      expect(res.statusCode, res.body).toBe(404);
      expect(body).toMatchObject({ error_code: 'invalid_product' });
    }
    expect(await orderCount(t)).toBe(n);
  });

  it('stock is held at order creation and given back when the order is cancelled', async () => {
    const p = await createProduct(t, { stock_quantity: 2 });
    const out = await createOrder(t, { items: [{ product_id: p.id, qty: 2 }], billing: billing() });
    expect((await adminOk<{ stock_quantity: number }>(t, 'GET', `/products/${p.id}`)).stock_quantity).toBe(0);
    const again = await submit(new Browser(t), { items: [{ product_id: p.id, qty: 1 }], billing: billing() });
    expect(again.res.statusCode).toBe(409);
    expect(again.body.error_code).toBe('out_of_stock');
    await adminOk(t, 'POST', `/orders/${out.order_id}/status`, { status: 'cancelled' });
    expect((await adminOk<{ stock_quantity: number }>(t, 'GET', `/products/${p.id}`)).stock_quantity).toBe(2);
  });

  it('bad input is a specific 4xx and creates nothing', async () => {
    const n = await orderCount(t);
    const b = new Browser(t);
    expectError(await b.post('/checkout/submit', '{not json'), 400, 'rest_invalid_json');
    expectError(
      await b.post('/checkout/submit', { items: [{ product_id: 'x' }] }),
      400,
      'rest_invalid_param',
    );
    expectError(await b.post('/checkout/submit', { items: [], surprise: 1 }), 400, 'invalid_parameters');
    expectError(
      await b.post('/checkout/submit', { items: [{ product_id: 1, qty: 0 }] }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await b.post('/checkout/submit', { billing: { email: 'not-an-email' } }),
      400,
      'rest_invalid_param',
    );
    expectError(await b.post('/checkout/quote', { items: 'x' }), 400, 'rest_invalid_param');
    expectError(await b.post('/checkout/fields', { is_digital_only: 'yes' }), 400, 'rest_invalid_param');
    expectError(await b.post('/checkout/shipping-rates', { items: [] }), 400, 'rest_missing_param');
    expectError(await b.post('/checkout/pay-order/1', {}), 400, 'rest_missing_param');
    expectError(await b.get('/checkout/order/abc'), 400, 'rest_invalid_param');
    expectError(
      await b.send('POST', '/checkout/submit?currency=XYZ', { items: [] }),
      400,
      'invalid_currency',
    );
    expect(await orderCount(t)).toBe(n);
  });
});

describe('receipt and pay-order', () => {
  it('receipt: key, owner or administrator; otherwise exactly {error} with HTTP 200', async () => {
    const p = await createProduct(t);
    const b = new Browser(t);
    const out = await createOrder(t, { items: [{ product_id: p.id, qty: 1 }], billing: billing() }, b);
    const byKey = await new Browser(t).get(`/checkout/order/${out.order_id}?key=${out.order_key}`);
    expect(byKey.json()).toMatchObject({
      ok: true,
      id: out.order_id,
      number: String(out.order_id),
      status: 'pending',
      created_via: 'checkout',
      total: 49,
      currency: 'USD',
      payment_method: 'Card (test gateway)',
      subscription: null,
      items: [{ product_id: p.id, qty: 1, price: 49, total: 49 }],
    });
    expect(byKey.json().available_gateways.map((g: { id: string }) => g.id)).toContain('test_card');
    const byOwner = await b.get(`/checkout/order/${out.order_id}`);
    expect(byOwner.json().ok).toBe(true);
    const byAdmin = await admin(t, 'GET', `/checkout/order/${out.order_id}`);
    expect(byAdmin.json().ok).toBe(true);
    for (const url of [
      `/checkout/order/${out.order_id}?key=wrong`,
      `/checkout/order/${out.order_id}`,
      '/checkout/order/999999?key=x',
    ]) {
      const res = await new Browser(t).get(url);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ error: 'Unauthorized access to order' });
    }
  });

  it('pay-order rules: access, already paid, original gateway, declined card', async () => {
    const p = await createProduct(t);
    const out = await createOrder(t, { items: [{ product_id: p.id, qty: 1 }], billing: billing() });
    const stranger = new Browser(t);
    const denied = await payOrder(stranger, out.order_id, { payment_method: 'test_card' });
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({
      error: 'Unauthorized access to order',
      messages: [expect.any(String)],
    });
    const wrong = await payOrder(stranger, out.order_id, { key: out.order_key, payment_method: 'bacs' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error).toMatch(/original/i);
    const declined = await payOrder(stranger, out.order_id, {
      key: out.order_key,
      payment_method: 'test_card',
      payment_data: { card_number: '4000000000000002' },
    });
    expect(declined.statusCode).toBe(402);
    expect(declined.json()).toMatchObject({ error: expect.any(String), messages: [expect.any(String)] });
    expect((await adminOk<{ status: string }>(t, 'GET', `/orders/${out.order_id}`)).status).toBe('failed');
    expect(await licensesOfOrder(t, out.order_id)).toEqual([]);
    const paid = await payOrder(stranger, out.order_id, {
      key: out.order_key,
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    });
    expectBody(paid, 200, { ok: true, redirect: out.thankyou_url });
    expect((await adminOk<{ status: string }>(t, 'GET', `/orders/${out.order_id}`)).status).toBe(
      'processing',
    );
    const again = await payOrder(stranger, out.order_id, {
      key: out.order_key,
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatch(/already been paid/i);
    expect(await licensesOfOrder(t, out.order_id)).toHaveLength(1);
  });

  it('offline gateways put the order on-hold; the administrator moving it to processing issues the license', async () => {
    const p = await createProduct(t);
    const out = await createOrder(t, {
      items: [{ product_id: p.id, qty: 1 }],
      billing: billing(),
      payment_method: 'bacs',
    });
    const res = await payOrder(new Browser(t), out.order_id, { key: out.order_key, payment_method: 'bacs' });
    expectBody(res, 200, { ok: true, redirect: out.thankyou_url });
    expect((await adminOk<{ status: string }>(t, 'GET', `/orders/${out.order_id}`)).status).toBe('on-hold');
    expect(await licensesOfOrder(t, out.order_id)).toEqual([]);
    await adminOk(t, 'POST', `/orders/${out.order_id}/status`, { status: 'processing' });
    expect(await licensesOfOrder(t, out.order_id)).toHaveLength(1);
  });
});
