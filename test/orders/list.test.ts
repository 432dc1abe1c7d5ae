import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { admin, createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { dialectUnderTest } from '../helpers/db.js';
import { createOrder, createProduct } from '../helpers/factories.js';

// The administrator's order list reports its totals as the other lists do (docs/api.md, 'Lists'),
// and counts them from an index.

let t: TestApp;
let ids: number[];

beforeAll(async () => {
  t = await createTestApp();
  // Eight orders from one client: past checkout's default limit of recent orders.
  expect((await admin(t, 'PATCH', '/settings', { checkout_rate_limit: 100 })).statusCode).toBe(200);
  const product = await createProduct(t);
  ids = [];
  for (let i = 0; i < 5; i++)
    ids.push((await createOrder(t, { items: [{ product_id: product.id, qty: 1 }] })).order_id);
  // Two of the five move on to completed.
  for (const id of ids.slice(0, 2)) {
    expect((await admin(t, 'POST', `/orders/${id}/status`, { status: 'completed' })).statusCode).toBe(200);
  }
});
afterAll(async () => t.close());

async function page(query: string) {
  const res = await admin(t, 'GET', `/orders?${query}`);
  expect(res.statusCode).toBe(200);
  return {
    ids: (res.json() as { id: number }[]).map((o) => o.id),
    total: res.headers['x-wp-total'],
    pages: res.headers['x-wp-totalpages'],
  };
}

describe('GET /orders totals', () => {
  it('sends X-WP-Total and X-WP-TotalPages for the whole filter, whatever the page', async () => {
    const first = await page('per_page=2');
    expect(first).toEqual({ ids: [ids[4], ids[3]], total: '5', pages: '3' });
    const last = await page('per_page=2&page=3');
    expect(last).toEqual({ ids: [ids[0]], total: '5', pages: '3' });
    // A page past the end is empty and still tells the totals.
    expect(await page('per_page=2&page=9')).toEqual({ ids: [], total: '5', pages: '3' });
  });

  it('counts only what the filter matches', async () => {
    expect(await page('status=completed')).toEqual({ ids: [ids[1], ids[0]], total: '2', pages: '1' });
    expect((await page('status=cancelled')).total).toBe('0');
    expect((await page('status=cancelled')).pages).toBe('0');
    expect((await page('customer_id=2147483647')).total).toBe('0');
    expect((await page('subscription_id=1')).total).toBe('0');
  });

  it('refuses unknown and malformed parameters with 400 and no totals', async () => {
    for (const query of ['statuss=completed', 'per_page=0', 'per_page=101', 'page=abc', "status=x'--"]) {
      const res = await admin(t, 'GET', `/orders?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.headers['x-wp-total']).toBeUndefined();
    }
    expectError(await admin(t, 'GET', '/orders?statuss=completed'), 400, 'invalid_parameters');
    expectError(await admin(t, 'GET', '/orders?status=shipped'), 400, 'rest_invalid_param');
  });
});

describe('GET /orders sorted', () => {
  // After the totals above: three more orders whose totals differ (3, 1 and 2 of the product).
  it('sorts by total or by creation, either way, ties broken by id', async () => {
    const product = await createProduct(t);
    const made: number[] = [];
    for (const qty of [3, 1, 2]) {
      made.push((await createOrder(t, { items: [{ product_id: product.id, qty }] })).order_id);
    }
    const all = [...ids, ...made];
    const byTotalDesc = await page('sort=total&per_page=3');
    expect(byTotalDesc.ids).toEqual([made[0], made[2], made[1]]);
    expect(byTotalDesc.total).toBe(String(all.length));
    // Ascending: the five of one unit and the new one of one unit, by id, then two, then three.
    const byTotalAsc = await page('sort=total&order=asc&per_page=100');
    expect(byTotalAsc.ids).toEqual([...ids, made[1], made[2], made[0]]);
    expect((await page('order=asc&per_page=100')).ids).toEqual(all);
    expect((await page('sort=id&order=desc&per_page=100')).ids).toEqual([...all].reverse());
    // With a filter.
    expect((await page('status=completed&sort=total&order=asc')).ids).toEqual([ids[0], ids[1]]);
  });

  it('refuses an unknown sort or order with 400 rest_invalid_param', async () => {
    for (const query of ['sort=date', 'sort=total;drop', 'order=up', 'order=']) {
      expectError(await admin(t, 'GET', `/orders?${query}`), 400, 'rest_invalid_param');
    }
  });
});

describe.runIf(dialectUnderTest === 'sqlite')('the order list query plans', () => {
  // An app of its own: statements are prepared once per SQL text and then reused from the
  // connection's cache, so each query below must be that app's first of its kind.
  let p: TestApp;
  beforeAll(async () => {
    p = await createTestApp();
  });
  afterAll(async () => p.close());

  /** The plans of the SELECT statements on orders a list request prepares. */
  async function plans(query: string): Promise<{ statement: string; details: string[] }[]> {
    const sqlite = p.db.database.sqlite!;
    const spy = vi.spyOn(sqlite, 'prepare');
    const res = await admin(p, 'GET', `/orders?${query}`);
    expect(res.statusCode).toBe(200);
    const statements = spy.mock.calls.map((c) => String(c[0])).filter((s) => /from "orders"/i.test(s));
    spy.mockRestore();
    return statements.map((statement) => {
      const parameters = statement.split('?').length - 1;
      const plan = sqlite
        .prepare(`explain query plan ${statement}`)
        .all(...Array.from({ length: parameters }, () => 'x')) as { detail: string }[];
      return { statement, details: plan.map((p) => p.detail) };
    });
  }

  // The count reads one index alone (COVERING), never the table: at 100,000 orders it reads the
  // smallest index, or for a filter only the filter's entries. The page walks the table in id
  // order (or the filter's index, which ends with the id) and stops after the page: no sort.
  it.each([
    ['', /^SCAN orders USING COVERING INDEX \w+$/],
    ['status=pending', /^SEARCH orders USING COVERING INDEX orders_status \(status=\?\)$/],
    ['customer_id=1', /^SEARCH orders USING COVERING INDEX orders_customer \(customer_id=\?\)$/],
    ['subscription_id=1', /^SEARCH orders USING COVERING INDEX orders_subscription \(subscription_id=\?\)$/],
  ])('"%s": the count reads only an index, the page sorts nothing', async (query, access) => {
    const statements = await plans(query);
    const counts = statements.filter((s) => /count\(\*\)/i.test(s.statement));
    expect(counts).toHaveLength(1);
    expect(counts[0]!.details).toHaveLength(1);
    expect(counts[0]!.details[0]).toMatch(access);
    const pages = statements.filter((s) => /order by/i.test(s.statement));
    expect(pages).toHaveLength(1);
    expect(pages[0]!.details.filter((d) => /TEMP B-TREE|^SCAN orders USING/.test(d))).toEqual([]);
  });

  // Sorted by total, the page walks orders_total and stops after the page (its count is the same
  // statement as the unsorted list's, above).
  it.each(['sort=total', 'sort=total&order=asc'])('"%s": the page walks orders_total', async (query) => {
    const pages = (await plans(query)).filter((s) => /order by/i.test(s.statement));
    expect(pages).toHaveLength(1);
    expect(pages[0]!.details).toEqual(['SCAN orders USING INDEX orders_total']);
  });
});
