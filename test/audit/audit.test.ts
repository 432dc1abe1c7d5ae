import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, admin, adminOk, createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { adminId, createCustomer, createProduct, licenseFixture } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

interface Event {
  id: number;
  actor: { user_id: number; email: string };
  entity_type: string;
  entity_id: number;
  action: string;
  changes: Record<string, { before: unknown; after: unknown }>;
  created_at: string;
}

const events = async (query = '') => {
  const res = await admin(t, 'GET', `/audit-events${query}`);
  expect(res.statusCode).toBe(200);
  return res.json() as Event[];
};
const count = async () =>
  Number(
    (
      await t.app.services.database.db
        .selectFrom('audit_events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('licenses', () => {
  it('an issue makes one event: the actor, the fields after, the key only by its last 4 characters', async () => {
    const before = await count();
    const { license } = await licenseFixture(t, {}, { activation_limit: 3 });
    expect(await count()).toBe(before + 1);
    const [e] = await events(`?entity_type=license&entity_id=${license.id}`);
    expect(e).toMatchObject({
      actor: { user_id: await adminId(t), email: ADMIN.email },
      entity_type: 'license',
      entity_id: license.id,
      action: 'create',
    });
    expect(e!.changes.activation_limit).toEqual({ before: null, after: 3 });
    expect(e!.changes.license_key).toEqual({ before: null, after: `…${license.license_key.slice(-4)}` });
    expect(JSON.stringify(e)).not.toContain(license.license_key);
    expect(Date.parse(e!.created_at)).not.toBeNaN();
  });

  it('a PATCH records only the changed fields, before -> after; an unchanged value records nothing', async () => {
    const { license } = await licenseFixture(t, {}, { activation_limit: 3 });
    await adminOk(t, 'PATCH', `/licenses/${license.id}`, { activation_limit: 5 });
    const [e] = await events(`?entity_type=license&entity_id=${license.id}`);
    expect(e!.action).toBe('update');
    expect(e!.changes).toEqual({ activation_limit: { before: 3, after: 5 } });
    const n = await count();
    await adminOk(t, 'PATCH', `/licenses/${license.id}`, { activation_limit: 5 });
    expect(await count()).toBe(n);
  });

  it('a refused PATCH (wrong types, unknown fields, malformed JSON, unknown license) records nothing', async () => {
    const { license } = await licenseFixture(t);
    const n = await count();
    expect(
      (await admin(t, 'PATCH', `/licenses/${license.id}`, { activation_limit: 'many' })).statusCode,
    ).toBe(400);
    expect(
      (await admin(t, 'PATCH', `/licenses/${license.id}`, { usage_expires_at: 'not a date' })).statusCode,
    ).toBe(400);
    const malformed = await t.app.inject({
      method: 'PATCH',
      url: `/v1/licenses/${license.id}`,
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"activation_limit":',
    });
    expect(malformed.statusCode).toBe(400);
    expectError(
      await admin(t, 'PATCH', '/licenses/999999', { activation_limit: 2 }),
      404,
      'license_not_found',
    );
    expect(await count()).toBe(n);
  });

  it('a revocation records the status change once; revoking again records nothing', async () => {
    const { license } = await licenseFixture(t);
    await adminOk(t, 'DELETE', `/licenses/${license.id}`);
    const n = await count();
    await adminOk(t, 'DELETE', `/licenses/${license.id}`);
    expect(await count()).toBe(n);
    const [e] = await events(`?entity_type=license&entity_id=${license.id}`);
    expect(e).toMatchObject({
      action: 'revoke',
      changes: { status: { before: 'active', after: 'revoked' } },
    });
  });
});

describe('products', () => {
  it('create, update and software configuration each record one event of the changed fields', async () => {
    const product = await createProduct(t, { name: 'Audited', price: '10.00' });
    const [created] = await events(`?entity_type=product&entity_id=${product.id}`);
    expect(created).toMatchObject({ action: 'create', actor: { email: ADMIN.email } });
    expect(created!.changes.name).toEqual({ before: null, after: 'Audited' });
    // The slug a new product is given from its name is part of what it was created with.
    expect(created!.changes.slug).toEqual({ before: null, after: 'audited' });
    await adminOk(t, 'PATCH', `/products/${product.id}`, { name: 'Audited 2', price: '10.00' });
    const [updated] = await events(`?entity_type=product&entity_id=${product.id}`);
    expect(updated!.action).toBe('update');
    expect(updated!.changes).toEqual({ name: { before: 'Audited', after: 'Audited 2' } });
    await adminOk(t, 'POST', `/software/products/${product.id}/config`, { slug: `audited-${product.id}` });
    const [software] = await events(`?entity_type=product&entity_id=${product.id}`);
    expect(software!.action).toBe('update_software');
    expect(software!.changes.slug).toEqual({ before: 'audited', after: `audited-${product.id}` });
  });

  it('a refused product PATCH records nothing', async () => {
    const product = await createProduct(t);
    const n = await count();
    expect((await admin(t, 'PATCH', `/products/${product.id}`, { price: { amount: 1 } })).statusCode).toBe(
      400,
    );
    expect(
      (await admin(t, 'PATCH', `/products/${product.id}`, { name: 'x', unknown_field: 1 })).statusCode,
    ).toBe(400);
    expect(await count()).toBe(n);
  });
});

describe('settings', () => {
  it('records each changed setting before -> after, and a secret only as changed', async () => {
    await adminOk(t, 'PATCH', '/settings', { token_expiry: 7, webhook_secret: 'whsec-very-secret-value' });
    const [e] = await events('?entity_type=settings');
    expect(e).toMatchObject({ entity_type: 'settings', entity_id: 0, action: 'update' });
    expect(e!.changes.token_expiry).toEqual({ before: 5, after: 7 });
    expect(e!.changes.webhook_secret).toBeDefined();
    expect(JSON.stringify(e)).not.toContain('whsec-very-secret-value');
    const rows = await t.app.services.database.db.selectFrom('audit_events').select('changes').execute();
    expect(rows.some((r) => r.changes.includes('whsec-very-secret-value'))).toBe(false);
  });

  it('an invalid PATCH records nothing', async () => {
    const n = await count();
    expect((await admin(t, 'PATCH', '/settings', { token_expiry: 'soon' })).statusCode).toBe(400);
    expect((await admin(t, 'PATCH', '/settings', { no_such_setting: 1 })).statusCode).toBe(400);
    expect(await count()).toBe(n);
  });
});

describe('GET /audit-events', () => {
  it('newest first, paginated with X-WP-Total and X-WP-TotalPages', async () => {
    const { license } = await licenseFixture(t, {}, { activation_limit: 1 });
    for (const limit of [2, 3, 4])
      await adminOk(t, 'PATCH', `/licenses/${license.id}`, { activation_limit: limit });
    const res = await admin(t, 'GET', `/audit-events?entity_type=license&entity_id=${license.id}&per_page=3`);
    expect(res.headers['x-wp-total']).toBe('4');
    expect(res.headers['x-wp-totalpages']).toBe('2');
    const page1 = res.json() as Event[];
    expect(page1.map((e) => e.changes.activation_limit?.after)).toEqual([4, 3, 2]);
    const page2 = await events(`?entity_type=license&entity_id=${license.id}&per_page=3&page=2`);
    expect(page2.map((e) => e.action)).toEqual(['create']);
    const ids = [...page1, ...page2].map((e) => e.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
  });

  it('filters by actor', async () => {
    const all = await events(`?actor_user_id=${await adminId(t)}&per_page=100`);
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((e) => e.actor.email === ADMIN.email)).toBe(true);
    const res = await admin(t, 'GET', '/audit-events?actor_user_id=2147483647');
    expect(res.json()).toEqual([]);
    expect(res.headers['x-wp-total']).toBe('0');
  });

  it('refuses wrong types, unknown parameters and hostile strings', async () => {
    for (const q of [
      '?entity_type=nope',
      '?entity_type=license%00',
      '?entity_id=abc',
      '?actor_user_id=-1',
      '?page=0',
      '?per_page=101',
      '?color=red',
      "?entity_type=license'%20OR%201=1--",
    ]) {
      expect((await admin(t, 'GET', `/audit-events${q}`)).statusCode, q).toBe(400);
    }
    expectError(await admin(t, 'GET', '/audit-events?color=red'), 400, 'invalid_parameters');
    expectError(await admin(t, 'GET', '/audit-events?entity_id=abc'), 400, 'rest_invalid_param');
  });

  it('anonymous 401, customer 403', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/v1/audit-events' }), 401, 'rest_not_logged_in');
    const customer = await createCustomer(t);
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/audit-events', headers: customer.headers }),
      403,
      'rest_forbidden',
    );
  });

  it('a product fixture written straight to the database records nothing (only API changes are audited)', async () => {
    const n = await count();
    await createProduct(t, {}, { via: 'database' });
    expect(await count()).toBe(n);
  });
});
