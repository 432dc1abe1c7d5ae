import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../helpers/server.js';

/**
 * Invoice numbers under real parallel payments over HTTP. SQLite: one server process.
 * PostgreSQL: two server processes on one database, the payments spread over both; only the
 * sequence row held by each payment's transaction keeps the numbers consecutive.
 */
let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 90_000);
afterAll(() => cluster.stop());

async function call(i: number, method: string, path: string, body?: unknown) {
  const server = cluster.servers[i % cluster.servers.length]!;
  const res = await fetch(`${server.url}/v1${path}`, {
    method,
    headers: {
      ...cluster.adminHeaders,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

describe('invoice numbers across processes', () => {
  it('50 orders paid at once on every process take 50 consecutive numbers', async () => {
    expect((await call(0, 'PATCH', '/settings', { checkout_rate_limit: 1000 })).status).toBe(200);
    const gateway = await call(0, 'PATCH', '/payment-gateways/bacs', {
      enabled: true,
      instructions: 'Pay to Acme',
    });
    expect(gateway.status).toBe(200);
    const product = await call(0, 'POST', '/products', { name: 'Parallel Kit', price: '9.00' });
    expect(product.status).toBe(201);
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) {
      // Placed on the process whose settings just changed (another caches them for a second).
      const placed = await call(0, 'POST', '/checkout/submit', {
        items: [{ product_id: (product.body as { id: number }).id, qty: 1 }],
        billing: { first_name: 'P', last_name: 'Q', email: `parallel-${i}@example.com`, country: 'GB' },
        payment_method: 'bacs',
      });
      expect(placed.status).toBe(200);
      ids.push((placed.body as { order_id: number }).order_id);
    }
    const paid = await Promise.all(
      ids.map((id, i) => call(i, 'POST', `/orders/${id}/status`, { status: 'processing' })),
    );
    expect(paid.map((r) => r.status)).toEqual(ids.map(() => 200));
    const rows = await cluster.database.database.db
      .selectFrom('invoices')
      .select(['order_id', 'number'])
      .where('kind', '=', 'invoice')
      .execute();
    expect(rows.map((r) => r.order_id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    const year = new Date().getUTCFullYear();
    // A new store is in test mode: its orders are numbered in the test sequence.
    expect(rows.map((r) => r.number).sort()).toEqual(
      ids.map((_, i) => `TEST-INV-${year}-${String(i + 1).padStart(6, '0')}`),
    );
  }, 120_000);
});
