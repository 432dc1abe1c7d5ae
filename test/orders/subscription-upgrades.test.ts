import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  advanceClock,
  createTestApp,
  expectError,
  login,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import {
  type Customer,
  configureSoftware,
  createCustomer,
  createOrder,
  createProduct,
} from '../helpers/factories.js';

/**
 * Upgrades and downgrades of a license a subscription renews (docs/selling.md, 'Upgrades and
 * downgrades', 'A license a subscription renews'): prorated over the subscription's current billing
 * period, and the subscription's next renewal charges the new tier.
 */
const DAY = 86_400;
let t: TestApp;
let owner: Customer;
// Tiers billed monthly: a variable subscription product and another on its upgrade path.
let monthly: { id: number; variations: { id: number; name: string }[] };
let agency: { id: number };
// On the monthly product's upgrade path too, but billed otherwise: never offered.
let yearlyPro: { id: number };
let term: { id: number };
let yearly: { id: number; variations: { id: number; name: string }[] };

/** Seconds from the test clock's now to `at`. */
const until = async (at: number) =>
  Math.ceil((at - Date.parse((await advanceClock(t, 0)).now as string)) / 1000);

beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await setSettings(t, { checkout_rate_limit: 1000 });
  expect((await admin(t, 'PATCH', '/payment-gateways/test_card', { enabled: true })).statusCode).toBe(200);
  owner = await createCustomer(t);
  const policy = { usage: { mode: 'subscription' }, updates: { mode: 'license' } };
  const months = { type: 'variable-subscription', subscription: { period: 'month', interval: 1 } };
  monthly = await createProduct(t, {
    ...months,
    entitlement_policy: policy,
    variations: [
      { name: '1 site', price: '10.00', activation_limit: 1 },
      { name: '5 sites', price: '30.00', activation_limit: 5 },
    ],
  });
  agency = await createProduct(t, {
    type: 'subscription',
    subscription: { period: 'month', interval: 1 },
    price: '50.00',
    activation_limit: 0,
    entitlement_policy: policy,
  });
  yearlyPro = await createProduct(t, {
    type: 'subscription',
    subscription: { period: 'year', interval: 1 },
    price: '100.00',
    activation_limit: 5,
    entitlement_policy: policy,
  });
  term = await createProduct(t, {
    price: '60.00',
    activation_limit: 5,
    entitlement_policy: { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 365 } },
  });
  await configureSoftware(t, monthly.id, { upgrade_paths: [agency.id, yearlyPro.id, term.id] } as never);
  yearly = await createProduct(t, {
    type: 'variable-subscription',
    subscription: { period: 'year', interval: 1 },
    entitlement_policy: policy,
    variations: [
      { name: '1 site', price: '120.00', activation_limit: 1 },
      { name: '10 sites', price: '240.00', activation_limit: 10 },
    ],
  });
  await configureSoftware(t, yearly.id, { upgrade_paths: [agency.id] } as never);
  // A fixed calendar, so the periods have known lengths: March 10 of a year whose next year is not
  // a leap year, 12:00 UTC (March 10 to April 10: 31 days; a year from April: 365 days).
  const now = new Date((await advanceClock(t, 0)).now as string);
  let year = now.getUTCFullYear() + 1;
  while ((year + 1) % 4 === 0) year++;
  await advanceClock(t, await until(Date.UTC(year, 2, 10, 12)));
});
afterAll(() => t?.close());

const db = () => t.app.services.database.db;
const signIn = async () => {
  owner.headers = await login(t.app, owner.email, owner.password);
};
const send = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
  t.app.inject({ method, url: `/v1${url}`, headers: owner.headers, payload: payload as object });
const quote = (id: number) => send('GET', `/account/licenses/${id}/upgrades`);
const upgrade = (id: number, body: unknown) => send('POST', `/account/licenses/${id}/upgrade-order`, body);
const pay = (order: { id: number; key: string }) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/checkout/pay-order/${order.id}`,
    payload: {
      key: order.key,
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    },
  });
/** A subscription bought and paid at checkout by `owner`: its license and subscription rows. */
const subscribe = async (product: number, variation: number) => {
  await signIn();
  const order = await createOrder(
    t,
    { items: [{ product_id: product, variation_id: variation, qty: 1 }] },
    { send: (method, url, payload) => send(method, url, payload) },
  );
  expect((await pay({ id: order.order_id, key: order.order_key })).json()).toMatchObject({ ok: true });
  const license = await db()
    .selectFrom('licenses')
    .selectAll()
    .where('order_id', '=', order.order_id)
    .executeTakeFirstOrThrow();
  return { license, subscription: await sub(license.subscription_id!) };
};
const sub = (id: number) =>
  db().selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const license = (id: number) =>
  db().selectFrom('licenses').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const subscriptionsOf = async (userId: number) =>
  (await db().selectFrom('subscriptions').select('id').where('user_id', '=', userId).execute()).length;
/** The renewal worker's pass, then the renewal order of the subscription's due date. */
const renewalOrder = async (subscriptionId: number) => {
  await t.app.services.renewals.tick();
  return db()
    .selectFrom('orders')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .where('created_via', '=', 'renewal')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
};

describe('a license a subscription renews', () => {
  it('is quoted over the billing period, moves when paid, and the next renewal charges the new tier', async () => {
    const { license: bought, subscription } = await subscribe(monthly.id, monthly.variations[0]!.id);
    expect(bought.usage_expires_at).toBeNull();
    const nextPayment = subscription.next_payment_at!;
    // Ten days into March 10 - April 10 (31 days): 21 days left, credit floor(1000 × 21 ÷ 31) = 677.
    await advanceClock(t, 10 * DAY);
    await signIn();
    const res = await quote(bought.id);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ paid: '10.00', credit: '6.77', days_left: 21, period_days: 31 });
    expect(Date.parse(body.next_payment_at)).toBe(Date.parse(nextPayment));
    // The other monthly tiers only: not the yearly product nor the term product on the path.
    expect(
      body.targets.map(
        (x: { product_id: number; variation_id: number; total: string; direction: string }) => [
          x.product_id,
          x.variation_id,
          x.total,
          x.direction,
        ],
      ),
    ).toEqual([
      [monthly.id, monthly.variations[1]!.id, '23.23', 'upgrade'],
      [agency.id, 0, '43.23', 'upgrade'],
    ]);

    const subscriptionsBefore = await subscriptionsOf(owner.id);
    const created = await upgrade(bought.id, { variation_id: monthly.variations[1]!.id });
    expect(created.statusCode, created.body).toBe(201);
    const order = created.json();
    expect(order).toMatchObject({ status: 'pending', total: '23.23' });
    // Not moved before the payment.
    expect(await license(bought.id)).toMatchObject({ activation_limit: 1 });
    expect((await sub(subscription.id)).recurring_total).toEqual(subscription.recurring_total);
    const paid = await pay({ id: order.order_id, key: order.order_key });
    expect(paid.json(), paid.body).toMatchObject({ ok: true });

    const after = await license(bought.id);
    expect(after).toMatchObject({
      license_key: bought.license_key,
      product_id: monthly.id,
      variation_id: monthly.variations[1]!.id,
      activation_limit: 5,
      subscription_id: subscription.id,
      usage_expires_at: null,
    });
    const moved = await sub(subscription.id);
    expect(moved).toMatchObject({
      product_id: monthly.id,
      variation_id: monthly.variations[1]!.id,
      status: 'active',
      next_payment_at: nextPayment,
    });
    expect(Number(moved.recurring_total)).toBe(3000);
    // The upgrade order started no subscription and issued no license.
    expect(await subscriptionsOf(owner.id)).toBe(subscriptionsBefore);
    expect(
      await db().selectFrom('licenses').select('id').where('order_id', '=', order.order_id).execute(),
    ).toEqual([]);
    const upgraded = (
      await db()
        .selectFrom('webhook_events')
        .select('payload')
        .where('event', '=', 'license.upgraded')
        .execute()
    )
      .map((r) => JSON.parse(r.payload).data)
      .filter((d: { license_id: number }) => d.license_id === bought.id);
    expect(upgraded).toEqual([
      {
        license_id: bought.id,
        order_id: order.order_id,
        product_id: monthly.id,
        variation_id: monthly.variations[1]!.id,
        previous_product_id: monthly.id,
        previous_variation_id: monthly.variations[0]!.id,
      },
    ]);
    const audits = await db()
      .selectFrom('audit_events')
      .select(['entity_type', 'action'])
      .where('action', '=', 'upgrade')
      .where((eb) =>
        eb.or([
          eb.and([eb('entity_type', '=', 'license'), eb('entity_id', '=', bought.id)]),
          eb.and([eb('entity_type', '=', 'subscription'), eb('entity_id', '=', subscription.id)]),
        ]),
      )
      .orderBy('entity_type')
      .execute();
    expect(audits).toEqual([
      { entity_type: 'license', action: 'upgrade' },
      { entity_type: 'subscription', action: 'upgrade' },
    ]);

    // The renewal worker on the test clock, past April 10: the renewal charges the new tier.
    await advanceClock(t, await until(Date.parse(nextPayment) + 3600_000));
    const renewal = await renewalOrder(subscription.id);
    expect(renewal).toMatchObject({ status: 'pending', total: 3000, renewal_due_at: nextPayment });
    const [item] = await db()
      .selectFrom('order_items')
      .selectAll()
      .where('order_id', '=', renewal.id)
      .execute();
    expect(item).toMatchObject({ product_id: monthly.id, variation_id: monthly.variations[1]!.id });
    expect((await pay({ id: renewal.id, key: renewal.order_key })).json()).toMatchObject({ ok: true });
    expect(Date.parse((await sub(subscription.id)).next_payment_at!)).toBeGreaterThan(
      Date.parse(nextPayment),
    );
    expect(await license(bought.id)).toMatchObject({
      activation_limit: 5,
      variation_id: monthly.variations[1]!.id,
    });
  });

  it('a downgrade the credit covers applies at once and lowers the next renewal', async () => {
    // April 10 to May 10: 30 days. A day later: credit floor(3000 × 29 ÷ 30) = 2900 > 1000.
    const { license: bought, subscription } = await subscribe(monthly.id, monthly.variations[1]!.id);
    await advanceClock(t, DAY);
    await signIn();
    expect((await quote(bought.id)).json()).toMatchObject({
      credit: '29.00',
      days_left: 29,
      period_days: 30,
    });
    const res = await upgrade(bought.id, { variation_id: monthly.variations[0]!.id });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ status: 'completed', total: '0.00' });
    expect(await license(bought.id)).toMatchObject({
      variation_id: monthly.variations[0]!.id,
      activation_limit: 1,
    });
    const moved = await sub(subscription.id);
    expect(moved).toMatchObject({
      variation_id: monthly.variations[0]!.id,
      next_payment_at: subscription.next_payment_at,
    });
    expect(Number(moved.recurring_total)).toBe(1000);
    await advanceClock(t, await until(Date.parse(subscription.next_payment_at!) + 3600_000));
    expect(await renewalOrder(subscription.id)).toMatchObject({ total: 1000 });
  });

  it('a yearly subscription is prorated over its year and moves only to yearly tiers', async () => {
    // Bought now (in May), renewing a year later: 365 days. 100 days on: 265 left,
    // credit floor(12000 × 265 ÷ 365) = 8712, the 10-site tier 24000 − 8712 = 15288.
    const { license: bought } = await subscribe(yearly.id, yearly.variations[0]!.id);
    await advanceClock(t, 100 * DAY);
    await signIn();
    const body = (await quote(bought.id)).json();
    expect(body).toMatchObject({ paid: '120.00', credit: '87.12', days_left: 265, period_days: 365 });
    expect(
      body.targets.map((x: { variation_id: number; total: string }) => [x.variation_id, x.total]),
    ).toEqual([[yearly.variations[1]!.id, '152.88']]);
    // The monthly product on its path is billed otherwise.
    expectError(await upgrade(bought.id, { product_id: agency.id }), 400, 'invalid_upgrade_target');
  });

  it('refuses a target billed otherwise, and a subscription that is not active or whose payment is due', async () => {
    const { license: bought, subscription } = await subscribe(monthly.id, monthly.variations[0]!.id);
    const before = await license(bought.id);
    const subBefore = await sub(subscription.id);
    expectError(await upgrade(bought.id, { product_id: yearlyPro.id }), 400, 'invalid_upgrade_target');
    expectError(await upgrade(bought.id, { product_id: term.id }), 400, 'invalid_upgrade_target');
    expectError(
      await upgrade(bought.id, { variation_id: monthly.variations[0]!.id }),
      400,
      'upgrade_same_tier',
    );
    expectError(await upgrade(bought.id, { variation_id: 'five' }), 400, 'rest_invalid_param');
    expect(await license(bought.id)).toEqual(before);
    expect(await sub(subscription.id)).toEqual(subBefore);

    // My licenses offers the move while the subscription is active.
    const page = () =>
      t.app.inject({ method: 'GET', url: '/account/licenses', headers: { cookie: owner.headers.cookie } });
    expect((await page()).body).toContain(`href="/account/licenses/${bought.id}/upgrade"`);
    // Its page says what the renewals will charge, and when the next one is.
    const choose = await t.app.inject({
      method: 'GET',
      url: `/account/licenses/${bought.id}/upgrade`,
      headers: { cookie: owner.headers.cookie },
    });
    expect(choose.statusCode).toBe(200);
    expect(choose.body).toContain(`value="${monthly.id}:${monthly.variations[1]!.id}"`);
    expect(choose.body).toContain('renews at 30.00 USD every month');
    expect(choose.body).toContain(`<dd>${subscription.next_payment_at!.slice(0, 10)}</dd>`);
    expect(choose.body).not.toContain(`value="${yearlyPro.id}:0"`);

    // The payment is due (the renewal worker has not yet put it on hold): pay the renewal first.
    await advanceClock(t, await until(Date.parse(subscription.next_payment_at!) + 60_000));
    await signIn();
    expectError(await quote(bought.id), 409, 'license_not_upgradable');
    const renewal = await renewalOrder(subscription.id);
    expect((await pay({ id: renewal.id, key: renewal.order_key })).json()).toMatchObject({ ok: true });
    expect((await quote(bought.id)).statusCode).toBe(200);

    // Cancelled by the customer (pending-cancel, paid through): no move, and no link.
    const cancelled = await send('POST', `/account/subscriptions/${subscription.id}/cancel`);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect((await sub(subscription.id)).status).toBe('pending-cancel');
    expectError(await quote(bought.id), 409, 'license_not_upgradable');
    expectError(
      await upgrade(bought.id, { variation_id: monthly.variations[1]!.id }),
      409,
      'license_not_upgradable',
    );
    expect((await page()).body).not.toContain(`href="/account/licenses/${bought.id}/upgrade"`);
  });

  it('two upgrade orders paid at once over HTTP leave the license and its subscription on the same tier', async () => {
    const { license: bought, subscription } = await subscribe(monthly.id, monthly.variations[0]!.id);
    const five = (await upgrade(bought.id, { variation_id: monthly.variations[1]!.id })).json();
    const whole = (await upgrade(bought.id, { product_id: agency.id })).json();
    expect([five.status, whole.status]).toEqual(['pending', 'pending']);
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const payOverHttp = (o: { order_id: number; order_key: string }) =>
      fetch(`${base}/v1/checkout/pay-order/${o.order_id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          key: o.order_key,
          payment_method: 'test_card',
          payment_data: { card_number: '4242424242424242' },
        }),
      });
    const answers = await Promise.all([payOverHttp(five), payOverHttp(whole), payOverHttp(five)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 409]);
    const after = await license(bought.id);
    const moved = await sub(subscription.id);
    expect({ product_id: moved.product_id, variation_id: moved.variation_id }).toEqual({
      product_id: after.product_id,
      variation_id: after.variation_id,
    });
    expect(Number(moved.recurring_total)).toBe(after.product_id === agency.id ? 5000 : 3000);
    expect(moved.next_payment_at).toBe(subscription.next_payment_at);
    const changes = await db()
      .selectFrom('audit_events')
      .select('id')
      .where('entity_type', '=', 'subscription')
      .where('entity_id', '=', subscription.id)
      .where('action', '=', 'upgrade')
      .execute();
    expect(changes).toHaveLength(2);
  });

  it('an order made while active is not charged once the subscription is on hold (409 license_not_upgradable)', async () => {
    const { license: bought, subscription } = await subscribe(monthly.id, monthly.variations[0]!.id);
    const order = (await upgrade(bought.id, { variation_id: monthly.variations[1]!.id })).json();
    expect(order).toMatchObject({ status: 'pending' });
    expect(
      (await admin(t, 'POST', `/subscriptions/${subscription.id}/status`, { status: 'on-hold' })).statusCode,
    ).toBe(200);
    const refused = await pay({ id: order.order_id, key: order.order_key });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toMatchObject({ error_code: 'license_not_upgradable' });
    expect(
      await db()
        .selectFrom('orders')
        .select('status')
        .where('id', '=', order.order_id)
        .executeTakeFirstOrThrow(),
    ).toEqual({ status: 'pending' });
    expect(await license(bought.id)).toMatchObject({
      variation_id: monthly.variations[0]!.id,
      activation_limit: 1,
    });
    expect(await sub(subscription.id)).toMatchObject({ variation_id: monthly.variations[0]!.id });
    expectError(await admin(t, 'GET', `/licenses/${bought.id}/upgrades`), 409, 'license_not_upgradable');
  });
});
