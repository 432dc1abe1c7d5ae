import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, admin, adminOk, createTestApp, expectError, postForm, type TestApp } from '../helpers/app.js';
import { createCustomer, makeZip, softwareProduct, uniqueEmail } from '../helpers/factories.js';

// The administrator changes recorded besides the catalogue's, licensing's and releases' own
// (docs/admin.md, 'Audit trail'): users, subscriptions and their renewal orders, payment gateways,
// webhook redeliveries and catalogue files. What each records, that a secret never appears, and
// that a refused request or one that changes nothing records nothing.

interface Event {
  actor: { user_id: number; email: string };
  entity_type: string;
  entity_id: number;
  action: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const history = async (type: string, id?: number) => {
  const res = await admin(
    t,
    'GET',
    `/audit-events?entity_type=${type}${id === undefined ? '' : `&entity_id=${id}`}`,
  );
  expect(res.statusCode).toBe(200);
  return { events: res.json() as Event[], body: res.body };
};
const total = async () => Number((await admin(t, 'GET', '/audit-events?per_page=1')).headers['x-wp-total']);

async function product() {
  return adminOk<{ id: number }>(t, 'POST', '/products', {
    name: `Audited ${uniqueEmail('p')}`,
    type: 'simple',
    price: '12.00',
    licensing_enabled: 'yes',
  });
}

describe('users', () => {
  it('records a user created by an administrator, never the password', async () => {
    const email = uniqueEmail('new');
    const password = 'the-secret-password-1';
    const user = await adminOk<{ id: number }>(t, 'POST', '/users', {
      email,
      password,
      role: 'customer',
      first_name: 'Grace',
    });
    const { events, body } = await history('user', user.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'create',
      actor: { email: ADMIN.email },
      changes: {
        email: { before: null, after: email },
        role: { before: null, after: 'customer' },
        first_name: { before: null, after: 'Grace' },
      },
    });
    expect(Object.keys(events[0]!.changes).sort()).toEqual(['email', 'first_name', 'last_name', 'role']);
    expect(body).not.toContain(password);
    expect(body).not.toMatch(/password|hash/i);
  });

  it('a refused creation (taken email, bad input, a customer) records nothing', async () => {
    const customer = await createCustomer(t);
    const before = await total();
    expectError(
      await admin(t, 'POST', '/users', { email: customer.email, password: 'another-password-1' }),
      409,
      'email_exists',
    );
    expect(
      (await admin(t, 'POST', '/users', { email: 'x@example.com', password: 'p', extra: 1 })).statusCode,
    ).toBe(400);
    const asCustomer = await t.app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: customer.headers,
      payload: { email: uniqueEmail(), password: 'a-long-password-1' },
    });
    expectError(asCustomer, 403, 'rest_forbidden');
    expect(await total()).toBe(before);
  });
});

describe('subscriptions', () => {
  it('records creation, a status change, and nothing for the same status again', async () => {
    const p = await product();
    const customer = await createCustomer(t);
    const sub = await adminOk<{ id: number }>(t, 'POST', '/subscriptions', {
      user_id: customer.id,
      product_id: p.id,
    });
    let { events } = await history('subscription', sub.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'create',
      changes: {
        user_id: { before: null, after: customer.id },
        product_id: { before: null, after: p.id },
        status: { before: null, after: 'active' },
      },
    });
    await adminOk(t, 'POST', `/subscriptions/${sub.id}/status`, { status: 'on-hold', reason: 'asked' });
    ({ events } = await history('subscription', sub.id));
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      action: 'status',
      changes: {
        status: { before: 'active', after: 'on-hold' },
        status_reason: { before: '', after: 'asked' },
      },
    });
    const before = await total();
    await adminOk(t, 'POST', `/subscriptions/${sub.id}/status`, { status: 'on-hold', reason: 'asked' });
    expect((await admin(t, 'POST', `/subscriptions/${sub.id}/status`, { status: 'paused' })).statusCode).toBe(
      400,
    );
    expect((await admin(t, 'POST', '/subscriptions/999999/status', { status: 'active' })).statusCode).toBe(
      404,
    );
    expect(await total()).toBe(before);
  });

  it('records a renewal order made by the administrator as its creation, once', async () => {
    const p = await product();
    const customer = await createCustomer(t);
    const sub = await adminOk<{ id: number }>(t, 'POST', '/subscriptions', {
      user_id: customer.id,
      product_id: p.id,
    });
    const order = await adminOk<{ id: number }>(t, 'POST', `/subscriptions/${sub.id}/renewal-orders`);
    const { events } = await history('order', order.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'create',
      changes: {
        status: { before: null, after: 'pending' },
        created_via: { before: null, after: 'renewal' },
        subscription_id: { before: null, after: sub.id },
      },
    });
    // Pressed again, it finds the same order: nothing new.
    const before = await total();
    const again = await adminOk<{ id: number }>(t, 'POST', `/subscriptions/${sub.id}/renewal-orders`);
    expect(again.id).toBe(order.id);
    expect(await total()).toBe(before);
  });
});

describe('payment gateways', () => {
  it('records each changed field under its gateway, and nothing for the same value', async () => {
    // The test card: a store in test mode switches it either way without further conditions.
    const gateway = (await adminOk<{ id: string; enabled: boolean }[]>(t, 'GET', '/payment-gateways')).find(
      (g) => g.id === 'test_card',
    );
    const id = gateway!.id;
    await adminOk(t, 'PATCH', `/payment-gateways/${id}`, { enabled: !gateway!.enabled, currencies: ['EUR'] });
    const { events } = await history('payment_gateway', 0);
    expect(events[0]).toMatchObject({
      entity_id: 0,
      action: 'update',
      changes: {
        [`${id}.enabled`]: { before: gateway!.enabled, after: !gateway!.enabled },
        [`${id}.currencies`]: { before: expect.any(Array), after: ['EUR'] },
      },
    });
    const before = await total();
    await adminOk(t, 'PATCH', `/payment-gateways/${id}`, { enabled: !gateway!.enabled });
    await adminOk(t, 'PATCH', `/payment-gateways/${id}`, {});
    expectError(
      await admin(t, 'PATCH', `/payment-gateways/${id}`, { currencies: ['XXQ'] }),
      400,
      'invalid_currency',
    );
    expectError(
      await admin(t, 'PATCH', '/payment-gateways/nope', { enabled: true }),
      404,
      'gateway_not_found',
    );
    expect(await total()).toBe(before);
  });
});

describe('webhook redelivery', () => {
  it('records the event rescheduled, never its payload; an unknown event records nothing', async () => {
    await t.app.services.outbox.record('license.revoked', { license_id: 424242 });
    const row = await t.app.services.database.db
      .selectFrom('webhook_events')
      .selectAll()
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    const res = await admin(t, 'POST', `/webhooks/events/${row.event_id}/redeliver`, {});
    expect(res.statusCode).toBe(202);
    const { events, body } = await history('webhook_event', row.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'redeliver',
      changes: { event_id: { before: row.event_id, after: row.event_id } },
    });
    expect(body).not.toContain('424242');
    const before = await total();
    expectError(
      await admin(t, 'POST', '/webhooks/events/00000000-0000-4000-8000-000000000000/redeliver', {}),
      404,
      'webhook_event_not_found',
    );
    expect(await total()).toBe(before);
  });
});

describe('catalogue files', () => {
  it('records an upload, its protection and the removal of its public copy, each once', async () => {
    const p = await softwareProduct(t);
    const zip = makeZip();
    const up = await postForm(t, `/v1/products/${p.id}/downloads`, [
      ['file', { filename: 'kit.zip', content: zip }],
    ]);
    expect(up.statusCode).toBe(201);
    const download = up.json() as { download_id: string; file_sha256: string };
    const { events: created } = await history('legacy_download');
    expect(created[0]).toMatchObject({
      action: 'create',
      changes: {
        download_id: { before: null, after: download.download_id },
        product_id: { before: null, after: p.id },
        file_sha256: { before: null, after: download.file_sha256 },
      },
    });
    const legacyId = created[0]!.entity_id;

    const url = `/software/products/${p.id}/artifacts/protect`;
    const first = await admin(t, 'POST', url, { download_id: download.download_id });
    expect(first.statusCode).toBe(201);
    const artifactId = (first.json() as { artifact_id: number }).artifact_id;
    const { events: protectedEvents } = await history('artifact', artifactId);
    expect(protectedEvents).toHaveLength(1);
    expect(protectedEvents[0]).toMatchObject({
      action: 'protect',
      changes: { artifact_download_id: { before: null, after: download.download_id } },
    });
    let before = await total();
    expect((await admin(t, 'POST', url, { download_id: download.download_id })).statusCode).toBe(200);
    expect(await total()).toBe(before);

    const draft = await adminOk<{ version_id: number }>(t, 'POST', `/software/products/${p.id}/versions`, {
      version: '1.0.0',
      legacy_download_id: download.download_id,
      status: 'draft',
    });
    const remove = `/software/products/${p.id}/versions/${draft.version_id}/delete-public-source`;
    expect((await adminOk(t, 'POST', remove, {})).removed).toBe(true);
    const { events: removed } = await history('legacy_download', legacyId);
    expect(removed[0]).toMatchObject({
      action: 'remove_public_source',
      changes: { removed_at: { before: null, after: expect.any(String) } },
    });
    before = await total();
    expect((await adminOk(t, 'POST', remove, {})).removed).toBe(false);
    expect(await total()).toBe(before);
  });
});
