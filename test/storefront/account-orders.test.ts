import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { createCustomer, createOrder, createProduct } from '../helpers/factories.js';

/**
 * My orders (docs/storefront.md, 'My orders'): the signed-in customer's orders, paged by the
 * server, and one order's page for its owner only.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { checkout_rate_limit: 1000 });
});
afterAll(async () => t.close());

const as = (cookie: string | undefined, url: string) =>
  t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });

async function ordersFor(email: string, n: number, productId: number) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const placed = await createOrder(t, {
      items: [{ product_id: productId, qty: 1 }],
      billing: { first_name: 'Ada', last_name: 'L', email, country: 'GB' },
    });
    out.push(placed.order_id);
  }
  return out;
}

describe('/account/orders', () => {
  it('sends a signed-out visitor to sign in', async () => {
    for (const url of ['/account/orders', '/account/orders/1']) {
      const res = await as(undefined, url);
      expect(res.statusCode, url).toBe(303);
      expect(res.headers.location, url).toMatch(/^\/account\/sign-in/);
    }
  });

  it('lists the customer’s own orders newest first, 20 a page; other pages 404, malformed 400', async () => {
    const product = await createProduct(t, { name: 'Orders Kit', price: '12.00' });
    const me = await createCustomer(t);
    const other = await createCustomer(t);
    const mine = await ordersFor(me.email, 23, product.id);
    const theirs = await ordersFor(other.email, 1, product.id);

    const first = await as(me.headers.cookie, '/account/orders');
    expect(first.statusCode).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    const links = (body: string) =>
      [...body.matchAll(/href="\/account\/orders\/(\d+)"/g)].map((m) => Number(m[1]));
    expect(links(first.body)).toEqual(mine.slice().reverse().slice(0, 20));
    expect(first.body).toContain('$12.00 USD');
    expect(first.body).toContain('href="/account/orders?page=2"');
    const second = await as(me.headers.cookie, '/account/orders?page=2');
    expect(links(second.body)).toEqual(mine.slice(0, 3).reverse());
    expect(second.body).not.toContain(`/account/orders/${theirs[0]}"`);

    expect((await as(me.headers.cookie, '/account/orders?page=3')).statusCode).toBe(404);
    for (const bad of ['0', '-1', 'abc', '1e3', '%00', '9999999', "1'--"]) {
      expect((await as(me.headers.cookie, `/account/orders?page=${bad}`)).statusCode, bad).toBe(400);
    }
  });

  it('one order: its owner sees its lines; another customer’s, unknown and malformed ids are 404', async () => {
    const product = await createProduct(t, { name: 'Detail Kit <b>', price: '15.00' });
    const me = await createCustomer(t);
    const other = await createCustomer(t);
    const [mine] = await ordersFor(me.email, 1, product.id);
    const [theirs] = await ordersFor(other.email, 1, product.id);
    const res = await as(me.headers.cookie, `/account/orders/${mine}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('Detail Kit &lt;b&gt;');
    expect(res.body).toContain('$15.00');
    for (const id of [String(theirs), '999999', '0', 'abc', '99999999999', '-1']) {
      const r = await as(me.headers.cookie, `/account/orders/${id}`);
      expect(r.statusCode, id).toBe(404);
      expect(r.body, id).not.toContain('Detail Kit');
    }
  });
});
