import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CartRepository } from '../../src/modules/cart/cart.repository.js';
import { createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { createCustomer, createProduct } from '../helpers/factories.js';
import { Browser, createCoupon } from './helpers.js';

/**
 * Every row of docs/cart.md, 'Errors', through HTTP; a refused request leaves the cart as it was.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());
afterEach(() => vi.restoreAllMocks());

/** A browser with one line of a 20.00 product in its cart. */
async function withLine() {
  const b = new Browser(t);
  const p = await createProduct(t, { price: '20.00' });
  const { cart_item_key } = await b.add(p.id);
  return { b, p, key: cart_item_key, before: await b.cart() };
}

const variable = (stock: (number | null)[], parentStock: number | null = null) =>
  createProduct(t, {
    type: 'variable',
    stock_quantity: parentStock,
    variations: stock.map((s, i) => ({
      name: `V${i}`,
      price: '10.00',
      attributes: { Size: `S${i}` },
      stock_quantity: s,
    })),
  });

describe('add', () => {
  it('404 invalid_product: no such product', async () => {
    const { b, before } = await withLine();
    expectError(await b.post('/cart/add', { product_id: 999999 }), 404, 'invalid_product');
    expect(await b.cart()).toEqual(before);
  });

  it('404 invalid_product: a draft product cannot be bought', async () => {
    const { b, before } = await withLine();
    const draft = await createProduct(t, { status: 'draft' });
    expectError(await b.post('/cart/add', { product_id: draft.id }), 404, 'invalid_product');
    expect(await b.cart()).toEqual(before);
  });

  it('404 invalid_variation: no such variation', async () => {
    const { b, before } = await withLine();
    const p = await variable([null]);
    expectError(
      await b.post('/cart/add', { product_id: p.id, variation_id: 999999 }),
      404,
      'invalid_variation',
    );
    expect(await b.cart()).toEqual(before);
  });

  it("400 invalid_variation: another product's variation", async () => {
    const { b, before } = await withLine();
    const p = await variable([null]);
    const other = await variable([null]);
    const res = await b.post('/cart/add', { product_id: p.id, variation_id: other.variations[0]!.id });
    expectError(res, 400, 'invalid_variation');
    const simple = await createProduct(t);
    expectError(
      await b.post('/cart/add', { product_id: simple.id, variation_id: other.variations[0]!.id }),
      400,
      'invalid_variation',
    );
    expect(await b.cart()).toEqual(before);
  });

  it('400 variation_not_available: the variation is out of stock (its own or its parent’s)', async () => {
    const { b, before } = await withLine();
    const p = await variable([0, 5]);
    expectError(
      await b.post('/cart/add', { product_id: p.id, variation_id: p.variations[0]!.id }),
      400,
      'variation_not_available',
    );
    const shared = await variable([null], 0);
    expectError(
      await b.post('/cart/add', { product_id: shared.id, variation_id: shared.variations[0]!.id }),
      400,
      'variation_not_available',
    );
    expect(await b.cart()).toEqual(before);
  });

  it('400 add_to_cart_failed: more than the stock, counting what is already in the cart', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { stock_quantity: 3 });
    await b.add(p.id, { quantity: 2 });
    const before = await b.cart();
    const res = await b.post('/cart/add', { product_id: p.id, quantity: 2 });
    expectError(res, 400, 'add_to_cart_failed');
    expect(res.json().data).toMatchObject({ reason: 'stock_limit', max_quantity: 3 });
    expect(await b.cart()).toEqual(before);
    expect((await b.add(p.id)).cart.items[0]!.quantity).toBe(3);
  });

  it('400 add_to_cart_failed: variations sharing the parent stock count together', async () => {
    const b = new Browser(t);
    const p = await variable([null, null], 3);
    await b.add(p.id, { variation_id: p.variations[0]!.id, quantity: 2 });
    const res = await b.post('/cart/add', {
      product_id: p.id,
      variation_id: p.variations[1]!.id,
      quantity: 2,
    });
    expectError(res, 400, 'add_to_cart_failed');
  });

  it('400 add_to_cart_failed: a simple product out of stock', async () => {
    const { b, before } = await withLine();
    const p = await createProduct(t, { stock_quantity: 0 });
    const res = await b.post('/cart/add', { product_id: p.id });
    expectError(res, 400, 'add_to_cart_failed');
    expect(res.json().data.reason).toBe('out_of_stock');
    expect(await b.cart()).toEqual(before);
  });

  it('400 add_to_cart_failed: a variable product without a choice, or with attributes not of the variation', async () => {
    const { b, before } = await withLine();
    const p = await variable([null, null]);
    const none = await b.post('/cart/add', { product_id: p.id });
    expectError(none, 400, 'add_to_cart_failed');
    expect(none.json().data.reason).toBe('choose_options');
    expectError(
      await b.post('/cart/add', { product_id: p.id, attribute_size: 'XXL' }),
      400,
      'add_to_cart_failed',
    );
    const wrong = await b.post('/cart/add', {
      product_id: p.id,
      variation_id: p.variations[0]!.id,
      variation: { attribute_size: 'S1' },
    });
    expectError(wrong, 400, 'add_to_cart_failed');
    expect(wrong.json().data.reason).toBe('invalid_attributes');
    expectError(
      await b.post('/cart/add', {
        product_id: p.id,
        variation_id: p.variations[0]!.id,
        attribute_colour: 'red',
      }),
      400,
      'add_to_cart_failed',
    );
    expect(await b.cart()).toEqual(before);
  });

  it('400 add_to_cart_failed: a line cannot pass 9999', async () => {
    const b = new Browser(t);
    const p = await createProduct(t);
    await b.add(p.id, { quantity: 9999 });
    const res = await b.post('/cart/add', { product_id: p.id });
    expectError(res, 400, 'add_to_cart_failed');
    expect(res.json().data.reason).toBe('quantity_limit');
  });

  it('400 add_to_cart_failed: the cart could not be stored', async () => {
    const { b, before } = await withLine();
    const p = await createProduct(t);
    vi.spyOn(CartRepository.prototype, 'saveCart').mockRejectedValueOnce(new Error('disk full'));
    expectError(await b.post('/cart/add', { product_id: p.id }), 400, 'add_to_cart_failed');
    expect(await b.cart()).toEqual(before);
  });
});

describe('update', () => {
  it('400 update_failed: a key not in the cart', async () => {
    const { b, before } = await withLine();
    expectError(
      await b.post('/cart/update', { cart_item_key: 'f'.repeat(32), quantity: 2 }),
      400,
      'update_failed',
    );
    expectError(await b.post('/cart/update', { cart_item_key: '', quantity: 0 }), 400, 'update_failed');
    expect(await b.cart()).toEqual(before);
  });

  it('400 update_failed: more than the stock', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { stock_quantity: 4 });
    const { cart_item_key } = await b.add(p.id, { quantity: 2 });
    const before = await b.cart();
    const res = await b.post('/cart/update', { cart_item_key, quantity: 5 });
    expectError(res, 400, 'update_failed');
    expect(res.json().data).toMatchObject({ reason: 'stock_limit', max_quantity: 4 });
    expect(await b.cart()).toEqual(before);
    expect((await b.post('/cart/update', { cart_item_key, quantity: 4 })).statusCode).toBe(200);
  });
});

describe('remove', () => {
  it('404 item_not_found: a key not in the cart', async () => {
    const { b, before } = await withLine();
    expectError(await b.post('/cart/remove', { cart_item_key: '0'.repeat(32) }), 404, 'item_not_found');
    expect(await b.cart()).toEqual(before);
  });

  it('400 remove_failed: the removal could not be stored', async () => {
    const { b, key, before } = await withLine();
    vi.spyOn(CartRepository.prototype, 'saveCart').mockRejectedValueOnce(new Error('disk full'));
    expectError(await b.post('/cart/remove', { cart_item_key: key }), 400, 'remove_failed');
    expect(await b.cart()).toEqual(before);
  });
});

describe('apply-coupon', () => {
  it('400 coupon_code_required: missing, empty or blank', async () => {
    const { b, before } = await withLine();
    expectError(await b.post('/cart/apply-coupon', {}), 400, 'coupon_code_required');
    expectError(await b.post('/cart/apply-coupon', { coupon_code: '' }), 400, 'coupon_code_required');
    expectError(await b.post('/cart/apply-coupon', { coupon_code: '   ' }), 400, 'coupon_code_required');
    expect(await b.cart()).toEqual(before);
  });

  it('400 coupons_disabled', async () => {
    const { b, before } = await withLine();
    await createCoupon(t, { code: 'whiledisabled', discount_type: 'percent', amount: '10' });
    await setSettings(t, { coupons_enabled: false });
    try {
      expectError(
        await b.post('/cart/apply-coupon', { coupon_code: 'whiledisabled' }),
        400,
        'coupons_disabled',
      );
    } finally {
      await setSettings(t, { coupons_enabled: true });
    }
    expect(await b.cart()).toEqual(before);
  });

  it('500 cart_error: the cart session could not be initialised', async () => {
    vi.spyOn(CartRepository.prototype, 'createSession').mockRejectedValueOnce(new Error('database down'));
    expectError(await new Browser(t).post('/cart/apply-coupon', { coupon_code: 'x' }), 500, 'cart_error');
    const { b } = await withLine();
    vi.spyOn(CartRepository.prototype, 'findSession').mockRejectedValueOnce(new Error('database down'));
    expectError(await b.post('/cart/apply-coupon', { coupon_code: 'x' }), 500, 'cart_error');
  });

  it('400 empty_cart', async () => {
    await createCoupon(t, { code: 'nothingtodo', discount_type: 'percent', amount: '10' });
    const b = new Browser(t);
    expectError(await b.post('/cart/apply-coupon', { coupon_code: 'nothingtodo' }), 400, 'empty_cart');
    expect((await b.cart()).coupons).toEqual([]);
  });

  it('400 coupon_currency_mismatch: restricted to another currency', async () => {
    const { b, before } = await withLine();
    await createCoupon(t, { code: 'euro-only', discount_type: 'fixed_cart', amount: '5', currency: 'EUR' });
    expectError(
      await b.post('/cart/apply-coupon', { coupon_code: 'euro-only' }),
      400,
      'coupon_currency_mismatch',
    );
    expect(await b.cart()).toEqual(before);
  });

  it('400 coupon_failed: usage limit, minimum spend, expiry, unknown, already applied', async () => {
    const { b, before } = await withLine();
    const used = await createCoupon(t, {
      code: 'used-up',
      discount_type: 'percent',
      amount: '10',
      usage_limit: 1,
    });
    await t.db.database.db.updateTable('coupons').set({ usage_count: 1 }).where('id', '=', used.id).execute();
    await createCoupon(t, {
      code: 'big-spender',
      discount_type: 'percent',
      amount: '10',
      minimum_amount: '100',
    });
    await createCoupon(t, {
      code: 'small-spender',
      discount_type: 'percent',
      amount: '10',
      maximum_amount: '10',
    });
    await createCoupon(t, {
      code: 'last-year',
      discount_type: 'percent',
      amount: '10',
      expires_at: '2020-01-01T00:00:00Z',
    });
    await createCoupon(t, {
      code: 'elsewhere',
      discount_type: 'percent',
      amount: '10',
      product_ids: [(await createProduct(t)).id],
    });
    const cases: [string, string][] = [
      ['used-up', 'usage_limit_reached'],
      ['big-spender', 'minimum_amount'],
      ['small-spender', 'maximum_amount'],
      ['last-year', 'expired'],
      ['elsewhere', 'not_applicable'],
      ['no-such-coupon', 'not_found'],
    ];
    for (const [code, reason] of cases) {
      const res = await b.post('/cart/apply-coupon', { coupon_code: code });
      expectError(res, 400, 'coupon_failed');
      expect(res.json().data.reason, code).toBe(reason);
    }
    expect(await b.cart()).toEqual(before);
    await createCoupon(t, { code: 'twice', discount_type: 'percent', amount: '10' });
    await b.post('/cart/apply-coupon', { coupon_code: 'twice' });
    const again = await b.post('/cart/apply-coupon', { coupon_code: 'TWICE' });
    expectError(again, 400, 'coupon_failed');
    expect(again.json().data.reason).toBe('already_applied');
  });

  it('400 coupon_failed: nothing joins an applied individual-use coupon', async () => {
    const { b } = await withLine();
    await createCoupon(t, { code: 'solo', discount_type: 'percent', amount: '10', individual_use: true });
    await createCoupon(t, { code: 'joiner', discount_type: 'percent', amount: '5' });
    expect((await b.post('/cart/apply-coupon', { coupon_code: 'solo' })).statusCode).toBe(200);
    const res = await b.post('/cart/apply-coupon', { coupon_code: 'joiner' });
    expectError(res, 400, 'coupon_failed');
    expect(res.json().data.reason).toBe('individual_use');
  });

  it("400 coupon_failed: the customer's own usage limit (uses claimed at checkout)", async () => {
    const customer = await createCustomer(t, 'limited@example.com');
    const coupon = await createCoupon(t, {
      code: 'once-each',
      discount_type: 'percent',
      amount: '10',
      usage_limit_per_user: 1,
    });
    await t.db.database.db
      .insertInto('coupon_usages')
      .values({
        coupon_id: coupon.id,
        user_id: customer.id,
        email: customer.email,
        order_id: null,
        created_at: new Date().toISOString(),
      })
      .execute();
    const b = new Browser(t);
    await b.login(customer.email, customer.password);
    await b.add((await createProduct(t)).id);
    const res = await b.post('/cart/apply-coupon', { coupon_code: 'once-each' });
    expectError(res, 400, 'coupon_failed');
    expect(res.json().data.reason).toBe('usage_limit_per_user_reached');
    // A guest is not counted here (checkout checks the billing email).
    const guest = new Browser(t);
    await guest.add((await createProduct(t)).id);
    expect((await guest.post('/cart/apply-coupon', { coupon_code: 'once-each' })).statusCode).toBe(200);
  });
});

describe('remove-coupon', () => {
  it('400 coupon_code_required: missing or empty', async () => {
    const { b } = await withLine();
    expectError(await b.post('/cart/remove-coupon', {}), 400, 'coupon_code_required');
    expectError(await b.post('/cart/remove-coupon', { coupon_code: ' ' }), 400, 'coupon_code_required');
  });

  it('500 cart_error: the cart session could not be initialised', async () => {
    vi.spyOn(CartRepository.prototype, 'createSession').mockRejectedValueOnce(new Error('database down'));
    expectError(await new Browser(t).post('/cart/remove-coupon', { coupon_code: 'x' }), 500, 'cart_error');
  });

  it('400 coupon_not_applied', async () => {
    const { b, before } = await withLine();
    await createCoupon(t, { code: 'notyet', discount_type: 'percent', amount: '10' });
    expectError(await b.post('/cart/remove-coupon', { coupon_code: 'notyet' }), 400, 'coupon_not_applied');
    expect(await b.cart()).toEqual(before);
  });

  it('400 remove_coupon_failed: the removal could not be stored', async () => {
    const { b } = await withLine();
    await createCoupon(t, { code: 'sticky', discount_type: 'percent', amount: '10' });
    await b.post('/cart/apply-coupon', { coupon_code: 'sticky' });
    const before = await b.cart();
    vi.spyOn(CartRepository.prototype, 'saveCart').mockRejectedValueOnce(new Error('disk full'));
    expectError(await b.post('/cart/remove-coupon', { coupon_code: 'sticky' }), 400, 'remove_coupon_failed');
    expect(await b.cart()).toEqual(before);
  });
});

describe('currency parameter', () => {
  it('400 invalid_currency: a currency the store does not offer', async () => {
    const { b, before } = await withLine();
    expectError(await b.get('/cart?currency=XYZ'), 400, 'invalid_currency');
    expectError(await b.get('/cart?currency=EURO'), 400, 'invalid_currency');
    expectError(
      await b.post('/cart/add?currency=GBP', { product_id: before.items[0]!.product_id }),
      400,
      'invalid_currency',
    );
    expect(b.cookies.has('tollgate_currency')).toBe(false);
    expect(await b.cart()).toEqual(before);
  });
});
