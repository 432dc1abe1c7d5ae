import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { createProduct } from '../helpers/factories.js';
import { Browser, createCoupon } from './helpers.js';

/**
 * Malformed JSON, wrong types, unknown fields, absurd lengths and hostile strings: every route
 * answers with a specific 4xx and the cart stays exactly as it was.
 */

let t: TestApp;
let b: Browser;
let key: string;
let variableId: number;
beforeAll(async () => {
  t = await createTestApp();
  b = new Browser(t);
  const p = await createProduct(t, { price: '12.00' });
  key = (await b.add(p.id, { quantity: 2 })).cart_item_key;
  await createCoupon(t, { code: 'applied', discount_type: 'percent', amount: '10' });
  await b.post('/cart/apply-coupon', { coupon_code: 'applied' });
  variableId = (
    await createProduct(t, {
      type: 'variable',
      variations: [{ name: 'One', price: '1.00', attributes: { Size: 'S' } }],
    })
  ).id;
});
afterAll(async () => t.close());

const SQL = "'; DROP TABLE carts; --";
const HTML = '<script>alert(1)</script>';
const LONG = 'x'.repeat(10 * 1024);
const CONTROL = 'abc\u0000def';

/** A well-formed body per route, so only the query string is at fault. */
const VALID: Record<string, unknown> = {
  '/cart/add': { product_id: 1 },
  '/cart/update': { cart_item_key: 'k', quantity: 1 },
  '/cart/remove': { cart_item_key: 'k' },
  '/cart/clear': {},
  '/cart/apply-coupon': { coupon_code: 'x' },
  '/cart/remove-coupon': { coupon_code: 'x' },
};

type Row = [label: string, body: unknown, status: number, code: string];

const common = (route: string): Row[] => [
  [`${route}: malformed JSON`, '{"product_id": 1,', 400, 'rest_invalid_json'],
  [`${route}: a JSON array`, '[]', 400, 'rest_invalid_param'],
  [`${route}: a __proto__ key`, '{"__proto__": {"polluted": true}}', 400, 'rest_invalid_json'],
];

const routes: Record<string, Row[]> = {
  '/cart/add': [
    ...common('add'),
    ['missing product_id', {}, 400, 'rest_missing_param'],
    ['product_id as a string', { product_id: '1' }, 400, 'rest_invalid_param'],
    ['product_id as a float', { product_id: 1.5 }, 400, 'rest_invalid_param'],
    ['product_id beyond 32 bits', { product_id: 2 ** 40 }, 400, 'rest_invalid_param'],
    ['quantity 0', { product_id: 1, quantity: 0 }, 400, 'rest_invalid_param'],
    ['quantity negative', { product_id: 1, quantity: -3 }, 400, 'rest_invalid_param'],
    ['quantity absurd', { product_id: 1, quantity: 1e9 }, 400, 'rest_invalid_param'],
    ['quantity as a string', { product_id: 1, quantity: '2' }, 400, 'rest_invalid_param'],
    ['variation_id negative', { product_id: 1, variation_id: -1 }, 400, 'rest_invalid_param'],
    ['variation as a string', { product_id: 1, variation: 'size=S' }, 400, 'rest_invalid_param'],
    [
      'variation value as a number',
      { product_id: 1, variation: { attribute_size: 5 } },
      400,
      'rest_invalid_param',
    ],
    ['unknown field', { product_id: 1, coupon: 'x' }, 400, 'invalid_parameters'],
    ['attribute value of 10 KB', { product_id: 1, attribute_size: LONG }, 400, 'rest_invalid_param'],
    ['attribute value with a NUL', { product_id: 1, attribute_size: CONTROL }, 400, 'rest_invalid_param'],
    [
      'too many attributes',
      {
        product_id: 1,
        ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`attribute_a${i}`, 'x'])),
      },
      400,
      'rest_invalid_param',
    ],
  ],
  '/cart/update': [
    ...common('update'),
    ['missing quantity', { cart_item_key: 'k' }, 400, 'rest_missing_param'],
    ['missing key', { quantity: 1 }, 400, 'rest_missing_param'],
    ['quantity as a string', { cart_item_key: 'k', quantity: '3' }, 400, 'rest_invalid_param'],
    ['quantity negative', { cart_item_key: 'k', quantity: -1 }, 400, 'rest_invalid_param'],
    ['quantity absurd', { cart_item_key: 'k', quantity: 10_000 }, 400, 'rest_invalid_param'],
    ['key as a number', { cart_item_key: 5, quantity: 1 }, 400, 'rest_invalid_param'],
    ['unknown field', { cart_item_key: 'k', quantity: 1, price: '0.01' }, 400, 'invalid_parameters'],
    ['key of 10 KB', { cart_item_key: LONG, quantity: 1 }, 400, 'rest_invalid_param'],
    ['key with a NUL', { cart_item_key: CONTROL, quantity: 1 }, 400, 'rest_invalid_param'],
    ['key in SQL', { cart_item_key: SQL, quantity: 1 }, 400, 'update_failed'],
    ['key in HTML', { cart_item_key: HTML, quantity: 0 }, 400, 'update_failed'],
  ],
  '/cart/remove': [
    ...common('remove'),
    ['missing key', {}, 400, 'rest_missing_param'],
    ['key as an object', { cart_item_key: { $ne: '' } }, 400, 'rest_invalid_param'],
    ['unknown field', { cart_item_key: 'k', all: true }, 400, 'invalid_parameters'],
    ['key of 10 KB', { cart_item_key: LONG }, 400, 'rest_invalid_param'],
    ['key with a NUL', { cart_item_key: CONTROL }, 400, 'rest_invalid_param'],
    ['key in SQL', { cart_item_key: SQL }, 404, 'item_not_found'],
    ['key in HTML', { cart_item_key: HTML }, 404, 'item_not_found'],
  ],
  '/cart/clear': [
    ...common('clear'),
    ['unknown field', { everything: true }, 400, 'invalid_parameters'],
    ['hostile field name', { [SQL]: 1 }, 400, 'invalid_parameters'],
  ],
  '/cart/apply-coupon': [
    ...common('apply-coupon'),
    ['code as a number', { coupon_code: 10 }, 400, 'rest_invalid_param'],
    ['code as an array', { coupon_code: ['a', 'b'] }, 400, 'rest_invalid_param'],
    ['unknown field', { coupon_code: 'x', amount: '100' }, 400, 'invalid_parameters'],
    ['code of 10 KB', { coupon_code: LONG }, 400, 'rest_invalid_param'],
    ['code with a NUL', { coupon_code: CONTROL }, 400, 'rest_invalid_param'],
    ['code in SQL', { coupon_code: SQL }, 400, 'coupon_failed'],
    ['code in HTML', { coupon_code: HTML }, 400, 'coupon_failed'],
    ['code with a wildcard', { coupon_code: '%' }, 400, 'coupon_failed'],
  ],
  '/cart/remove-coupon': [
    ...common('remove-coupon'),
    ['code as a boolean', { coupon_code: true }, 400, 'rest_invalid_param'],
    ['unknown field', { coupon_code: 'applied', all: true }, 400, 'invalid_parameters'],
    ['code of 10 KB', { coupon_code: LONG }, 400, 'rest_invalid_param'],
    ['code with a NUL', { coupon_code: CONTROL }, 400, 'rest_invalid_param'],
    ['code in SQL', { coupon_code: SQL }, 400, 'coupon_not_applied'],
    ['code as a LIKE pattern', { coupon_code: 'app%' }, 400, 'coupon_not_applied'],
  ],
};

describe('bad input changes nothing', () => {
  for (const [route, rows] of Object.entries(routes)) {
    describe(route, () => {
      for (const [label, body, status, code] of rows) {
        it(`${label}: ${status} ${code}`, async () => {
          const before = await b.cart();
          expectError(await b.post(route, body), status, code);
          expect(await b.cart()).toEqual(before);
          expect(before.items.map((i) => i.key)).toEqual([key]);
          expect(before.coupons.map((c) => c.code)).toEqual(['applied']);
        });
      }
    });
  }

  it('hostile strings on a variable product are refused as a bad choice: 400 add_to_cart_failed', async () => {
    for (const value of [SQL, HTML, '../../etc/passwd']) {
      const before = await b.cart();
      expectError(
        await b.post('/cart/add', { product_id: variableId, attribute_size: value }),
        400,
        'add_to_cart_failed',
      );
      expectError(
        await b.post('/cart/add', { product_id: variableId, variation: { [`attribute_${value}`]: 'S' } }),
        400,
        'add_to_cart_failed',
      );
      expect(await b.cart()).toEqual(before);
    }
  });

  it('a body that is not JSON is 415 on every route', async () => {
    for (const route of Object.keys(routes)) {
      const before = await b.cart();
      const res = await t.app.inject({
        method: 'POST',
        url: `/v1${route}`,
        headers: { cookie: b.cookieHeader(), 'content-type': 'text/plain' },
        payload: 'product_id=1',
      });
      expectError(res, 415, 'rest_unsupported_media_type');
      expect(await b.cart()).toEqual(before);
    }
  });

  it('a hostile or absurd currency is 400 invalid_currency on every route', async () => {
    const before = await b.cart();
    for (const currency of [
      encodeURIComponent(SQL),
      'EU',
      'EURO',
      encodeURIComponent(LONG),
      '%00%00%00',
      'XXX',
    ]) {
      expectError(await b.get(`/cart?currency=${currency}`), 400, 'invalid_currency');
      for (const [route, body] of Object.entries(VALID)) {
        expectError(await b.post(`${route}?currency=${currency}`, body), 400, 'invalid_currency');
      }
    }
    expect(b.cookies.has('tollgate_currency')).toBe(false);
    expect(await b.cart()).toEqual(before);
  });

  it('a forged or hostile cart cookie just starts a new session', async () => {
    for (const value of ['0'.repeat(64), SQL.replace(/[;\s]/g, ''), 'f'.repeat(10_000)]) {
      const other = new Browser(t);
      other.cookies.set('tollgate_cart', encodeURIComponent(value));
      const res = await other.get();
      expect(res.statusCode).toBe(200);
      expect(res.json().items).toEqual([]);
    }
    const tables = await t.db.database.db.selectFrom('carts').select('id').execute();
    expect(tables.length).toBeGreaterThan(0);
  });
});
