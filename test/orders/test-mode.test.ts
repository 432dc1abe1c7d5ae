import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  adminOk,
  createTestApp,
  expectError,
  post,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import {
  BILLING,
  createCustomer,
  createOrder,
  createProduct,
  identity,
  OFFLINE_INSTRUCTIONS,
  uniqueEmail,
} from '../helpers/factories.js';

/**
 * Test mode and live mode (docs/payments.md, 'Test mode and live mode'): a new store starts in
 * test mode with only the test card on; its orders and licenses are marked test, listed apart, left
 * out of the dashboard and deleted in one action; a live store refuses the test card.
 */
let t: TestApp;
let productId: number;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { checkout_rate_limit: 1000 });
  productId = (await createProduct(t, { name: 'Mode Kit', price: '30.00' })).id;
});
afterAll(async () => t.close());

interface GatewayJson {
  id: string;
  enabled: boolean;
  instructions: string;
}
const gateways = async () =>
  Object.fromEntries(
    (await adminOk<GatewayJson[]>(t, 'GET', '/payment-gateways')).map((g) => [g.id, g.enabled]),
  );
const mode = async () => (await adminOk<{ store_mode: string }>(t, 'GET', '/settings')).store_mode;

/** A guest order paid by the test card: an account is made for the buyer, and a license issued. */
async function cardOrder(): Promise<{ order_id: number; order_key: string }> {
  const placed = await createOrder(t, { items: [{ product_id: productId, qty: 1 }] });
  const paid = await t.app.inject({
    method: 'POST',
    url: `/v1/checkout/pay-order/${placed.order_id}`,
    payload: {
      key: placed.order_key,
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    },
  });
  expect(paid.json(), paid.body).toMatchObject({ ok: true });
  return placed;
}

const licensesOf = async (orderId: number) =>
  (
    await adminOk<{ licenses: { id: number; order_id: number; test: boolean; license_key: string }[] }>(
      t,
      'GET',
      '/licenses?per_page=500',
    )
  ).licenses.filter((l) => l.order_id === orderId);

async function tokenFor(licenseId: number, activationId: number | null, userId: number | null) {
  const now = new Date().toISOString();
  await t.app.services.database.db
    .insertInto('download_tokens')
    .values({
      token_hash: `${Math.random()}`.padEnd(64, '0'),
      binding_version: 1,
      policy: 'protected',
      product_id: productId,
      release_id: 1,
      artifact_id: 1,
      artifact_sha256: 'a'.repeat(64),
      purpose: 'update',
      license_id: licenseId,
      activation_id: activationId,
      activation_revision: activationId === null ? null : 1,
      identity_key: null,
      installation_id: null,
      domain_normalized: null,
      user_id: userId,
      created_at: now,
      expires_at: now,
      used_at: null,
      invalidated_at: null,
      invalidated_reason: null,
    })
    .execute();
}

const count = async (table: 'orders' | 'licenses' | 'activations' | 'download_tokens' | 'subscriptions') =>
  Number(
    (
      await t.app.services.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

let testOrder: { order_id: number; order_key: string };
let unpaidTestOrder: { order_id: number; order_key: string };
let liveOrderId: number;

describe('a new store', () => {
  it('is in test mode with only the test card enabled', async () => {
    expect(await mode()).toBe('test');
    expect(await gateways()).toEqual({ bacs: false, cheque: false, test_card: true, stripe: false });
  });

  it('enables an offline gateway only with its payment instructions (400 gateway_instructions_required)', async () => {
    expectError(
      await admin(t, 'PATCH', '/payment-gateways/bacs', { enabled: true }),
      400,
      'gateway_instructions_required',
    );
    expectError(
      await admin(t, 'PATCH', '/payment-gateways/cheque', { enabled: true, instructions: '  \n ' }),
      400,
      'gateway_instructions_required',
    );
    expect(await gateways()).toMatchObject({ bacs: false, cheque: false });
    // Instructions alone may be saved, and cleared, while the gateway is off.
    await adminOk(t, 'PATCH', '/payment-gateways/cheque', { instructions: 'Payable to Example Ltd' });
    await adminOk(t, 'PATCH', '/payment-gateways/cheque', { instructions: '' });
    const on = await adminOk<GatewayJson>(t, 'PATCH', '/payment-gateways/bacs', {
      enabled: true,
      instructions: OFFLINE_INSTRUCTIONS.bacs,
    });
    expect(on).toMatchObject({ enabled: true, instructions: OFFLINE_INSTRUCTIONS.bacs });
    // An enabled offline gateway keeps its instructions.
    expectError(
      await admin(t, 'PATCH', '/payment-gateways/bacs', { instructions: ' ' }),
      400,
      'gateway_instructions_required',
    );
    expect((await adminOk<GatewayJson[]>(t, 'GET', '/payment-gateways'))[0]!.instructions).toBe(
      OFFLINE_INSTRUCTIONS.bacs,
    );
  });
});

describe('test orders and licenses', () => {
  it('are marked test, listed apart and left out of the dashboard', async () => {
    testOrder = await cardOrder();
    unpaidTestOrder = await createOrder(t, { items: [{ product_id: productId, qty: 1 }] });
    const order = await adminOk<{ test: boolean; status: string }>(t, 'GET', `/orders/${testOrder.order_id}`);
    expect(order).toMatchObject({ test: true, status: 'processing' });
    const [license] = await licensesOf(testOrder.order_id);
    expect(license).toMatchObject({ test: true });
    expect((await adminOk<{ test: boolean }>(t, 'GET', `/licenses/${license!.id}`)).test).toBe(true);

    const ids = async (query: string) =>
      (await adminOk<{ id: number }[]>(t, 'GET', `/orders${query}`)).map((o) => o.id);
    expect(await ids('?test=true')).toEqual([unpaidTestOrder.order_id, testOrder.order_id]);
    expect(await ids('?test=false')).toEqual([]);
    expect(await ids('')).toEqual([unpaidTestOrder.order_id, testOrder.order_id]);
    const licenseIds = async (query: string) =>
      (await adminOk<{ licenses: { id: number }[] }>(t, 'GET', `/licenses${query}`)).licenses.map(
        (l) => l.id,
      );
    expect(await licenseIds('?test=true')).toEqual([license!.id]);
    expect(await licenseIds('?test=false')).toEqual([]);
    expectError(await admin(t, 'GET', '/orders?test=maybe'), 400, 'rest_invalid_param');

    const report = await adminOk<{ sales: unknown[]; new_licenses: { total: number } }>(
      t,
      'GET',
      '/reports/dashboard',
    );
    expect(report.sales).toEqual([]);
    expect(report.new_licenses.total).toBe(0);

    // A site activates the test license, and a download token is bound to it.
    const activated = await post(t, '/licenses/activate', {
      license_key: license!.license_key,
      ...identity(),
    });
    expect(activated.statusCode, activated.body).toBe(200);
    const activation = await t.app.services.database.db
      .selectFrom('activations')
      .select('id')
      .where('license_id', '=', license!.id)
      .executeTakeFirstOrThrow();
    await tokenFor(license!.id, activation.id, null);
  });
});

describe('going live', () => {
  it('needs a gateway that takes real payments (409 live_gateway_required) and changes nothing without one', async () => {
    await adminOk(t, 'PATCH', '/payment-gateways/bacs', { enabled: false });
    expectError(await admin(t, 'PATCH', '/settings', { store_mode: 'live' }), 409, 'live_gateway_required');
    expect(await mode()).toBe('test');
    expect(await gateways()).toMatchObject({ test_card: true });
    expectError(
      await admin(t, 'PATCH', '/settings', { store_mode: 'production' }),
      400,
      'rest_invalid_param',
    );
  });

  it('switches the test card off, recorded in the audit trail', async () => {
    await adminOk(t, 'PATCH', '/payment-gateways/bacs', { enabled: true });
    const settings = await adminOk<{ store_mode: string }>(t, 'PATCH', '/settings', { store_mode: 'live' });
    expect(settings.store_mode).toBe('live');
    expect(await gateways()).toEqual({ bacs: true, cheque: false, test_card: false, stripe: false });
    const events = await adminOk<{ entity_type: string; changes: Record<string, unknown> }[]>(
      t,
      'GET',
      '/audit-events?per_page=5',
    );
    // Newest first: the test card is switched off inside the settings' change, before it is recorded.
    expect(events.slice(0, 2).map((e) => [e.entity_type, e.changes])).toEqual([
      ['settings', { store_mode: { before: 'test', after: 'live' } }],
      ['payment_gateway', { 'test_card.enabled': { before: true, after: false } }],
    ]);
  });

  it('refuses the test card: enabling it, checkout submit and pay-order are 403 test_mode_only', async () => {
    expectError(
      await admin(t, 'PATCH', '/payment-gateways/test_card', { enabled: true }),
      403,
      'test_mode_only',
    );
    expect(await gateways()).toMatchObject({ test_card: false });
    const before = await count('orders');
    const submit = await t.app.inject({
      method: 'POST',
      url: '/v1/checkout/submit',
      payload: {
        items: [{ product_id: productId, qty: 1 }],
        payment_method: 'test_card',
        billing: { ...BILLING, email: uniqueEmail() },
      },
    });
    expect(submit.statusCode).toBe(403);
    expect(submit.json()).toMatchObject({ error_code: 'test_mode_only' });
    expect(await count('orders')).toBe(before);
    // The order placed in test mode and never paid: not with the test card now.
    const pay = await t.app.inject({
      method: 'POST',
      url: `/v1/checkout/pay-order/${unpaidTestOrder.order_id}`,
      payload: {
        key: unpaidTestOrder.order_key,
        payment_method: 'test_card',
        payment_data: { card_number: '4242424242424242' },
      },
    });
    expect(pay.statusCode).toBe(403);
    expect(pay.json()).toMatchObject({ error_code: 'test_mode_only' });
    const order = await adminOk<{ status: string }>(t, 'GET', `/orders/${unpaidTestOrder.order_id}`);
    expect(order.status).toBe('pending');
  });

  it('makes real orders and licenses (test false)', async () => {
    const customer = await createCustomer(t);
    const placed = await createOrder(t, {
      items: [{ product_id: productId, qty: 1 }],
      payment_method: 'bacs',
      billing: { ...BILLING, email: customer.email },
    });
    liveOrderId = placed.order_id;
    await adminOk(t, 'POST', `/orders/${liveOrderId}/status`, { status: 'processing' });
    expect((await adminOk<{ test: boolean }>(t, 'GET', `/orders/${liveOrderId}`)).test).toBe(false);
    const [license] = await licensesOf(liveOrderId);
    expect(license).toMatchObject({ test: false });
    const activated = await post(t, '/licenses/activate', {
      license_key: license!.license_key,
      ...identity(),
    });
    expect(activated.statusCode, activated.body).toBe(200);
    await tokenFor(license!.id, null, customer.id);
    expect((await adminOk<{ id: number }[]>(t, 'GET', '/orders?test=false')).map((o) => o.id)).toEqual([
      liveOrderId,
    ]);
    const report = await adminOk<{ sales: { orders: number }[] }>(t, 'GET', '/reports/dashboard');
    expect(report.sales.map((c) => c.orders)).toEqual([1]);
  });
});

describe('DELETE /test-data', () => {
  it('is for administrators, and refuses a query', async () => {
    expectError(await t.app.inject({ method: 'DELETE', url: '/v1/test-data' }), 401, 'rest_not_logged_in');
    const customer = await createCustomer(t);
    expectError(
      await t.app.inject({ method: 'DELETE', url: '/v1/test-data', headers: customer.headers }),
      403,
      'rest_forbidden',
    );
    expectError(await admin(t, 'DELETE', '/test-data?orders=all'), 400, 'invalid_parameters');
    expect((await adminOk<unknown[]>(t, 'GET', '/orders?test=true')).length).toBe(2);
  });

  it('deletes the test orders, their licenses, activations and tokens once, in either mode; live data stays', async () => {
    const live = {
      order: await adminOk(t, 'GET', `/orders/${liveOrderId}`),
      licenses: await licensesOf(liveOrderId),
    };
    const before = {
      activations: await count('activations'),
      download_tokens: await count('download_tokens'),
      licenses: await count('licenses'),
    };
    // Two at once: the rows go once.
    const [a, b] = await Promise.all([admin(t, 'DELETE', '/test-data'), admin(t, 'DELETE', '/test-data')]);
    expect([a.statusCode, b.statusCode], `${a.body} ${b.body}`).toEqual([200, 200]);
    const sum = (k: string) => (a.json()[k] as number) + (b.json()[k] as number);
    expect({
      orders: sum('orders'),
      licenses: sum('licenses'),
      activations: sum('activations'),
      download_tokens: sum('download_tokens'),
      subscriptions: sum('subscriptions'),
    }).toEqual({ orders: 2, licenses: 1, activations: 1, download_tokens: 1, subscriptions: 0 });
    expect(await adminOk<unknown[]>(t, 'GET', '/orders?test=true')).toEqual([]);
    expect(await count('activations')).toBe(before.activations - 1);
    expect(await count('download_tokens')).toBe(before.download_tokens - 1);
    expect(await count('licenses')).toBe(before.licenses - 1);
    expectError(await admin(t, 'GET', `/orders/${testOrder.order_id}`), 404, 'order_not_found');
    // The live order and its license, activation and token are as they were.
    expect(await adminOk(t, 'GET', `/orders/${liveOrderId}`)).toEqual(live.order);
    expect(await licensesOf(liveOrderId)).toEqual(live.licenses);
    const events = await adminOk<{ entity_type: string; action: string }[]>(
      t,
      'GET',
      '/audit-events?entity_type=test_data',
    );
    expect(events.map((e) => e.action)).toEqual(['delete', 'delete']);
    // Nothing left: a zero answer.
    expect(await adminOk(t, 'DELETE', '/test-data')).toEqual({
      orders: 0,
      licenses: 0,
      activations: 0,
      download_tokens: 0,
      subscriptions: 0,
    });
  });
});

describe('back to test mode', () => {
  it('is allowed and switches nothing back on: the test card stays off until enabled', async () => {
    expect(
      (await adminOk<{ store_mode: string }>(t, 'PATCH', '/settings', { store_mode: 'test' })).store_mode,
    ).toBe('test');
    expect(await gateways()).toMatchObject({ test_card: false, bacs: true });
    await adminOk(t, 'PATCH', '/payment-gateways/test_card', { enabled: true });
    const placed = await cardOrder();
    expect((await adminOk<{ test: boolean }>(t, 'GET', `/orders/${placed.order_id}`)).test).toBe(true);
  });
});
