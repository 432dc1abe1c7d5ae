import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { createProduct } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const SQL = "'; DROP TABLE coupons; --";
const TEN_KB = 'x'.repeat(10 * 1024);

const count = async () => Number((await admin(t, 'GET', '/coupons?per_page=1')).headers['x-wp-total']);

describe('coupons', () => {
  it('creates a coupon with every field, code stored lower-case', async () => {
    const a = await createProduct(t);
    const b = await createProduct(t);
    const res = await admin(t, 'POST', '/coupons', {
      code: 'Spring-SALE',
      discount_type: 'fixed_cart',
      amount: '10',
      expires_at: '2030-01-31T23:59:59+02:00',
      usage_limit: 100,
      usage_limit_per_user: 1,
      minimum_amount: '20',
      maximum_amount: '500.5',
      individual_use: true,
      product_ids: [a.id],
      excluded_product_ids: [b.id],
      currency: 'EUR',
      free_shipping: true,
    });
    expect(res.statusCode).toBe(201);
    const coupon = res.json();
    expect(coupon).toEqual({
      id: expect.any(Number),
      code: 'spring-sale',
      discount_type: 'fixed_cart',
      amount: '10.00',
      expires_at: '2030-01-31T21:59:59.000Z',
      usage_limit: 100,
      usage_limit_per_user: 1,
      usage_count: 0,
      minimum_amount: '20.00',
      maximum_amount: '500.50',
      individual_use: true,
      product_ids: [a.id],
      excluded_product_ids: [b.id],
      currency: 'EUR',
      free_shipping: true,
      created_at: expect.any(String),
    });
    expect((await admin(t, 'GET', `/coupons/${coupon.id}`)).json()).toEqual(coupon);
    expect(await t.app.services.catalogue.coupons.getByCode('  SPRING-sale ')).toEqual(coupon);
  });

  it('defaults the optional fields', async () => {
    const res = await admin(t, 'POST', '/coupons', {
      code: 'plain',
      discount_type: 'percent',
      amount: '12.5',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      amount: '12.5000',
      expires_at: null,
      usage_limit: null,
      minimum_amount: null,
      individual_use: false,
      product_ids: [],
      currency: null,
      free_shipping: false,
    });
  });

  it('a code is unique whatever its case: 409 coupon_exists', async () => {
    await admin(t, 'POST', '/coupons', { code: 'once', discount_type: 'percent', amount: '5' });
    const before = await count();
    expectError(
      await admin(t, 'POST', '/coupons', { code: 'ONCE', discount_type: 'fixed_cart', amount: '5' }),
      409,
      'coupon_exists',
    );
    expect(await count()).toBe(before);
    const other = (
      await admin(t, 'POST', '/coupons', { code: 'twice', discount_type: 'percent', amount: '5' })
    ).json();
    expectError(await admin(t, 'PATCH', `/coupons/${other.id}`, { code: 'Once' }), 409, 'coupon_exists');
    expect((await admin(t, 'GET', `/coupons/${other.id}`)).json().code).toBe('twice');
  });

  it('concurrent creates of one code: exactly one wins', async () => {
    const results = await Promise.all(
      [1, 2, 3, 4].map(() =>
        admin(t, 'POST', '/coupons', { code: 'RACE', discount_type: 'percent', amount: '1' }),
      ),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
  });

  it('checks amounts: percent 0 to 100, money in the currency decimals, minimum not above maximum', async () => {
    const before = await count();
    const cases: [Record<string, unknown>, string][] = [
      [{ discount_type: 'percent', amount: '100.0001' }, 'invalid_amount'],
      [{ discount_type: 'percent', amount: '150' }, 'invalid_amount'],
      [{ discount_type: 'percent', amount: '1.00001' }, 'invalid_amount'],
      [{ discount_type: 'fixed_cart', amount: '1.005' }, 'invalid_amount'],
      [{ discount_type: 'fixed_product', amount: '1.5', currency: 'JPY' }, 'invalid_amount'],
      [
        { discount_type: 'fixed_cart', amount: '1', minimum_amount: '50', maximum_amount: '10' },
        'invalid_amount',
      ],
      [{ discount_type: 'fixed_cart', amount: '1', currency: 'XXY' }, 'invalid_currency'],
      [{ discount_type: 'fixed_cart', amount: '1', product_ids: [999999] }, 'invalid_product_ids'],
      [{ discount_type: 'fixed_cart', amount: '1', excluded_product_ids: [999998] }, 'invalid_product_ids'],
    ];
    for (const [body, code] of cases) {
      expectError(await admin(t, 'POST', '/coupons', { code: 'amounts', ...body }), 400, code);
    }
    expect(await count()).toBe(before);
    const ok = await admin(t, 'POST', '/coupons', {
      code: 'yen',
      discount_type: 'fixed_cart',
      amount: '500',
      currency: 'JPY',
    });
    expect(ok.json().amount).toBe('500');
    const full = await admin(t, 'POST', '/coupons', {
      code: 'all-off',
      discount_type: 'percent',
      amount: '100',
    });
    expect(full.json().amount).toBe('100.0000');
  });

  it('PATCH merges onto the stored coupon and rechecks the whole', async () => {
    const c = (
      await admin(t, 'POST', '/coupons', { code: 'patchme', discount_type: 'percent', amount: '10' })
    ).json();
    const res = await admin(t, 'PATCH', `/coupons/${c.id}`, { discount_type: 'fixed_cart', usage_limit: 5 });
    expect(res.json()).toMatchObject({
      code: 'patchme',
      discount_type: 'fixed_cart',
      amount: '10.00',
      usage_limit: 5,
    });
    const back = await admin(t, 'PATCH', `/coupons/${c.id}`, { discount_type: 'percent', amount: '250' });
    expectError(back, 400, 'invalid_amount');
    const cleared = await admin(t, 'PATCH', `/coupons/${c.id}`, { usage_limit: null, code: 'Renamed' });
    expect(cleared.json()).toMatchObject({ code: 'renamed', usage_limit: null, discount_type: 'fixed_cart' });
    expectError(await admin(t, 'PATCH', '/coupons/999999', { amount: '1' }), 404, 'coupon_not_found');
  });

  it('lists newest first with totals, and deletes', async () => {
    const c = (
      await admin(t, 'POST', '/coupons', { code: 'doomed', discount_type: 'percent', amount: '1' })
    ).json();
    const list = await admin(t, 'GET', '/coupons?per_page=2');
    expect(list.statusCode).toBe(200);
    expect(list.json()[0].code).toBe('doomed');
    expect(Number(list.headers['x-wp-totalpages'])).toBeGreaterThan(1);
    const del = await admin(t, 'DELETE', `/coupons/${c.id}`);
    expect(del.json()).toEqual({ success: true });
    expectError(await admin(t, 'GET', `/coupons/${c.id}`), 404, 'coupon_not_found');
    expectError(await admin(t, 'DELETE', `/coupons/${c.id}`), 404, 'coupon_not_found');
  });
});

describe('bad input on coupon routes is a specific 4xx and changes nothing', () => {
  it('POST /coupons', async () => {
    const before = await count();
    const raw = await t.app.inject({
      method: 'POST',
      url: '/v1/coupons',
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: "{'code': 'single-quoted'}",
    });
    expectError(raw, 400, 'rest_invalid_json');
    const ok = { code: 'valid', discount_type: 'percent', amount: '5' };
    const cases: [unknown, string][] = [
      [{}, 'rest_missing_param'],
      [{ code: 'x', discount_type: 'percent' }, 'rest_missing_param'],
      [{ ...ok, code: 5 }, 'rest_invalid_param'],
      [{ ...ok, code: '' }, 'rest_invalid_param'],
      [{ ...ok, code: ' padded ' }, 'rest_invalid_param'],
      [{ ...ok, code: 'tab\there' }, 'rest_invalid_param'],
      [{ ...ok, code: TEN_KB }, 'rest_invalid_param'],
      [{ ...ok, discount_type: 'bogo' }, 'rest_invalid_param'],
      [{ ...ok, discount_type: SQL }, 'rest_invalid_param'],
      [{ ...ok, amount: 5 }, 'rest_invalid_param'],
      [{ ...ok, amount: '-5' }, 'rest_invalid_param'],
      [{ ...ok, amount: '../5' }, 'rest_invalid_param'],
      [{ ...ok, expires_at: 'tomorrow' }, 'rest_invalid_param'],
      [{ ...ok, expires_at: SQL }, 'rest_invalid_param'],
      [{ ...ok, usage_limit: 0 }, 'rest_invalid_param'],
      [{ ...ok, usage_limit: '10' }, 'rest_invalid_param'],
      [{ ...ok, product_ids: [1, 1] }, 'rest_invalid_param'],
      [{ ...ok, product_ids: ['1'] }, 'rest_invalid_param'],
      [{ ...ok, product_ids: '1,2' }, 'rest_invalid_param'],
      [{ ...ok, currency: 'eur' }, 'rest_invalid_param'],
      [{ ...ok, individual_use: 1 }, 'rest_invalid_param'],
      [{ ...ok, usage_count: 0 }, 'invalid_parameters'],
      [{ ...ok, id: 1 }, 'invalid_parameters'],
    ];
    for (const [payload, code] of cases) expectError(await admin(t, 'POST', '/coupons', payload), 400, code);
    expect(await count()).toBe(before);
  });

  it('codes with quotes and SQL metacharacters are data', async () => {
    const res = await admin(t, 'POST', '/coupons', { code: SQL, discount_type: 'percent', amount: '5' });
    expect(res.statusCode).toBe(201);
    expect(res.json().code).toBe(SQL.toLowerCase());
    expect(await count()).toBeGreaterThan(1);
  });

  it('PATCH, GET and DELETE /coupons/{id}', async () => {
    const c = (
      await admin(t, 'POST', '/coupons', { code: 'stable', discount_type: 'percent', amount: '5' })
    ).json();
    const raw = await t.app.inject({
      method: 'PATCH',
      url: `/v1/coupons/${c.id}`,
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"amount": "5",}',
    });
    expectError(raw, 400, 'rest_invalid_json');
    const cases: [unknown, string][] = [
      [{ amount: null }, 'rest_invalid_param'],
      [{ code: null }, 'rest_invalid_param'],
      [{ code: 'a\u0000' }, 'rest_invalid_param'],
      [{ usage_count: 99 }, 'invalid_parameters'],
      [{ created_at: '2020-01-01T00:00:00Z' }, 'invalid_parameters'],
      [{ amount: '101' }, 'invalid_amount'],
      [{ product_ids: [999999] }, 'invalid_product_ids'],
    ];
    for (const [payload, code] of cases)
      expectError(await admin(t, 'PATCH', `/coupons/${c.id}`, payload), 400, code);
    expect((await admin(t, 'GET', `/coupons/${c.id}`)).json()).toEqual(c);
    for (const id of ['abc', '0', encodeURIComponent(`1${SQL}`), encodeURIComponent('../1')]) {
      expectError(await admin(t, 'GET', `/coupons/${id}`), 400, 'rest_invalid_param');
      expectError(await admin(t, 'PATCH', `/coupons/${id}`, { amount: '1' }), 400, 'rest_invalid_param');
      expectError(await admin(t, 'DELETE', `/coupons/${id}`), 400, 'rest_invalid_param');
    }
    for (const qs of ['page=0', 'per_page=101', 'code=stable']) {
      expect((await admin(t, 'GET', `/coupons?${qs}`)).statusCode).toBe(400);
    }
    expectError(await admin(t, 'GET', '/coupons?code=stable'), 400, 'invalid_parameters');
    expect((await admin(t, 'GET', `/coupons/${c.id}`)).json()).toEqual(c);
  });
});
