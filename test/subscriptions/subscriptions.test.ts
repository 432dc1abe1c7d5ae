import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { licensesOfOrder, payOrder } from '../checkout/helpers.js';
import {
  admin,
  adminOk,
  advanceClock,
  createTestApp,
  expectError,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import { BILLING, createCustomer, createOrder, createProduct, uniqueEmail } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await setSettings(t, { checkout_rate_limit: 1000 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const events = async (event: 'license.renewed' | 'subscription.status_changed') =>
  (
    await db()
      .selectFrom('webhook_events')
      .select('payload')
      .where('event', '=', event)
      .orderBy('id')
      .execute()
  ).map((r) => JSON.parse(r.payload) as { data: Record<string, unknown> });

interface Sub {
  id: number;
  status: string;
  next_payment_at: string | null;
  billing_period: string;
  billing_interval: number;
}

async function subscribe() {
  const product = await createProduct(t, {
    type: 'subscription',
    price: '10.00',
    subscription: { period: 'month', interval: 1 },
    entitlement_policy: { usage: { mode: 'days', days: 30 }, updates: { mode: 'license' } },
  });
  const email = uniqueEmail('sub');
  const customer = await createCustomer(t, email);
  const b = new Browser(t);
  await b.login(email, customer.password);
  const out = await createOrder(
    t,
    {
      items: [{ product_id: product.id, qty: 1 }],
      billing: { ...BILLING, email },
    },
    b,
  );
  return { product, customer, b, out };
}

describe('subscriptions', () => {
  it('checkout creates a subscription per subscription line; paying activates it and issues a linked license', async () => {
    const { b, out, customer } = await subscribe();
    const receipt = (await b.get(`/checkout/order/${out.order_id}`)).json();
    expect(receipt.subscription).toMatchObject({
      status: 'pending',
      billing_period: 'month',
      billing_interval: 1,
    });
    await payOrder(b, out.order_id, {
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    });
    const sub = await adminOk<Sub>(t, 'GET', `/subscriptions/${receipt.subscription.id}`);
    expect(sub.status).toBe('active');
    expect(Date.parse(sub.next_payment_at!)).toBeGreaterThan(Date.now() + 27 * 86400_000);
    const [license] = await licensesOfOrder(t, out.order_id);
    expect(license).toMatchObject({ subscription_id: sub.id, user_id: customer.id });
  });

  it('admin create, get, status change with subscription.status_changed; bad input', async () => {
    const product = await createProduct(t, {
      type: 'subscription',
      subscription: { period: 'year', interval: 1 },
    });
    const customer = await createCustomer(t, uniqueEmail('adm'));
    const created = await admin(t, 'POST', '/subscriptions', {
      user_id: customer.id,
      product_id: product.id,
    });
    expect(created.statusCode).toBe(201);
    const sub = created.json() as Sub;
    expect(sub).toMatchObject({ status: 'active', billing_period: 'year', billing_interval: 1 });
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${sub.id}`)).id).toBe(sub.id);
    const changed = await adminOk<Sub>(t, 'POST', `/subscriptions/${sub.id}/status`, {
      status: 'pending-cancel',
      reason: 'customer asked',
    });
    expect(changed.status).toBe('pending-cancel');
    const evs = await events('subscription.status_changed');
    expect(evs.at(-1)!.data).toEqual({
      subscription_id: sub.id,
      status: 'pending-cancel',
      reason: 'customer asked',
    });
    expectError(
      await admin(t, 'POST', `/subscriptions/${sub.id}/status`, { status: 'paused' }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await admin(t, 'POST', '/subscriptions', { user_id: customer.id }),
      400,
      'rest_missing_param',
    );
    expectError(
      await admin(t, 'POST', '/subscriptions', { user_id: 999999, product_id: product.id }),
      404,
      'user_not_found',
    );
    expectError(await admin(t, 'GET', '/subscriptions/999999'), 404, 'subscription_not_found');
  });

  it('the scheduler creates one renewal order when due; paying it extends the license with one license.renewed', async () => {
    const { b, out } = await subscribe();
    await payOrder(b, out.order_id, {
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    });
    const [license] = await licensesOfOrder(t, out.order_id);
    const subId = license!.subscription_id!;
    const before = license!.usage_expires_at!;
    await advanceClock(t, 32 * 86400);
    await t.app.services.renewals.tick();
    await t.app.services.renewals.tick();
    const renewals = await db()
      .selectFrom('orders')
      .selectAll()
      .where('subscription_id', '=', subId)
      .execute();
    expect(renewals).toHaveLength(1);
    expect(renewals[0]).toMatchObject({ status: 'pending', created_via: 'renewal', total: 1000 });
    const renewal = renewals[0]!;
    // The same key form as a checkout order's (one basis for new orders).
    expect(renewal.order_key).toMatch(/^order_[0-9a-f]{32}$/);
    // The sign-in session has expired by now (7 days): the order key is what a renewal email carries.
    const paid = await payOrder(new Browser(t), renewal.id, {
      key: renewal.order_key,
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    });
    expect(paid.json().ok, paid.body).toBe(true);
    const after = (
      await db()
        .selectFrom('licenses')
        .select('usage_expires_at')
        .where('id', '=', license!.id)
        .executeTakeFirstOrThrow()
    ).usage_expires_at!;
    expect(Date.parse(after)).toBeGreaterThan(Date.parse(before));
    const renewed = (await events('license.renewed')).filter((e) => e.data.order_id === renewal.id);
    expect(renewed.map((e) => e.data)).toEqual([
      { license_id: license!.id, subscription_id: subId, order_id: renewal.id },
    ]);
    const sub = await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`);
    expect(Date.parse(sub.next_payment_at!)).toBeGreaterThan(Date.parse(renewal.renewal_due_at!));
  });

  it('renewal-orders by hand; a closed renewal window cancels the open renewal orders (renewal_window_expired)', async () => {
    const { b, out } = await subscribe();
    await payOrder(b, out.order_id, {
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    });
    const [license] = await licensesOfOrder(t, out.order_id);
    const subId = license!.subscription_id!;
    const res = await admin(t, 'POST', `/subscriptions/${subId}/renewal-orders`);
    expect(res.statusCode).toBe(201);
    const renewal = res.json() as { id: number; order_key: string; status: string };
    expect(renewal).toMatchObject({ status: 'pending', created_via: 'renewal' });
    await setSettings(t, { renewal_window_days: 1 });
    await advanceClock(t, 40 * 86400);
    const late = await payOrder(new Browser(t), renewal.id, {
      key: renewal.order_key,
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    });
    expect(late.json()).toMatchObject({ error: expect.any(String), error_code: 'renewal_window_expired' });
    expect((await adminOk<{ status: string }>(t, 'GET', `/orders/${renewal.id}`)).status).toBe('cancelled');
    expect((await events('license.renewed')).filter((e) => e.data.order_id === renewal.id)).toEqual([]);
    await setSettings(t, { renewal_window_days: 30 });
  });

  it('a customer cancels their own subscription: pending-cancel while paid through, event recorded; others get 404', async () => {
    const product = await createProduct(t, {
      type: 'subscription',
      subscription: { period: 'month', interval: 1 },
    });
    const owner = await createCustomer(t, uniqueEmail('own'));
    const other = await createCustomer(t, uniqueEmail('oth'));
    const future = new Date(t.app.services.clock.now().getTime() + 10 * 86400_000).toISOString();
    const sub = (
      await admin(t, 'POST', '/subscriptions', {
        user_id: owner.id,
        product_id: product.id,
        next_payment_at: future,
      })
    ).json() as Sub;

    const mine = await t.app.inject({
      method: 'GET',
      url: '/v1/account/subscriptions',
      headers: owner.headers,
    });
    expect((mine.json() as Sub[]).map((s) => s.id)).toContain(sub.id);
    const theirs = await t.app.inject({
      method: 'GET',
      url: '/v1/account/subscriptions',
      headers: other.headers,
    });
    expect((theirs.json() as Sub[]).map((s) => s.id)).not.toContain(sub.id);

    const url = `/v1/account/subscriptions/${sub.id}/cancel`;
    expectError(await t.app.inject({ method: 'POST', url, headers: other.headers }), 404, 'not_found');
    expectError(await t.app.inject({ method: 'POST', url }), 401, 'rest_not_logged_in');
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${sub.id}`)).status).toBe('active');

    const res = await t.app.inject({ method: 'POST', url, headers: owner.headers });
    expect(res.statusCode).toBe(200);
    expect((res.json() as Sub).status).toBe('pending-cancel');
    expect((await events('subscription.status_changed')).at(-1)!.data).toEqual({
      subscription_id: sub.id,
      status: 'pending-cancel',
      reason: 'cancelled_by_customer',
    });
    // Cancelling again changes nothing and records no second event.
    const before = (await events('subscription.status_changed')).length;
    expect(((await t.app.inject({ method: 'POST', url, headers: owner.headers })).json() as Sub).status).toBe(
      'pending-cancel',
    );
    expect((await events('subscription.status_changed')).length).toBe(before);
  });
});
