import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { licensesOfOrder, payOrder } from '../checkout/helpers.js';
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
  enableOfflineGateways,
  identity,
  uniqueEmail,
} from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  // Orders here are paid by bank transfer or cheque, which a new store starts without.
  await enableOfflineGateways(t);
  await setSettings(t, { checkout_rate_limit: 1000 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;

interface Refund {
  id: number;
  order_id: number;
  amount: string;
  reason: string;
  full: boolean;
  restock: boolean;
  created_at: string;
  actor: { user_id: number; email: string } | null;
}
interface Note {
  id: number;
  order_id: number;
  kind: string;
  body: string;
  actor: { user_id: number; email: string } | null;
}
interface Order {
  status: string;
  total: string;
  refunded_total: string;
}

const events = async (event: 'license.revoked' | 'subscription.status_changed') =>
  (
    await db()
      .selectFrom('webhook_events')
      .select('payload')
      .where('event', '=', event)
      .orderBy('id')
      .execute()
  ).map((r) => JSON.parse(r.payload) as { data: Record<string, unknown> });

/** A bank-transfer order of `qty` × the product, which the administrator then marks paid. */
async function paidOrder(opts: { price?: string; qty?: number; stock?: number } = {}) {
  const product = await createProduct(t, {
    price: opts.price ?? '30.00',
    activation_limit: 2,
    ...(opts.stock === undefined ? {} : { stock_quantity: opts.stock }),
  });
  const out = await createOrder(t, {
    items: [{ product_id: product.id, qty: opts.qty ?? 1 }],
    billing: { ...BILLING, email: uniqueEmail('refund') },
    payment_method: 'bacs',
  });
  await adminOk(t, 'POST', `/orders/${out.order_id}/status`, { status: 'processing' });
  return { product, id: out.order_id };
}

const refund = (id: number, body: unknown) => admin(t, 'POST', `/orders/${id}/refunds`, body);
const getOrder = (id: number) => adminOk<Order>(t, 'GET', `/orders/${id}`);
const refundsOf = (id: number) =>
  adminOk<{ refunds: Refund[]; refunded_total: string; remaining: string }>(
    t,
    'GET',
    `/orders/${id}/refunds`,
  );
const notesOf = async (id: number) =>
  (await adminOk<{ notes: Note[] }>(t, 'GET', `/orders/${id}/notes`)).notes;

async function activatedLicense(orderId: number) {
  const [license] = await licensesOfOrder(t, orderId);
  const site = identity(`refund-${orderId}.example.com`);
  const res = await post(t, '/licenses/activate', { license_key: license!.license_key, ...site });
  expect(res.statusCode, res.body).toBe(200);
  return {
    license: license!,
    validate: () => post(t, '/licenses/validate', { license_key: license!.license_key, ...site }),
  };
}

describe('full refunds and what they do to licenses', () => {
  it('revoke (the default): the order is refunded, its license revoked with license.revoked, validate 403', async () => {
    const { id } = await paidOrder();
    const { license, validate } = await activatedLicense(id);
    expect((await validate()).statusCode).toBe(200);
    const before = (await events('license.revoked')).length;
    const res = await refund(id, { amount: '30.00', reason: 'Asked within 14 days' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json() as Refund;
    expect(body).toMatchObject({ order_id: id, amount: '30.00', reason: 'Asked within 14 days', full: true });
    expect(body.actor?.email).toBe('admin@example.com');
    expect(typeof body.created_at).toBe('string');
    expect(await getOrder(id)).toMatchObject({ status: 'refunded', refunded_total: '30.00' });
    const v = await validate();
    expect(v.statusCode).toBe(403);
    expect(v.json()).toMatchObject({ valid: false, error: 'revoked', effective_status: 'revoked' });
    const revoked = await events('license.revoked');
    expect(revoked.length).toBe(before + 1);
    expect(revoked.at(-1)!.data).toEqual({ license_id: Number(license.id) });
    // A refunded order is not refunded again, its status no longer changes, and it is not paid again.
    expectError(await refund(id, { amount: '1.00' }), 409, 'order_not_refundable');
    expectError(
      await admin(t, 'POST', `/orders/${id}/status`, { status: 'processing' }),
      409,
      'order_refunded',
    );
    expectError(
      await admin(t, 'POST', `/orders/${id}/status`, { status: 'refunded' }),
      400,
      'rest_invalid_param',
    );
    // The audit trail has the refund.
    const audit = await db()
      .selectFrom('audit_events')
      .selectAll()
      .where('entity_type', '=', 'order')
      .where('entity_id', '=', id)
      .where('action', '=', 'refund')
      .execute();
    expect(audit).toHaveLength(1);
  });

  it('suspend: validate answers license_inactive, and the administrator reinstates the license', async () => {
    await setSettings(t, { refund_license_action: 'suspend' });
    try {
      const { id } = await paidOrder();
      const { license, validate } = await activatedLicense(id);
      const before = (await events('license.revoked')).length;
      expect((await refund(id, { amount: 30 })).statusCode).toBe(201);
      const v = await validate();
      expect(v.statusCode).toBe(403);
      expect(v.json()).toMatchObject({ error: 'license_inactive', effective_status: 'license_inactive' });
      expect((await events('license.revoked')).length).toBe(before);
      const shown = await adminOk<{ status: string }>(t, 'GET', `/licenses/${license.id}`);
      expect(shown.status).toBe('suspended');
      const listed = await adminOk<{ licenses: { id: number }[] }>(t, 'GET', '/licenses?status=suspended');
      expect(listed.licenses.map((l) => l.id)).toContain(Number(license.id));
      const back = await admin(t, 'PATCH', `/licenses/${license.id}`, { status: 'active' });
      expect(back.statusCode, back.body).toBe(200);
      expect((await validate()).statusCode).toBe(200);
    } finally {
      await setSettings(t, { refund_license_action: 'revoke' });
    }
  });

  it('keep: the license stays valid; a revoked license cannot be reinstated', async () => {
    await setSettings(t, { refund_license_action: 'keep' });
    try {
      const { id } = await paidOrder();
      const { license, validate } = await activatedLicense(id);
      expect((await refund(id, { amount: '30' })).statusCode).toBe(201);
      expect((await getOrder(id)).status).toBe('refunded');
      expect((await validate()).statusCode).toBe(200);
      await adminOk(t, 'DELETE', `/licenses/${license.id}`);
      expectError(
        await admin(t, 'PATCH', `/licenses/${license.id}`, { status: 'active' }),
        409,
        'license_revoked',
      );
      expectError(
        await admin(t, 'PATCH', `/licenses/${license.id}`, { status: 'revoked' }),
        400,
        'rest_invalid_param',
      );
    } finally {
      await setSettings(t, { refund_license_action: 'revoke' });
    }
  });

  it('settings: refund_license_action takes revoke, suspend or keep only', async () => {
    expectError(
      await admin(t, 'PATCH', '/settings', { refund_license_action: 'delete' }),
      400,
      'rest_invalid_param',
    );
    expect(
      (await adminOk<{ refund_license_action: string }>(t, 'GET', '/settings')).refund_license_action,
    ).toBe('revoke');
  });
});

describe('partial refunds, stock and subscriptions', () => {
  it('partial refunds change nothing but the refunded total; the last one completes the refund', async () => {
    const { id } = await paidOrder({ price: '10.00', qty: 3 });
    const { validate } = await activatedLicense(id);
    const first = await refund(id, { amount: '12.34', reason: 'One seat' });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ amount: '12.34', full: false });
    expect(await getOrder(id)).toMatchObject({ status: 'processing', refunded_total: '12.34' });
    expect((await validate()).statusCode).toBe(200);
    expectError(await refund(id, { amount: '17.67' }), 409, 'refund_exceeds_total');
    expect((await refund(id, { amount: 7.66 })).json()).toMatchObject({ amount: '7.66', full: false });
    const list = await refundsOf(id);
    expect(list).toMatchObject({ refunded_total: '20.00', remaining: '10.00' });
    expect(list.refunds.map((r) => r.amount)).toEqual(['12.34', '7.66']);
    expect((await refund(id, { amount: '10.00' })).json()).toMatchObject({ full: true });
    expect(await getOrder(id)).toMatchObject({ status: 'refunded', refunded_total: '30.00' });
    expect((await validate()).statusCode).toBe(403);
  });

  it('restock gives the held stock back on a full refund; restock false keeps it taken', async () => {
    const a = await paidOrder({ stock: 5, qty: 2 });
    const stock = async (pid: number) =>
      (await adminOk<{ stock_quantity: number }>(t, 'GET', `/products/${pid}`)).stock_quantity;
    expect(await stock(a.product.id)).toBe(3);
    await refund(a.id, { amount: '30.00' });
    expect(await stock(a.product.id)).toBe(3); // a partial refund leaves stock alone
    await refund(a.id, { amount: '30.00' });
    expect(await stock(a.product.id)).toBe(5);
    const b = await paidOrder({ stock: 5, qty: 2 });
    expect((await refund(b.id, { amount: '60.00', restock: false })).json()).toMatchObject({
      restock: false,
    });
    expect(await stock(b.product.id)).toBe(3);
  });

  it('a full refund cancels the subscription the order started, with subscription.status_changed', async () => {
    const product = await createProduct(t, {
      type: 'subscription',
      price: '10.00',
      subscription: { period: 'month', interval: 1 },
    });
    const email = uniqueEmail('subref');
    const customer = await createCustomer(t, email);
    const b = new Browser(t);
    await b.login(email, customer.password);
    const out = await createOrder(
      t,
      { items: [{ product_id: product.id, qty: 1 }], billing: { ...BILLING, email } },
      b,
    );
    const pay = await payOrder(b, out.order_id, {
      key: out.order_key,
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    });
    expect(pay.statusCode).toBe(200);
    const sub = await db()
      .selectFrom('subscriptions')
      .select(['id', 'status'])
      .where('parent_order_id', '=', out.order_id)
      .executeTakeFirstOrThrow();
    expect(sub.status).toBe('active');
    const total = (await getOrder(out.order_id)).total;
    expect((await refund(out.order_id, { amount: total })).statusCode).toBe(201);
    // A refunded order is not paid again (409 order_already_paid): its licenses stay as the refund left them.
    const again = await payOrder(b, out.order_id, {
      key: out.order_key,
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    });
    expect(again.statusCode).toBe(409);
    expect((await getOrder(out.order_id)).status).toBe('refunded');
    // The customer's order page shows the order refunded, and how much.
    const mine = await t.app.inject({
      method: 'GET',
      url: `/account/orders/${out.order_id}`,
      headers: { cookie: b.cookieHeader() },
    });
    expect(mine.statusCode).toBe(200);
    expect(mine.body).toContain('data-status="refunded"');
    expect(mine.body).toContain(`Refunded:</span> <strong>${total}</strong>`);
    const after = await adminOk<{ status: string }>(t, 'GET', `/subscriptions/${sub.id}`);
    expect(after.status).toBe('cancelled');
    expect((await events('subscription.status_changed')).at(-1)!.data).toEqual({
      subscription_id: Number(sub.id),
      status: 'cancelled',
      reason: 'order_refunded',
    });
  });
});

describe('refusals', () => {
  it('every refusal answers its status and code and changes nothing', async () => {
    const { id } = await paidOrder();
    const bad: [unknown, number, string][] = [
      [{ amount: '0' }, 400, 'invalid_refund_amount'],
      [{ amount: 0 }, 400, 'invalid_refund_amount'],
      [{ amount: '-5' }, 400, 'invalid_refund_amount'],
      [{ amount: -5 }, 400, 'invalid_refund_amount'],
      [{ amount: 'NaN' }, 400, 'invalid_refund_amount'],
      [{ amount: 'Infinity' }, 400, 'invalid_refund_amount'],
      [{ amount: '1e3' }, 400, 'invalid_refund_amount'],
      [{ amount: '1.005' }, 400, 'invalid_refund_amount'],
      [{ amount: 1e308 }, 400, 'invalid_refund_amount'],
      [{ amount: '99999999999999999999999999' }, 400, 'invalid_refund_amount'],
      [{ amount: 'x'.repeat(41) }, 400, 'invalid_refund_amount'],
      [{ amount: '' }, 400, 'invalid_refund_amount'],
      [{ amount: ' ' }, 400, 'invalid_refund_amount'],
      [{ amount: true }, 400, 'invalid_refund_amount'],
      [{ amount: null }, 400, 'invalid_refund_amount'],
      [{ amount: ['1'] }, 400, 'invalid_refund_amount'],
      [{ amount: '30.01' }, 409, 'refund_exceeds_total'],
      [{ amount: '1000000' }, 409, 'refund_exceeds_total'],
      [{}, 400, 'rest_missing_param'],
      [{ amount: '1', extra: 1 }, 400, 'invalid_parameters'],
      [{ amount: '1', restock: 'yes' }, 400, 'rest_invalid_param'],
      [{ amount: '1', reason: 7 }, 400, 'rest_invalid_param'],
      [{ amount: '1', reason: 'a\u0000b' }, 400, 'rest_invalid_param'],
      [{ amount: '1', reason: 'line\nbreak' }, 400, 'rest_invalid_param'],
      [{ amount: '1', reason: 'r'.repeat(501) }, 400, 'rest_invalid_param'],
      [['1.00'], 400, 'rest_invalid_param'],
    ];
    for (const [body, status, code] of bad) {
      const res = await refund(id, body);
      expect(res.statusCode, `${JSON.stringify(body)} → ${res.body}`).toBe(status);
      expectError(res, status, code);
    }
    const malformed = await t.app.inject({
      method: 'POST',
      url: `/v1/orders/${id}/refunds`,
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"amount": "1.00",',
    });
    expectError(malformed, 400, 'rest_invalid_json');
    expectError(await refund(999999, { amount: '1' }), 404, 'order_not_found');
    expectError(
      await t.app.inject({ method: 'POST', url: `/v1/orders/${id}/refunds`, payload: { amount: '1' } }),
      401,
      'rest_not_logged_in',
    );
    expect((await refundsOf(id)).refunds).toEqual([]);
    expect(await getOrder(id)).toMatchObject({ status: 'processing', refunded_total: '0.00' });
    // Hostile but legal text is kept as text.
    const hostile = "<script>alert(1)</script> '; DROP TABLE orders; -- ‮";
    const ok = await refund(id, { amount: '1.00', reason: hostile });
    expect(ok.statusCode, ok.body).toBe(201);
    expect((ok.json() as Refund).reason).toBe(hostile);
  });

  it('an unpaid order is not refundable', async () => {
    const product = await createProduct(t);
    const out = await createOrder(t, {
      items: [{ product_id: product.id, qty: 1 }],
      billing: { ...BILLING, email: uniqueEmail('unpaid') },
      payment_method: 'bacs',
    });
    for (const status of [null, 'on-hold', 'cancelled']) {
      if (status) await adminOk(t, 'POST', `/orders/${out.order_id}/status`, { status });
      expectError(await refund(out.order_id, { amount: '1.00' }), 409, 'order_not_refundable');
    }
    expect((await refundsOf(out.order_id)).refunds).toEqual([]);
  });
});

describe('parallel refunds', () => {
  it('parallel refunds over real HTTP never pass the total', async () => {
    const { id } = await paidOrder({ price: '10.00' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        fetch(`http://127.0.0.1:${port}/v1/orders/${id}/refunds`, {
          method: 'POST',
          headers: { ...t.adminAuth, 'content-type': 'application/json' },
          body: JSON.stringify({ amount: '3.00' }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { code?: string } })),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(3);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a).toMatchObject({ status: 409, body: { code: 'refund_exceeds_total' } });
    }
    const list = await refundsOf(id);
    expect(list).toMatchObject({ refunded_total: '9.00', remaining: '1.00' });
    expect(list.refunds).toHaveLength(3);
    // The last cent-exact refunds race too: exactly one completes the order.
    const last = await Promise.all(
      Array.from({ length: 4 }, () =>
        fetch(`http://127.0.0.1:${port}/v1/orders/${id}/refunds`, {
          method: 'POST',
          headers: { ...t.adminAuth, 'content-type': 'application/json' },
          body: JSON.stringify({ amount: '1.00' }),
        }).then((r) => r.status),
      ),
    );
    expect(last.filter((s) => s === 201)).toHaveLength(1);
    expect(await getOrder(id)).toMatchObject({ status: 'refunded', refunded_total: '10.00' });
    expect((await notesOf(id)).filter((n) => n.kind === 'refund')).toHaveLength(4);
  });
});

describe('order notes', () => {
  it('payment, refunds and the administrator’s notes are listed in order', async () => {
    const { id } = await paidOrder({ price: '20.00' });
    await refund(id, { amount: '5.00', reason: 'Late delivery' });
    const added = await admin(t, 'POST', `/orders/${id}/notes`, { body: 'Customer called.\nAll settled.' });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toMatchObject({
      order_id: id,
      kind: 'note',
      body: 'Customer called.\nAll settled.',
    });
    const notes = await notesOf(id);
    expect(notes.map((n) => n.kind)).toEqual(['payment', 'refund', 'note']);
    expect(notes[0]!.actor).toBeNull();
    expect(notes[1]!.body).toContain('5.00');
    expect(notes[1]!.body).toContain('Late delivery');
    expect(notes[2]!.actor?.email).toBe('admin@example.com');
    expect(notes.map((n) => n.id)).toEqual([...notes.map((n) => n.id)].sort((x, y) => x - y));
  });

  it('bad notes are refused and change nothing', async () => {
    const { id } = await paidOrder();
    const bad: [unknown, number, string][] = [
      [{}, 400, 'rest_missing_param'],
      [{ body: '' }, 400, 'rest_invalid_param'],
      [{ body: '   ' }, 400, 'rest_invalid_param'],
      [{ body: 5 }, 400, 'rest_invalid_param'],
      [{ body: 'x'.repeat(5001) }, 400, 'rest_invalid_param'],
      [{ body: 'a\u0007b' }, 400, 'rest_invalid_param'],
      [{ body: 'ok', kind: 'payment' }, 400, 'invalid_parameters'],
    ];
    for (const [body, status, code] of bad)
      expectError(await admin(t, 'POST', `/orders/${id}/notes`, body), status, code);
    expectError(await admin(t, 'POST', '/orders/999999/notes', { body: 'x' }), 404, 'order_not_found');
    expectError(await admin(t, 'GET', '/orders/999999/notes'), 404, 'order_not_found');
    expectError(await admin(t, 'GET', '/orders/999999/refunds'), 404, 'order_not_found');
    expect((await notesOf(id)).map((n) => n.kind)).toEqual(['payment']);
  });
});
