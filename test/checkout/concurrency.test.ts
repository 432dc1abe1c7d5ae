import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectUnderTest } from '../helpers/db.js';
import { type Cluster, type ServerProcess, startCluster } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Parallel submits over real HTTP. SQLite: one server process. PostgreSQL: two server processes
 * on one database, requests alternating, so only the atomic conditional updates keep counts exact.
 */
let cluster: Cluster;
let servers: ServerProcess[] = [];
let adminHeaders: Record<string, string>;

beforeAll(async () => {
  cluster = await startCluster();
  servers = cluster.servers;
  adminHeaders = cluster.adminHeaders;
  await adminCall('PATCH', '/settings', { checkout_rate_limit: 1000 });
  // Another server process sees a settings change within a second (its settings cache): wait
  // until every process does, or its first submits meet the default limit of 5 per address.
  for (const server of servers) {
    await waitFor(
      async () => (await adminCall('GET', '/settings', undefined, server)).checkout_rate_limit === 1000,
      `${server.url} to see checkout_rate_limit 1000`,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
  }
}, 90_000);

afterAll(async () => cluster.stop());

async function adminCall(method: string, path: string, body?: unknown, server = servers[0]!) {
  const res = await fetch(`${server.url}/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...adminHeaders },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

async function submit(i: number, body: Record<string, unknown>) {
  const res = await fetch(`${servers[i % servers.length]!.url}/v1/checkout/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      payment_method: 'test_card',
      billing: {
        first_name: 'P',
        last_name: 'Q',
        email: `parallel-${i}-${Math.random()}@example.com`,
        country: 'US',
      },
      ...body,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const ordersWith = async (
  pred: (o: { coupons: { code: string }[]; items: { product_id: number }[] }) => boolean,
) => {
  const list = (await adminCall('GET', '/orders?per_page=100')) as unknown as {
    coupons: { code: string }[];
    items: { product_id: number }[];
  }[];
  return list.filter(pred).length;
};

describe(`parallel submits over HTTP (${dialectUnderTest})`, () => {
  it('20 parallel submits with a coupon of usage_limit 5 give exactly 5 orders with it', async () => {
    const product = await adminCall('POST', '/products', { name: 'Coupon target', price: '10.00' });
    await adminCall('POST', '/coupons', {
      code: 'FIVEONLY',
      discount_type: 'percent',
      amount: '10',
      usage_limit: 5,
    });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        submit(i, { items: [{ product_id: product.id, qty: 1 }], coupons: ['FIVEONLY'] }),
      ),
    );
    const ok = results.filter((r) => r.body.ok === true);
    expect(ok).toHaveLength(5);
    for (const r of results.filter((x) => x.body.ok !== true))
      expect(r.body.error_code).toBe('coupon_failed');
    expect(await ordersWith((o) => o.coupons.some((c) => c.code === 'fiveonly'))).toBe(5);
    const coupons = (await adminCall('GET', '/coupons')) as unknown as {
      code: string;
      usage_count: number;
    }[];
    expect(coupons.find((c) => c.code === 'fiveonly')?.usage_count).toBe(5);
  }, 60_000);

  it('20 parallel submits for a product with stock 3 give exactly 3 orders', async () => {
    const product = await adminCall('POST', '/products', {
      name: 'Scarce',
      price: '10.00',
      stock_quantity: 3,
    });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => submit(i, { items: [{ product_id: product.id, qty: 1 }] })),
    );
    expect(results.filter((r) => r.body.ok === true)).toHaveLength(3);
    expect(await ordersWith((o) => o.items.some((i) => i.product_id === product.id))).toBe(3);
    const after = await adminCall('GET', `/products/${product.id}`);
    expect(after.stock_quantity).toBe(0);
  }, 60_000);
});
