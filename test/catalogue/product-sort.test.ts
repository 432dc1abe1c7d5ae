import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { createProduct } from '../helpers/factories.js';

// Sorting the administrator's product list (docs/catalogue.md, 'Listing products').

let t: TestApp;
/** P1..P4 in creation order. */
let ids: number[];
beforeAll(async () => {
  t = await createTestApp();
  const made = [
    await createProduct(t, { name: 'banana sort', price: '20.00', status: 'publish' }),
    await createProduct(t, { name: 'Apple sort', price: '20.00', status: 'draft' }),
    await createProduct(t, { name: 'cherry sort', price: '5.00', status: 'publish' }),
    await createProduct(t, { name: 'apple sort', price: '99.00', status: 'draft' }),
  ];
  ids = made.map((p) => p.id);
});
afterAll(async () => t.close());

async function list(query: string) {
  const res = await admin(t, 'GET', `/products?search=sort&${query}`);
  expect(res.statusCode).toBe(200);
  return {
    order: (res.json() as { id: number }[]).map((p) => ids.indexOf(p.id) + 1),
    total: Number(res.headers['x-wp-total']),
  };
}

describe('GET /products sorting', () => {
  it('keeps the default order, newest first', async () => {
    expect((await list('')).order).toEqual([4, 3, 2, 1]);
    expect((await list('sort=id&order=asc')).order).toEqual([1, 2, 3, 4]);
    expect((await list('sort=created_at&order=asc')).order).toEqual([1, 2, 3, 4]);
  });

  it('sorts by name without letter case, by price and by status, ties by id', async () => {
    expect((await list('sort=name')).order).toEqual([2, 4, 1, 3]);
    expect((await list('sort=name&order=desc')).order).toEqual([3, 1, 4, 2]);
    expect((await list('sort=price')).order).toEqual([3, 1, 2, 4]);
    expect((await list('sort=price&order=desc')).order).toEqual([4, 2, 1, 3]);
    expect((await list('sort=status')).order).toEqual([2, 4, 1, 3]);
  });

  it('pages a sorted list without overlap', async () => {
    expect(await list('sort=name&per_page=3&page=1')).toEqual({ order: [2, 4, 1], total: 4 });
    expect(await list('sort=name&per_page=3&page=2')).toEqual({ order: [3], total: 4 });
  });

  it('refuses an unknown sort key or order with rest_invalid_param', async () => {
    for (const query of ['sort=price_minor', 'sort=lower(name)', "sort=name';--", 'order=down', 'sort=']) {
      expectError(await admin(t, 'GET', `/products?${query}`), 400, 'rest_invalid_param');
    }
  });
});
