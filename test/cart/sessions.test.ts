import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/random.js';
import { advanceClock, basic, createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { createCustomer, createProduct } from '../helpers/factories.js';
import { Browser, createCoupon } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
});
afterAll(async () => t.close());

const lines = (cart: { items: { product_id: number; quantity: number }[] }) =>
  Object.fromEntries(cart.items.map((i) => [i.product_id, i.quantity]));

describe('idle expiry (on the test clock)', () => {
  it('a guest cart lives 48 hours after the last request, and each visit extends it', async () => {
    const b = new Browser(t);
    const p = await createProduct(t);
    await b.add(p.id);
    const cookie = b.cookies.get('tollgate_cart');
    await advanceClock(t, 47 * 3600);
    expect((await b.cart()).items).toHaveLength(1);
    await advanceClock(t, 47 * 3600);
    expect((await b.cart()).items).toHaveLength(1);
    await advanceClock(t, 49 * 3600);
    const after = await b.cart();
    expect(after.items).toEqual([]);
    expect(b.cookies.get('tollgate_cart')).not.toBe(cookie);
  });
});

describe('signing in', () => {
  it("a guest's cart merges into the customer's cart: quantities add, coupons carry over", async () => {
    const c = await createCustomer(t);
    const x = await createProduct(t, { price: '10.00' });
    const y = await createProduct(t, { price: '5.00' });
    await createCoupon(t, { code: 'merge5', discount_type: 'fixed_cart', amount: '5' });
    const laptop = new Browser(t);
    await laptop.login(c.email, c.password);
    await laptop.add(x.id);
    const phone = new Browser(t);
    await phone.add(x.id, { quantity: 2 });
    await phone.add(y.id);
    await phone.post('/cart/apply-coupon', { coupon_code: 'merge5' });
    const guestCookie = phone.cookies.get('tollgate_cart');
    await phone.login(c.email, c.password);
    const merged = await phone.cart();
    expect(lines(merged)).toEqual({ [x.id]: 3, [y.id]: 1 });
    expect(merged.coupons.map((k) => k.code)).toEqual(['merge5']);
    expect(merged.total).toBe('30.00');
    // The same cookie keeps working and both devices now share the customer's cart.
    expect(phone.cookies.get('tollgate_cart')).toBe(guestCookie);
    expect(lines(await laptop.cart())).toEqual({ [x.id]: 3, [y.id]: 1 });
    const guestCarts = await t.db.database.db
      .selectFrom('carts')
      .select('id')
      .where('user_id', 'is', null)
      .where('items', 'like', `%"product_id":${y.id},%`)
      .execute();
    expect(guestCarts).toEqual([]);
  });

  it('a guest cart becomes the cart of a customer who had none', async () => {
    const c = await createCustomer(t);
    const x = await createProduct(t);
    const b = new Browser(t);
    await b.add(x.id, { quantity: 2 });
    await b.login(c.email, c.password);
    expect(lines(await b.cart())).toEqual({ [x.id]: 2 });
    const row = await t.db.database.db.selectFrom('carts').select('id').where('user_id', '=', c.id).execute();
    expect(row).toHaveLength(1);
  });

  it('parallel first requests after sign-in merge exactly once', async () => {
    const c = await createCustomer(t);
    const x = await createProduct(t);
    const laptop = new Browser(t);
    await laptop.login(c.email, c.password);
    await laptop.add(x.id);
    const phone = new Browser(t);
    await phone.add(x.id);
    await phone.login(c.email, c.password);
    const results = await Promise.all(Array.from({ length: 10 }, () => phone.get()));
    for (const r of results) expect(lines(r.json())).toEqual({ [x.id]: 2 });
    expect(lines(await laptop.cart())).toEqual({ [x.id]: 2 });
  });

  it('mergeGuestCart called twice merges once', async () => {
    const c = await createCustomer(t);
    const x = await createProduct(t);
    const guest = new Browser(t);
    await guest.add(x.id);
    const token = guest.cookies.get('tollgate_cart')!;
    const own = new Browser(t);
    await own.login(c.email, c.password);
    await own.add(x.id);
    await Promise.all([
      t.app.services.cart.mergeGuestCart(token, c.id),
      t.app.services.cart.mergeGuestCart(token, c.id),
    ]);
    await t.app.services.cart.mergeGuestCart(token, c.id);
    expect(lines(await own.cart())).toEqual({ [x.id]: 2 });
  });

  it("a signed-in customer's POST without a nonce is anonymous, yet the cookie still names their cart", async () => {
    const c = await createCustomer(t);
    const x = await createProduct(t);
    const b = new Browser(t);
    await b.login(c.email, c.password);
    await b.cart(); // the customer's cart is now this browser's
    const res = await b.post('/cart/add', { product_id: x.id }, { nonce: false });
    expect(res.statusCode).toBe(200);
    const other = new Browser(t);
    await other.login(c.email, c.password);
    expect(lines(await other.cart())).toEqual({ [x.id]: 1 });
  });

  it('a wrong nonce is refused', async () => {
    const c = await createCustomer(t);
    const b = new Browser(t);
    await b.login(c.email, c.password);
    b.nonce = 'not-the-nonce';
    expectError(await b.post('/cart/clear'), 403, 'rest_cookie_invalid_nonce');
  });

  it('after signing out the browser gets a fresh cart; signing back in brings the customer’s back', async () => {
    const c = await createCustomer(t);
    const x = await createProduct(t);
    const b = new Browser(t);
    await b.login(c.email, c.password);
    await b.add(x.id);
    await b.post('/auth/logout');
    expect(b.cookies.has('tollgate_session')).toBe(false);
    expect((await b.cart()).items).toEqual([]);
    await b.login(c.email, c.password);
    expect(lines(await b.cart())).toEqual({ [x.id]: 1 });
  });

  it("another customer signing in on the same browser never sees the first one's cart", async () => {
    const first = await createCustomer(t);
    const second = await createCustomer(t);
    const x = await createProduct(t);
    const b = new Browser(t);
    await b.login(first.email, first.password);
    await b.add(x.id);
    b.cookies.delete('tollgate_session');
    await b.login(second.email, second.password);
    expect((await b.cart()).items).toEqual([]);
    // Even a POST without nonce (anonymous) does not reach the first customer's cart.
    const anon = await b.post('/cart/add', { product_id: x.id }, { nonce: false });
    expect(anon.json().cart.items).toHaveLength(1);
    const again = new Browser(t);
    await again.login(first.email, first.password);
    expect(lines(await again.cart())).toEqual({ [x.id]: 1 });
  });

  it('an application password reaches the customer’s cart without cookies', async () => {
    const c = await createCustomer(t);
    const x = await createProduct(t);
    const b = new Browser(t);
    await b.login(c.email, c.password);
    await b.add(x.id, { quantity: 4 });
    const pw = await b.post('/users/me/application-passwords', { name: 'shop app' });
    const { password } = pw.json() as { password: string };
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/cart',
      headers: { authorization: basic(c.email, password) },
    });
    expect(lines(res.json())).toEqual({ [x.id]: 4 });
  });
});

describe('after checkout', () => {
  it("purge deletes a guest's cart and session, and empties a customer's cart", async () => {
    const x = await createProduct(t);
    const g = new Browser(t);
    await g.add(x.id);
    const guestCookie = g.cookies.get('tollgate_cart')!;
    const open = (b: Browser, userId: number | null) =>
      t.app.services.cart.open({
        token: b.cookies.get('tollgate_cart')!,
        userId,
        browserUser: async () => userId,
      });
    await t.app.services.cart.purge(await open(g, null));
    expect((await g.cart()).items).toEqual([]);
    expect(g.cookies.get('tollgate_cart')).not.toBe(guestCookie);

    const c = await createCustomer(t);
    const b = new Browser(t);
    await b.login(c.email, c.password);
    await b.add(x.id);
    await t.app.services.cart.purge(await open(b, c.id));
    expect((await b.cart()).items).toEqual([]);
    expect(
      await t.db.database.db.selectFrom('carts').select('id').where('user_id', '=', c.id).execute(),
    ).toHaveLength(1);
  });
});

describe('anonymous reads store nothing', () => {
  const counts = async () => {
    const db = t.db.database.db;
    const [carts, sessions] = await Promise.all([
      db
        .selectFrom('carts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
      db
        .selectFrom('cart_sessions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return { carts: Number(carts.n), sessions: Number(sessions.n) };
  };

  it('cookieless GET /cart and GET /checkout/bootstrap answer the empty cart and write no row', async () => {
    const before = await counts();
    for (let i = 0; i < 25; i++) {
      for (const url of ['/v1/cart', '/v1/checkout/bootstrap']) {
        const res = await t.app.inject({ method: 'GET', url });
        expect(res.statusCode, url).toBe(200);
        const body = res.json() as { items?: unknown[]; cart?: { items: unknown[] } };
        expect(body.items ?? body.cart?.items, url).toEqual([]);
        // The browser still gets its customer-session cookie.
        expect(res.cookies.find((c) => c.name === 'tollgate_cart')?.value, url).toMatch(/^[0-9a-f]{64}$/);
      }
    }
    expect(await counts()).toEqual(before);
  });

  it('the first write adopts the cookie a read handed out: the cart is stored under it', async () => {
    const b = new Browser(t);
    await b.cart();
    const handedOut = b.cookies.get('tollgate_cart')!;
    const p = await createProduct(t);
    await b.add(p.id);
    expect(b.cookies.get('tollgate_cart')).toBe(handedOut);
    expect(lines(await b.cart())).toEqual({ [p.id]: 1 });
    const stored = await t.db.database.db
      .selectFrom('cart_sessions')
      .select('id_hash')
      .where('id_hash', '=', sha256(handedOut))
      .execute();
    expect(stored).toHaveLength(1);
  });

  it('a cookie value the store did not hand out is never adopted (no session fixation)', async () => {
    const chosen = 'ab'.repeat(32);
    const b = new Browser(t);
    b.cookies.set('tollgate_cart', chosen);
    const p = await createProduct(t);
    await b.add(p.id);
    const given = b.cookies.get('tollgate_cart')!;
    expect(given).toMatch(/^[0-9a-f]{64}$/);
    expect(given).not.toBe(chosen);
    expect(
      await t.db.database.db
        .selectFrom('cart_sessions')
        .select('id_hash')
        .where('id_hash', '=', sha256(chosen))
        .execute(),
    ).toEqual([]);
  });

  it('parallel first writes with a handed-out cookie share one cart', async () => {
    const b = new Browser(t);
    await b.cart();
    const cookie = b.cookieHeader();
    const products = await Promise.all(Array.from({ length: 6 }, () => createProduct(t)));
    const before = await counts();
    const results = await Promise.all(
      products.map((p) =>
        t.app.inject({
          method: 'POST',
          url: '/v1/cart/add',
          headers: { cookie },
          payload: { product_id: p.id },
        }),
      ),
    );
    expect(results.map((r) => r.statusCode)).toEqual(products.map(() => 200));
    expect((await b.cart()).items).toHaveLength(products.length);
    expect(await counts()).toEqual({ carts: before.carts + 1, sessions: before.sessions + 1 });
  });
});
