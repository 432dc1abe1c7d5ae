import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { createProduct } from '../helpers/factories.js';
import { Browser, createCoupon, patchProduct } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const EMPTY = {
  currency: 'USD',
  currency_symbol: '$',
  decimals: 2,
  rate_id: expect.stringMatching(/^[0-9a-f]{16}$/),
  items: [],
  subtotal: '0.00',
  subtotal_tax: '0.00',
  discount_total: '0.00',
  discount_tax: '0.00',
  shipping_total: '0.00',
  shipping_tax: '0.00',
  cart_contents_tax: '0.00',
  fee_total: '0.00',
  fee_tax: '0.00',
  total: '0.00',
  total_tax: '0.00',
  coupons: [],
  needs_shipping: false,
  needs_payment: false,
};

describe('cart session', () => {
  it('a first request gets an empty cart and an HttpOnly, SameSite=Lax customer-session cookie', async () => {
    const b = new Browser(t);
    const res = await b.get();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(EMPTY);
    const cookie = res.cookies.find((c) => c.name === 'tollgate_cart')!;
    expect(cookie.value).toMatch(/^[0-9a-f]{64}$/);
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');
    expect(cookie.path).toBe('/');
  });

  it('every cart route starts a session when there is none, POSTs included', async () => {
    for (const [url, body] of [
      ['/cart/clear', {}],
      ['/cart/remove', { cart_item_key: 'nope' }],
      ['/cart/remove-coupon', { coupon_code: 'nope' }],
    ] as const) {
      const res = await new Browser(t).post(url, body);
      expect(
        res.cookies.some((c) => c.name === 'tollgate_cart'),
        url,
      ).toBe(true);
    }
  });

  it('the cookie keeps naming the same cart', async () => {
    const b = new Browser(t);
    const p = await createProduct(t);
    await b.add(p.id);
    const first = b.cookies.get('tollgate_cart');
    const cart = await b.cart();
    expect(b.cookies.get('tollgate_cart')).toBe(first);
    expect(cart.items).toHaveLength(1);
    expect((await new Browser(t).cart()).items).toEqual([]);
  });

  it('carts live on the server: another app on the same database serves the same cookie', async () => {
    const { buildApp } = await import('../../src/app.js');
    const other = await buildApp(t.config, t.db.database);
    try {
      const b = new Browser(t);
      const p = await createProduct(t);
      await b.add(p.id, { quantity: 2 });
      const res = await other.inject({
        method: 'GET',
        url: '/v1/cart',
        headers: { cookie: b.cookieHeader() },
      });
      expect(res.json().items).toMatchObject([{ product_id: p.id, quantity: 2 }]);
    } finally {
      await other.close();
    }
  });
});

describe('adding, changing and removing lines', () => {
  it('adds a simple product: message, cart_item_key and the cart with the line', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { name: 'Site Kit', price: '49.00' });
    const res = await b.post('/cart/add', { product_id: p.id });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.message).toEqual(expect.any(String));
    expect(body.cart_item_key).toMatch(/^[0-9a-f]{32}$/);
    expect(body.cart).toEqual({
      ...EMPTY,
      items: [
        {
          key: body.cart_item_key,
          product_id: p.id,
          variation_id: 0,
          quantity: 1,
          name: 'Site Kit',
          price: '49.00',
          subtotal: 49,
          total: 49,
          // Absolute URLs of the product's page and image (docs/cart.md); both answer 200 (test/storefront).
          image: expect.stringMatching(/^https?:\/\/[^/]+\/media\/placeholder\.svg$/),
          permalink: expect.stringMatching(/^https?:\/\/[^/]+\/products\/site-kit$/),
          attributes: {},
          // Not a subscription: checkout does not offer to keep the card.
          subscription: false,
          // A simple product has no tiers to change to.
          tiers: [],
        },
      ],
      subtotal: '49.00',
      total: '49.00',
      needs_payment: true,
    });
  });

  it('adding the same product again raises the quantity of the same line', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { price: '10.00' });
    const first = await b.add(p.id);
    const second = await b.add(p.id, { quantity: 3 });
    expect(second.cart_item_key).toBe(first.cart_item_key);
    expect(second.cart.items).toMatchObject([{ quantity: 4, subtotal: 40, total: 40 }]);
    expect(second.cart.total).toBe('40.00');
  });

  it('a variable product is added by variation id or by its attributes, never as the parent', async () => {
    const p = await createProduct(t, {
      name: 'Agency Kit',
      type: 'variable',
      variations: [
        { name: 'Single', price: '49.00', attributes: { Sites: '1' } },
        { name: 'Five', price: '99.00', attributes: { Sites: '5' } },
      ],
    });
    const [single, five] = p.variations;
    const b = new Browser(t);
    const byId = await b.add(p.id, { variation_id: five!.id, variation: { attribute_sites: '5' } });
    expect(byId.cart.items[0]).toMatchObject({
      product_id: p.id,
      variation_id: five!.id,
      name: 'Agency Kit - Five',
      price: '99.00',
      attributes: { Sites: '5' },
    });
    const byAttributes = await b.add(p.id, { attribute_sites: '1' });
    expect(byAttributes.cart.items[1]).toMatchObject({ variation_id: single!.id, price: '49.00' });
    const byObject = await b.add(p.id, { variation: { attribute_sites: '5' }, quantity: 2 });
    expect(byObject.cart_item_key).toBe(byId.cart_item_key);
    expect(byObject.cart.items[0]!.quantity).toBe(3);
    expect(byObject.cart.total).toBe('346.00');
  });

  it("update with variation_id moves a line to another tier of its product, into that tier's line if any", async () => {
    const p = await createProduct(t, {
      name: 'Tier Kit',
      type: 'variable',
      variations: [
        { name: '1 site', price: '49.00', attributes: { Sites: '1' } },
        { name: '5 sites', price: '99.00', attributes: { Sites: '5' } },
        { name: 'Unlimited', price: '199.00', attributes: { Sites: 'any' } },
      ],
    });
    const [one, five, unlimited] = p.variations;
    const b = new Browser(t);
    const first = await b.add(p.id, { variation_id: one!.id, quantity: 2 });
    expect(first.cart.items[0]!.tiers).toEqual([
      { variation_id: one!.id, name: '1 site', price: '49.00' },
      { variation_id: five!.id, name: '5 sites', price: '99.00' },
      { variation_id: unlimited!.id, name: 'Unlimited', price: '199.00' },
    ]);
    const moved = await b.post('/cart/update', {
      cart_item_key: first.cart_item_key,
      quantity: 2,
      variation_id: five!.id,
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().cart.items).toHaveLength(1);
    expect(moved.json().cart.items[0]).toMatchObject({
      variation_id: five!.id,
      name: 'Tier Kit - 5 sites',
      quantity: 2,
      attributes: { Sites: '5' },
    });
    expect(moved.json().cart.total).toBe('198.00');
    // The same key as adding that tier: a later add raises this line.
    const again = await b.add(p.id, { variation_id: five!.id });
    expect(again.cart_item_key).toBe(moved.json().cart.items[0].key);
    expect(again.cart.items).toHaveLength(1);
    // Into an existing line of the target tier: one line, quantities added.
    const other = await b.add(p.id, { variation_id: unlimited!.id });
    const merged = await b.post('/cart/update', {
      cart_item_key: other.cart_item_key,
      quantity: 1,
      variation_id: five!.id,
    });
    expect(merged.json().cart.items).toHaveLength(1);
    expect(merged.json().cart.items[0]).toMatchObject({ variation_id: five!.id, quantity: 4 });
    // A variation of another product changes nothing.
    const simple = await createProduct(t, { price: '5.00', variations: [{ name: 'Other', price: '1.00' }] });
    const refused = await b.post('/cart/update', {
      cart_item_key: again.cart_item_key,
      quantity: 1,
      variation_id: simple.variations[0]!.id,
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe('invalid_variation');
    const wrongType = await b.post('/cart/update', {
      cart_item_key: again.cart_item_key,
      quantity: 1,
      variation_id: 'x',
    });
    expect(wrongType.statusCode).toBe(400);
    expect((await b.get('/cart')).json().items[0]).toMatchObject({ variation_id: five!.id, quantity: 4 });
  });

  it('update sets the quantity; 0 removes the line', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { price: '5.00' });
    const { cart_item_key } = await b.add(p.id);
    const up = await b.post('/cart/update', { cart_item_key, quantity: 7 });
    expect(up.statusCode).toBe(200);
    expect(up.json().message).toEqual(expect.any(String));
    expect(up.json().cart.items[0].quantity).toBe(7);
    expect(up.json().cart.total).toBe('35.00');
    const zero = await b.post('/cart/update', { cart_item_key, quantity: 0 });
    expect(zero.statusCode).toBe(200);
    expect(zero.json().cart.items).toEqual([]);
  });

  it('remove takes the line out', async () => {
    const b = new Browser(t);
    const a = await createProduct(t, { price: '5.00' });
    const c = await createProduct(t, { price: '7.00' });
    const { cart_item_key } = await b.add(a.id);
    await b.add(c.id);
    const res = await b.post('/cart/remove', { cart_item_key });
    expect(res.statusCode).toBe(200);
    expect(res.json().cart.items.map((i: { product_id: number }) => i.product_id)).toEqual([c.id]);
    expect(res.json().cart.total).toBe('7.00');
  });

  it('clear empties lines and coupons: total 0.00', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { price: '20.00' });
    await createCoupon(t, { code: 'clearme', discount_type: 'percent', amount: '10' });
    await b.add(p.id);
    await b.post('/cart/apply-coupon', { coupon_code: 'clearme' });
    const res = await b.post('/cart/clear');
    expect(res.statusCode).toBe(200);
    expect(res.json().cart).toEqual(EMPTY);
    expect(await b.cart()).toEqual(EMPTY);
  });

  it('a line whose product is drafted or removed leaves the cart', async () => {
    const b = new Browser(t);
    const a = await createProduct(t, { price: '5.00' });
    const c = await createProduct(t, { price: '7.00' });
    await b.add(a.id);
    await b.add(c.id);
    await patchProduct(t, a.id, { status: 'draft' });
    const cart = await b.cart();
    expect(cart.items.map((i) => i.product_id)).toEqual([c.id]);
    expect(cart.total).toBe('7.00');
  });

  it('a physical product needs shipping', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { virtual: false });
    expect((await b.add(p.id)).cart.needs_shipping).toBe(true);
  });
});

describe('coupons', () => {
  it('applies a code in any case and removes it again', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { price: '80.00' });
    await createCoupon(t, { code: 'Spring10', discount_type: 'percent', amount: '10' });
    await b.add(p.id);
    const res = await b.post('/cart/apply-coupon', { coupon_code: '  SPRING10 ' });
    expect(res.statusCode).toBe(200);
    expect(res.json().message).toEqual(expect.any(String));
    const cart = res.json().cart;
    expect(cart.coupons).toEqual([
      {
        code: 'spring10',
        discount_type: 'percent',
        discount_total: '8.00',
        discount_tax: '0.00',
        free_shipping: false,
      },
    ]);
    expect(cart).toMatchObject({ subtotal: '80.00', discount_total: '8.00', total: '72.00' });
    expect(cart.items[0]).toMatchObject({ subtotal: 80, total: 72 });
    const removed = await b.post('/cart/remove-coupon', { coupon_code: 'spring10' });
    expect(removed.statusCode).toBe(200);
    expect(removed.json().cart).toMatchObject({ coupons: [], discount_total: '0.00', total: '80.00' });
  });

  it('an individual-use coupon replaces the applied ones', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { price: '100.00' });
    await createCoupon(t, { code: 'stack-a', discount_type: 'percent', amount: '10' });
    await createCoupon(t, { code: 'stack-b', discount_type: 'fixed_cart', amount: '5' });
    await createCoupon(t, { code: 'alone', discount_type: 'fixed_cart', amount: '30', individual_use: true });
    await b.add(p.id);
    await b.post('/cart/apply-coupon', { coupon_code: 'stack-a' });
    const two = await b.post('/cart/apply-coupon', { coupon_code: 'stack-b' });
    expect(two.json().cart.total).toBe('85.00');
    const alone = await b.post('/cart/apply-coupon', { coupon_code: 'alone' });
    expect(alone.statusCode).toBe(200);
    expect(alone.json().cart.coupons.map((c: { code: string }) => c.code)).toEqual(['alone']);
    expect(alone.json().cart.total).toBe('70.00');
  });

  it('a coupon that stops applying (minimum spend) is dropped from the cart', async () => {
    const b = new Browser(t);
    const a = await createProduct(t, { price: '30.00' });
    const c = await createProduct(t, { price: '30.00' });
    await createCoupon(t, { code: 'min50', discount_type: 'fixed_cart', amount: '5', minimum_amount: '50' });
    const { cart_item_key } = await b.add(a.id);
    await b.add(c.id);
    expect((await b.post('/cart/apply-coupon', { coupon_code: 'min50' })).json().cart.total).toBe('55.00');
    const after = await b.post('/cart/remove', { cart_item_key });
    expect(after.json().cart).toMatchObject({ coupons: [], total: '30.00' });
    await b.add(a.id);
    expect((await b.cart()).coupons).toEqual([]);
  });

  it('disabling coupons drops applied ones', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { price: '30.00' });
    await createCoupon(t, { code: 'offsoon', discount_type: 'percent', amount: '50' });
    await b.add(p.id);
    await b.post('/cart/apply-coupon', { coupon_code: 'offsoon' });
    await setSettings(t, { coupons_enabled: false });
    try {
      expect(await b.cart()).toMatchObject({ coupons: [], total: '30.00' });
    } finally {
      await setSettings(t, { coupons_enabled: true });
    }
  });
});

describe('currencies', () => {
  beforeAll(async () => {
    await setSettings(t, {
      currencies: [
        { code: 'EUR', symbol: '€', decimals: 2, rate: '0.9', rate_updated_at: '2026-06-01T00:00:00Z' },
        { code: 'JPY', symbol: '¥', decimals: 0, rate: '150', rate_updated_at: '2026-06-01T00:00:00Z' },
        { code: 'KWD', symbol: 'KD', decimals: 3, rate: '0.307', rate_updated_at: '2026-06-01T00:00:00Z' },
      ],
    });
  });
  afterAll(async () => setSettings(t, { currencies: [] }));

  it('?currency= prices the cart in that currency and remembers it in a cookie', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { price: '49.00' });
    await b.add(p.id);
    const res = await b.get('/cart?currency=EUR');
    expect(res.statusCode).toBe(200);
    const cookie = res.cookies.find((c) => c.name === 'tollgate_currency')!;
    expect(cookie).toMatchObject({ value: 'EUR', httpOnly: true, sameSite: 'Lax' });
    expect(res.json()).toMatchObject({
      currency: 'EUR',
      currency_symbol: '€',
      decimals: 2,
      subtotal: '44.10',
      total: '44.10',
    });
    expect(res.json().items[0]).toMatchObject({ price: '44.10', subtotal: 44.1 });
    // The cookie keeps the choice for the next requests, POSTs included.
    const again = await b.add(p.id);
    expect(again.cart).toMatchObject({ currency: 'EUR', total: '88.20' });
    expect((await b.get('/cart?currency=usd')).json()).toMatchObject({ currency: 'USD', total: '98.00' });
  });

  it('0 and 3 decimal currencies', async () => {
    const b = new Browser(t);
    const p = await createProduct(t, { price: '19.99' });
    await b.add(p.id, { quantity: 2 });
    // 19.99 × 150 = 2998.5 → 2999 yen a unit
    expect(await b.cart('/cart?currency=JPY')).toMatchObject({
      decimals: 0,
      total: '5998',
      currency_symbol: '¥',
    });
    // 19.99 × 0.307 = 6.13693 → 6.137 a unit
    expect(await b.cart('/cart?currency=KWD')).toMatchObject({ decimals: 3, total: '12.274' });
  });

  it('rate_id names the exact rate: it changes with the rate and with its timestamp', async () => {
    const b = new Browser(t);
    const eur1 = (await b.cart('/cart?currency=EUR')).rate_id;
    const usd = (await b.cart('/cart?currency=USD')).rate_id;
    expect(eur1).not.toBe(usd);
    const base = { code: 'EUR', symbol: '€', decimals: 2 };
    await setSettings(t, {
      currencies: [{ ...base, rate: '0.91', rate_updated_at: '2026-06-01T00:00:00Z' }],
    });
    const eur2 = (await b.cart('/cart?currency=EUR')).rate_id;
    await setSettings(t, {
      currencies: [{ ...base, rate: '0.91', rate_updated_at: '2026-06-02T00:00:00Z' }],
    });
    const eur3 = (await b.cart('/cart?currency=EUR')).rate_id;
    expect(new Set([eur1, eur2, eur3]).size).toBe(3);
    expect((await b.cart('/cart?currency=USD')).rate_id).toBe(usd);
  });

  it('query parameters other than currency are ignored', async () => {
    const res = await new Browser(t).get('/cart?currency=usd&_=1712345&utm_source=x');
    expect(res.statusCode).toBe(200);
    expect(res.json().currency).toBe('USD');
  });

  it('a remembered currency that is no longer configured falls back to the base currency', async () => {
    const b = new Browser(t);
    b.cookies.set('tollgate_currency', 'CHF');
    expect((await b.cart()).currency).toBe('USD');
  });
});

describe('taxes and shipping once checkout has set a destination', () => {
  it('prices the cart for the destination', async () => {
    await t.app.inject({
      method: 'POST',
      url: '/v1/tax-rates',
      headers: t.adminAuth,
      payload: { country: 'GB', rate: '20', name: 'VAT' },
    });
    await t.app.inject({
      method: 'POST',
      url: '/v1/shipping-zones',
      headers: t.adminAuth,
      payload: {
        name: 'UK',
        regions: [{ country: 'GB' }],
        methods: [{ method_id: 'flat_rate', title: 'Post', cost: '5.00' }],
      },
    });
    const b = new Browser(t);
    const p = await createProduct(t, { price: '10.00', virtual: false });
    await b.add(p.id);
    const session = await t.app.services.cart.open({
      token: b.cookies.get('tollgate_cart')!,
      userId: null,
      browserUser: async () => null,
    });
    await t.app.services.cart.setDestination(session, null, {
      country: 'GB',
      state: '',
      postcode: 'SW1A 1AA',
    });
    expect(await b.cart()).toMatchObject({
      subtotal: '10.00',
      subtotal_tax: '2.00',
      shipping_total: '5.00',
      shipping_tax: '1.00',
      cart_contents_tax: '2.00',
      total_tax: '3.00',
      total: '18.00',
      needs_shipping: true,
    });
  });
});
