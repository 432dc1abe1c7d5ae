import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { createCustomer } from '../helpers/factories.js';

// GET /v1/users and GET /v1/users/{id} (docs/administration.md, 'The first administrator').

let t: TestApp;
let ids: number[];
beforeAll(async () => {
  t = await createTestApp();
  const made = [];
  for (const [email, first, last] of [
    ['ada.listed@example.com', 'Ada', 'Lovelace'],
    ['grace.listed@example.com', 'Grace', 'Hopper'],
    ['plain.listed@example.com', '', ''],
  ] as const) {
    const res = await admin(t, 'POST', '/users', {
      email,
      password: 'a-long-password',
      first_name: first,
      last_name: last,
    });
    expect(res.statusCode).toBe(201);
    made.push((res.json() as { id: number }).id);
  }
  ids = made;
});
afterAll(async () => t.close());

const FIELDS = ['email', 'first_name', 'id', 'last_name', 'role'];

describe('GET /users', () => {
  it('lists newest first with the totals, in the public shape only', async () => {
    const res = await admin(t, 'GET', '/users?search=listed');
    expect(res.statusCode).toBe(200);
    const users = res.json() as Record<string, unknown>[];
    expect(users.map((u) => u.id)).toEqual([...ids].reverse());
    expect(res.headers['x-wp-total']).toBe('3');
    expect(res.headers['x-wp-totalpages']).toBe('1');
    for (const u of users) expect(Object.keys(u).sort()).toEqual(FIELDS);
    expect(res.body).not.toMatch(/password|hash|session|nonce/i);
  });

  it('filters by role and searches email and full name ignoring case', async () => {
    const customers = (await admin(t, 'GET', '/users?role=customer&per_page=100')).json() as {
      role: string;
    }[];
    expect(customers.length).toBeGreaterThanOrEqual(3);
    expect(customers.every((u) => u.role === 'customer')).toBe(true);
    const admins = (await admin(t, 'GET', '/users?role=administrator')).json() as { role: string }[];
    expect(admins.length).toBeGreaterThan(0);
    expect(admins.every((u) => u.role === 'administrator')).toBe(true);
    const find = async (q: string) =>
      ((await admin(t, 'GET', `/users?search=${encodeURIComponent(q)}`)).json() as { id: number }[]).map(
        (u) => u.id,
      );
    expect(await find('GRACE.LISTED')).toEqual([ids[1]]);
    expect(await find('ada lovelace')).toEqual([ids[0]]);
    expect(await find('%')).toEqual([]);
    expect(await find('_')).toEqual([]);
  });

  it('pages', async () => {
    const res = await admin(t, 'GET', '/users?search=listed&per_page=2&page=2');
    expect((res.json() as { id: number }[]).map((u) => u.id)).toEqual([ids[0]]);
    expect(res.headers['x-wp-totalpages']).toBe('2');
  });

  it('refuses bad parameters with 400 codes', async () => {
    for (const q of ['role=owner', 'page=0', 'per_page=101', 'per_page=abc', 'search=', "role=customer'--"]) {
      expectError(await admin(t, 'GET', `/users?${q}`), 400, 'rest_invalid_param');
    }
    expectError(await admin(t, 'GET', '/users?orderby=email'), 400, 'invalid_parameters');
  });
});

describe('GET /users/{id}', () => {
  it('answers one user in the public shape, 404 user_not_found when missing', async () => {
    const res = await admin(t, 'GET', `/users/${ids[0]}`);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(FIELDS);
    expect(res.json()).toMatchObject({ id: ids[0], email: 'ada.listed@example.com', first_name: 'Ada' });
    expectError(await admin(t, 'GET', '/users/999999'), 404, 'user_not_found');
    expectError(await admin(t, 'GET', '/users/abc'), 400, 'rest_invalid_param');
  });

  it('is for administrators only', async () => {
    const c = await createCustomer(t);
    for (const url of ['/v1/users', `/v1/users/${c.id}`]) {
      expectError(await t.app.inject({ method: 'GET', url }), 401, 'rest_not_logged_in');
      expectError(await t.app.inject({ method: 'GET', url, headers: c.headers }), 403, 'rest_forbidden');
    }
  });
});
