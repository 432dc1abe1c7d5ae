import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { admin, adminOk, createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { dialectUnderTest } from '../helpers/db.js';
import { type Customer, createCustomer, createProduct, uniqueEmail } from '../helpers/factories.js';

// The console's customer and subscription lists (docs/admin.md, 'Customers' and 'Subscriptions'):
// GET /v1/subscriptions, GET /v1/orders?subscription_id=, GET /v1/users?sort=&order=.

let t: TestApp;
let alice: Customer;
let bob: Customer;
let p1: number;
let p2: number;
/** S1..S4 in creation order; see beforeAll. */
let ids: number[];

interface SubItem {
  id: number;
  user_id: number;
  product_id: number;
  status: string;
  next_payment_at: string | null;
  user_email: string;
  user_name: string;
  product_name: string;
}

beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  alice = await createCustomer(t, uniqueEmail('alice'));
  bob = await createCustomer(t, uniqueEmail('bob'));
  const sub = { type: 'subscription', price: '10.00', subscription: { period: 'month', interval: 1 } };
  p1 = (await createProduct(t, { ...sub, name: 'Plan One' })).id;
  p2 = (await createProduct(t, { ...sub, name: 'Plan Two' })).id;
  const at = (days: number) =>
    new Date(t.app.services.clock.now().getTime() + days * 86400_000).toISOString();
  const create = async (user_id: number, product_id: number, next: string | null, status = 'active') =>
    (
      await adminOk<{ id: number }>(t, 'POST', '/subscriptions', {
        user_id,
        product_id,
        status,
        next_payment_at: next,
      })
    ).id;
  ids = [
    await create(alice.id, p1, at(20)),
    await create(alice.id, p2, null, 'cancelled'),
    await create(bob.id, p1, at(5)),
    await create(bob.id, p2, at(5), 'on-hold'),
  ];
});
afterAll(async () => t.close());

/** The list's ids as S-numbers (1-based positions in `ids`), for readable expectations. */
async function list(query: string) {
  const res = await admin(t, 'GET', `/subscriptions?${query}`);
  expect(res.statusCode).toBe(200);
  const rows = res.json() as SubItem[];
  return {
    order: rows.map((s) => ids.indexOf(s.id) + 1),
    rows,
    total: Number(res.headers['x-wp-total']),
    pages: Number(res.headers['x-wp-totalpages']),
  };
}

// First, before any other test runs the same statements: SQLite's statements are prepared once
// and cached, and only a fresh prepare can be seen here.
describe.runIf(dialectUnderTest === 'sqlite')('the list query plans', () => {
  /** The plans of the SELECT statements a request prepares on `table`. */
  async function plans(url: string, table: string): Promise<string[]> {
    const sqlite = t.db.database.sqlite!;
    const spy = vi.spyOn(sqlite, 'prepare');
    const res = await admin(t, 'GET', url);
    expect(res.statusCode).toBe(200);
    const from = new RegExp(`from "${table}"`, 'i');
    const statements = spy.mock.calls.map((c) => String(c[0])).filter((s) => from.test(s));
    spy.mockRestore();
    expect(statements.length).toBeGreaterThan(0);
    const details: string[] = [];
    for (const statement of statements) {
      const parameters = statement.split('?').length - 1;
      const plan = sqlite
        .prepare(`explain query plan ${statement}`)
        .all(...Array.from({ length: parameters }, () => 'x')) as { detail: string }[];
      details.push(...plan.map((p) => p.detail));
    }
    return details;
  }

  it.each([
    ['sort=created_at', 'SCAN s USING INDEX subscriptions_created'],
    ['sort=next_payment_at', 'SCAN s USING INDEX subscriptions_next_payment'],
    ['status=active', 'SEARCH s USING INDEX subscriptions_status (status=?)'],
    ['user_id=1', 'SEARCH s USING INDEX subscriptions_user (user_id=?)'],
    ['product_id=1', 'SEARCH s USING INDEX subscriptions_product (product_id=?)'],
  ])('subscriptions %s reads its index and sorts nothing', async (query, access) => {
    const details = await plans(`/subscriptions?${query}`, 'subscriptions');
    expect(details[0]).toBe(access);
    expect(details.filter((d) => /TEMP B-TREE/.test(d))).toEqual([]);
  });

  it('orders by subscription read their index and sort nothing', async () => {
    const details = await plans('/orders?subscription_id=1', 'orders');
    expect(details[0]).toBe('SEARCH orders USING INDEX orders_subscription (subscription_id=?)');
    expect(details.filter((d) => /TEMP B-TREE/.test(d))).toEqual([]);
  });

  it.each([
    ['sort=email', 'SEARCH users USING INDEX users_role_email (role=?)'],
    ['sort=name', 'SEARCH users USING INDEX users_role_name (role=?)'],
  ])('customers %s read their index and sort nothing', async (query, access) => {
    const details = await plans(`/users?role=customer&${query}`, 'users');
    expect(details[0]).toBe(access);
    expect(details.filter((d) => /TEMP B-TREE/.test(d))).toEqual([]);
  });
});

describe('GET /v1/subscriptions', () => {
  it('lists newest first with the totals in X-WP-Total and X-WP-TotalPages', async () => {
    const all = await list('');
    expect(all.order).toEqual([4, 3, 2, 1]);
    expect(all.total).toBe(4);
    expect(all.pages).toBe(1);
    const first = all.rows[3]!;
    expect(first).toMatchObject({
      id: ids[0],
      user_id: alice.id,
      product_id: p1,
      status: 'active',
      user_email: alice.email,
      product_name: 'Plan One',
    });
    expect(typeof first.user_name).toBe('string');
    // The item is the one subscription as GET /subscriptions/{id} answers it, with three more fields.
    const one = await adminOk(t, 'GET', `/subscriptions/${ids[0]}`);
    expect(Object.keys(first).sort()).toEqual(
      [...Object.keys(one), 'user_email', 'user_name', 'product_name'].sort(),
    );
  });

  it('filters by status, customer and product, with the filtered total', async () => {
    expect(await list('status=active')).toMatchObject({ order: [3, 1], total: 2 });
    expect(await list(`user_id=${alice.id}`)).toMatchObject({ order: [2, 1], total: 2 });
    expect(await list(`product_id=${p2}`)).toMatchObject({ order: [4, 2], total: 2 });
    expect(await list(`user_id=${bob.id}&product_id=${p1}&status=active`)).toMatchObject({
      order: [3],
      total: 1,
    });
    expect(await list('status=expired')).toMatchObject({ order: [], total: 0, pages: 0 });
    expect(await list('user_id=2147483647')).toMatchObject({ order: [], total: 0 });
  });

  it('sorts by creation and next payment, no next payment first ascending, ties by id, on both databases', async () => {
    expect((await list('sort=id&order=asc')).order).toEqual([1, 2, 3, 4]);
    expect((await list('sort=created_at')).order).toEqual([4, 3, 2, 1]);
    expect((await list('sort=created_at&order=asc')).order).toEqual([1, 2, 3, 4]);
    expect((await list('sort=next_payment_at')).order).toEqual([2, 3, 4, 1]);
    expect((await list('sort=next_payment_at&order=desc')).order).toEqual([1, 4, 3, 2]);
  });

  it('pages without overlap', async () => {
    const pages = [];
    for (const page of [1, 2, 3]) pages.push(await list(`sort=next_payment_at&per_page=2&page=${page}`));
    expect(pages.map((p) => p.order)).toEqual([[2, 3], [4, 1], []]);
    expect(pages.map((p) => [p.total, p.pages])).toEqual([
      [4, 2],
      [4, 2],
      [4, 2],
    ]);
  });

  it('refuses a wrong sort, order, status, id or page with rest_invalid_param', async () => {
    for (const query of [
      'sort=name',
      's.id',
      "sort=id';--",
      'sort=',
      'order=up',
      'order=ASC',
      'sort=id&sort=created_at',
      'status=paused',
      "status=active' or 1=1--",
      'user_id=0',
      'user_id=abc',
      'product_id=-1',
      'product_id=2147483648',
      'page=0',
      'per_page=101',
      'per_page=1.5',
    ]) {
      const q = query === 's.id' ? 'sort=s.id' : query;
      expectError(await admin(t, 'GET', `/subscriptions?${q}`), 400, 'rest_invalid_param');
    }
  });

  it('refuses an unknown parameter with invalid_parameters', async () => {
    for (const query of ['customer=1', 'sort_by=id', 'search=x', `user=${alice.id}`]) {
      expectError(await admin(t, 'GET', `/subscriptions?${query}`), 400, 'invalid_parameters');
    }
  });

  it('answers an anonymous caller 401 and a customer 403', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/v1/subscriptions' }), 401, 'rest_not_logged_in');
    // Even a malformed query: the caller is checked first.
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/subscriptions?sort=x' }),
      401,
      'rest_not_logged_in',
    );
    const res = await t.app.inject({ method: 'GET', url: '/v1/subscriptions', headers: alice.headers });
    expect(res.statusCode).toBe(403);
    expect((res.json() as { code: string }).code).toBe('rest_forbidden');
  });
});

describe('GET /v1/orders?subscription_id= (renewal orders)', () => {
  it("answers the subscription's renewal orders only", async () => {
    const renewal = await adminOk<{ id: number; created_via: string }>(
      t,
      'POST',
      `/subscriptions/${ids[2]}/renewal-orders`,
    );
    expect(renewal.created_via).toBe('renewal');
    const orders = await adminOk<{ id: number; subscription_id: number }[]>(
      t,
      'GET',
      `/orders?subscription_id=${ids[2]}`,
    );
    expect(orders.map((o) => o.id)).toEqual([renewal.id]);
    expect(await adminOk<unknown[]>(t, 'GET', `/orders?subscription_id=${ids[0]}`)).toEqual([]);
    // With the customer filter too.
    expect(
      (
        await adminOk<{ id: number }[]>(t, 'GET', `/orders?subscription_id=${ids[2]}&customer_id=${bob.id}`)
      ).map((o) => o.id),
    ).toEqual([renewal.id]);
    expect(
      await adminOk<unknown[]>(t, 'GET', `/orders?subscription_id=${ids[2]}&customer_id=${alice.id}`),
    ).toEqual([]);
  });

  it('refuses a wrong subscription id with rest_invalid_param and an unknown parameter with invalid_parameters', async () => {
    for (const value of ['0', '-1', 'abc', '1.5', '2147483648', "1' or 1=1--"]) {
      expectError(
        await admin(t, 'GET', `/orders?subscription_id=${encodeURIComponent(value)}`),
        400,
        'rest_invalid_param',
      );
    }
    expectError(await admin(t, 'GET', '/orders?subscription=1'), 400, 'invalid_parameters');
  });

  it('answers an anonymous caller 401 and a customer 403', async () => {
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/orders?subscription_id=1' }),
      401,
      'rest_not_logged_in',
    );
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/orders?subscription_id=1',
      headers: bob.headers,
    });
    expect(res.statusCode).toBe(403);
    expect((res.json() as { code: string }).code).toBe('rest_forbidden');
  });
});

describe('GET /v1/users sorting', () => {
  let people: { id: number; email: string }[];
  beforeAll(async () => {
    // Names and emails whose orders differ, all in one letter case (both databases then agree).
    const make = async (email: string, first_name: string, last_name: string) =>
      adminOk<{ id: number; email: string }>(t, 'POST', '/users', {
        email,
        password: 'customer-password-1',
        role: 'customer',
        first_name,
        last_name,
      });
    people = [
      await make('zed-sort@example.com', 'Ann', 'Baker'),
      await make('amy-sort@example.com', 'Cleo', 'Adams'),
      await make('max-sort@example.com', 'Abe', 'Baker'),
    ];
  });

  const users = async (query: string) => {
    const res = await admin(t, 'GET', `/users?role=customer&search=-sort%40&${query}`);
    expect(res.statusCode).toBe(200);
    return {
      order: (res.json() as { id: number }[]).map((u) => people.findIndex((p) => p.id === u.id) + 1),
      total: Number(res.headers['x-wp-total']),
    };
  };

  it('keeps newest first by default and sorts by email and by name (last, then first)', async () => {
    expect(await users('')).toEqual({ order: [3, 2, 1], total: 3 });
    expect((await users('sort=id&order=asc')).order).toEqual([1, 2, 3]);
    expect((await users('sort=email')).order).toEqual([2, 3, 1]);
    expect((await users('sort=email&order=desc')).order).toEqual([1, 3, 2]);
    expect((await users('sort=name')).order).toEqual([2, 3, 1]);
    expect((await users('sort=name&order=desc')).order).toEqual([1, 3, 2]);
    expect((await users('sort=name&per_page=2&page=2')).order).toEqual([1]);
  });

  it('refuses an unknown sort key or order with rest_invalid_param', async () => {
    for (const query of ['sort=password_hash', 'sort=last_name', "sort=email';--", 'order=up', 'sort=']) {
      expectError(await admin(t, 'GET', `/users?${query}`), 400, 'rest_invalid_param');
    }
    expectError(await admin(t, 'GET', '/users?orderby=email'), 400, 'invalid_parameters');
  });

  it('answers an anonymous caller 401 and a customer 403', async () => {
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/users?sort=email' }),
      401,
      'rest_not_logged_in',
    );
    const res = await t.app.inject({ method: 'GET', url: '/v1/users?sort=email', headers: alice.headers });
    expect(res.statusCode).toBe(403);
  });
});
