import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectUnderTest } from '../helpers/db.js';
import { type Cluster, type ServerProcess, startCluster } from '../helpers/server.js';

/**
 * Parallel changes of one cart over real HTTP lose nothing. SQLite: one server process (its one
 * connection runs transactions one at a time). PostgreSQL: two server processes on one database,
 * requests alternating between them, so only the cart row lock (FOR UPDATE) keeps them exact.
 */
let cluster: Cluster;
let servers: ServerProcess[] = [];

beforeAll(async () => {
  cluster = await startCluster();
  servers = cluster.servers;
}, 90_000);

afterAll(async () => cluster.stop());

async function call(i: number, method: string, path: string, body: unknown, cookie: string) {
  const server = servers[i % servers.length]!;
  const res = await fetch(`${server.url}/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json', cookie },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    cookies: res.headers.getSetCookie(),
  };
}

async function createProducts(n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${servers[0]!.url}/v1/products`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...cluster.adminHeaders },
      body: JSON.stringify({ name: `Parallel ${i}`, price: '1.00' }),
    });
    expect(res.status).toBe(201);
    ids.push(((await res.json()) as { id: number }).id);
  }
  return ids;
}

/** A guest session: the cookie the first GET /cart sets. */
async function guest(): Promise<string> {
  const res = await call(0, 'GET', '/cart', undefined, '');
  return res.cookies.find((c) => c.startsWith('tollgate_cart='))!.split(';')[0]!;
}

type Items = { product_id: number; quantity: number; key: string }[];

describe(`parallel cart changes over HTTP (${dialectUnderTest})`, () => {
  it('20 parallel adds of distinct products end with 20 lines', async () => {
    const ids = await createProducts(20);
    const cookie = await guest();
    const results = await Promise.all(
      ids.map((id, i) => call(i, 'POST', '/cart/add', { product_id: id }, cookie)),
    );
    expect(results.map((r) => r.status)).toEqual(ids.map(() => 200));
    const cart = (await call(1, 'GET', '/cart', undefined, cookie)).body;
    const items = cart.items as Items;
    expect(items.map((i) => i.product_id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    expect(cart.total).toBe('20.00');
  });

  it('20 parallel adds of one product end with quantity 20', async () => {
    const [id] = await createProducts(1);
    const cookie = await guest();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(i, 'POST', '/cart/add', { product_id: id }, cookie)),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    const items = (await call(0, 'GET', '/cart', undefined, cookie)).body.items as Items;
    expect(items).toMatchObject([{ product_id: id, quantity: 20 }]);
  });

  it('parallel updates and removals of different lines all land', async () => {
    const ids = await createProducts(10);
    const cookie = await guest();
    const keys: string[] = [];
    for (const id of ids) {
      keys.push(
        (await call(0, 'POST', '/cart/add', { product_id: id }, cookie)).body.cart_item_key as string,
      );
    }
    const results = await Promise.all(
      keys.map((key, i) =>
        i % 2 === 0
          ? call(i, 'POST', '/cart/update', { cart_item_key: key, quantity: i + 2 }, cookie)
          : call(i, 'POST', '/cart/remove', { cart_item_key: key }, cookie),
      ),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    const items = (await call(1, 'GET', '/cart', undefined, cookie)).body.items as Items;
    expect(Object.fromEntries(items.map((i) => [i.key, i.quantity]))).toEqual(
      Object.fromEntries(keys.flatMap((k, i) => (i % 2 === 0 ? [[k, i + 2]] : []))),
    );
  });
});
