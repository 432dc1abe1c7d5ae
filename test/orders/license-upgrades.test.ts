import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prorate } from '../../src/modules/orders/license-upgrades.service.js';
import {
  admin,
  adminOk,
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
  createLicense,
  createOrder,
  createProduct,
} from '../helpers/factories.js';

const DAY = 86_400_000;

/** Upgrades and downgrades with proration (docs/selling.md, 'Upgrades and downgrades'). */
describe('proration, exact in minor units', () => {
  const bought = Date.parse('2026-01-10T12:00:00Z');
  const end = new Date(bought + 365 * DAY);
  const at = (days: number) => new Date(bought + days * DAY);
  // [what, paid, new price, now, expected credit, expected price]
  const cases: [string, number, number, Date, number, number][] = [
    // 2 decimals: 49.00 paid, 99.00 tier. 4900 × 364 / 365 = 4886.57 → 4886.
    ['USD, the day after purchase', 4900, 9900, at(1), 4886, 5014],
    // 4900 × 1 / 365 = 13.42 → 13.
    ['USD, the day before expiry', 4900, 9900, at(364), 13, 9887],
    // A started day counts as a whole one: half of the last day left is that day, and a moment
    // after purchase the whole term.
    ['USD, hours before expiry', 4900, 9900, at(364.5), 13, 9887],
    ['USD, a minute after purchase', 4900, 9900, new Date(bought + 60_000), 4900, 5000],
    ['USD, at purchase', 4900, 9900, at(0), 4900, 5000],
    // 0 decimals: ¥4,900 paid, ¥9,900 tier.
    ['JPY, the day after purchase', 4900, 9900, at(1), 4886, 5014],
    ['JPY, mid-term', 4900, 9900, at(100), 3557, 6343],
    // 3 decimals: 49.000 KWD paid (49000 fils). 49000 × 364 / 365 = 48865.75 → 48865.
    ['KWD, the day after purchase', 49000, 99000, at(1), 48865, 50135],
    ['KWD, the day before expiry', 49000, 99000, at(364), 134, 98866],
    // A downgrade the day after purchase: the credit passes the cheaper tier's price; floor at 0.
    ['a downgrade gives 0', 9900, 4900, at(1), 9872, 0],
    // Past the end: nothing left to credit.
    ['after expiry', 4900, 9900, at(400), 0, 9900],
  ];
  for (const [what, paid, newPrice, now, credit, price] of cases) {
    it(what, () => {
      expect(prorate({ newPrice, paid, periodDays: 365, end, now })).toMatchObject({ credit, price });
    });
  }

  it('a license without an end keeps all of what was paid as credit', () => {
    expect(prorate({ newPrice: 9900, paid: 4900, periodDays: null, end: null, now: at(9) })).toEqual({
      credit: 4900,
      price: 5000,
      days_left: null,
    });
  });

  it('stays exact past 2^53 (integer arithmetic)', () => {
    const paid = 900_000_000_000_000;
    const r = prorate({ newPrice: paid, paid, periodDays: 36500, end: at(36500), now: at(1) });
    expect(r.credit).toBe(Number((BigInt(paid) * 36499n) / 36500n));
  });
});

describe.each([
  ['USD', ['49.00', '99.00', '199.00'], ['50.14', '150.14']],
  ['JPY', ['4900', '9900', '19900'], ['5014', '15014']],
  ['KWD', ['49.000', '99.000', '199.000'], ['50.135', '150.135']],
])('upgrades of a term license bought in %s', (currency, prices, expectedTotals) => {
  let t: TestApp;
  let owner: Customer;
  let other: Customer;
  let product: { id: number; variations: { id: number; name: string }[] };
  const term = { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 365 } };

  beforeAll(async () => {
    t = await createTestApp({ env: { TEST_CLOCK: '1' } });
    await setSettings(t, { base_currency: currency, checkout_rate_limit: 1000 });
    owner = await createCustomer(t);
    other = await createCustomer(t);
    product = await createProduct(t, {
      entitlement_policy: term,
      variations: [
        { name: '1 site', price: prices[0], activation_limit: 1 },
        { name: '5 sites', price: prices[1], activation_limit: 5 },
        { name: 'Unlimited', price: prices[2], activation_limit: 0 },
      ],
    });
    expect((await admin(t, 'PATCH', '/payment-gateways/test_card', { enabled: true })).statusCode).toBe(200);
  });
  afterAll(() => t?.close());

  const as = (who: Customer) => ({
    send: (method: 'POST', url: string, payload: unknown) =>
      t.app.inject({ method, url: `/v1${url}`, headers: who.headers, payload: payload as object }),
  });
  const pay = async (order: { order_id: number; order_key: string }) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/checkout/pay-order/${order.order_id}`,
      payload: {
        key: order.order_key,
        payment_method: 'test_card',
        payment_data: { card_number: '4242424242424242' },
      },
    });
    return res;
  };
  /** The 1-site tier bought through checkout by `owner`: its license. */
  const buy = async () => {
    const order = await createOrder(
      t,
      { items: [{ product_id: product.id, variation_id: product.variations[0]!.id, qty: 1 }] },
      as(owner),
    );
    expect((await pay(order)).json()).toMatchObject({ ok: true });
    return t.app.services.database.db
      .selectFrom('licenses')
      .selectAll()
      .where('order_id', '=', order.order_id)
      .executeTakeFirstOrThrow();
  };
  const quote = (id: number, who: Customer = owner) =>
    t.app.inject({ method: 'GET', url: `/v1/account/licenses/${id}/upgrades`, headers: who.headers });
  const upgrade = (id: number, body: unknown, who: Customer = owner) =>
    t.app.inject({
      method: 'POST',
      url: `/v1/account/licenses/${id}/upgrade-order`,
      headers: who.headers,
      payload: body as object,
    });
  const row = (id: number) =>
    t.app.services.database.db
      .selectFrom('licenses')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  const events = (licenseId: number) =>
    t.app.services.database.db
      .selectFrom('webhook_events')
      .select('payload')
      .where('event', '=', 'license.upgraded')
      .execute()
      .then((rows) =>
        rows
          .map((r) => JSON.parse(r.payload).data)
          .filter((d: { license_id: number }) => d.license_id === licenseId),
      );

  it('quotes each other tier the day after purchase: price less the unused share of what was paid', async () => {
    const license = await buy();
    await advanceClock(t, 86400);
    const res = await quote(license.id);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      license_id: license.id,
      currency,
      days_left: 364,
      period_days: 365,
      next_payment_at: null,
    });
    expect(body.targets.map((x: { name: string }) => x.name)).toEqual([
      `${(await adminOk<{ name: string }>(t, 'GET', `/products/${product.id}`)).name} - 5 sites`,
      expect.stringMatching(/ - Unlimited$/),
    ]);
    expect(body.targets.map((x: { total: string }) => x.total)).toEqual(expectedTotals);
    expect(body.targets[0]).toMatchObject({ direction: 'upgrade', activation_limit: 5, usage_days: 365 });
  });

  it('a paid upgrade keeps the key, takes the new limit and term from the payment, emits license.upgraded once', async () => {
    owner.headers = await login(t.app, owner.email, owner.password);
    const license = await buy();
    const target = product.variations[1]!.id;
    const created = await upgrade(license.id, { variation_id: target });
    expect(created.statusCode, created.body).toBe(201);
    const order = created.json();
    expect(order).toMatchObject({ status: 'pending', license_id: license.id, variation_id: target });
    // Two payments race over real HTTP: the order is paid once and the license moves once.
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const payOverHttp = () =>
      fetch(`${base}/v1/checkout/pay-order/${order.order_id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          key: order.order_key,
          payment_method: 'test_card',
          payment_data: { card_number: '4242424242424242' },
        }),
      });
    const [a, b] = await Promise.all([payOverHttp(), payOverHttp()]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const paidAt = Date.parse((await advanceClock(t, 0)).now as string);
    const after = await row(license.id);
    expect(after.license_key).toBe(license.license_key);
    expect(after).toMatchObject({ variation_id: target, activation_limit: 5, product_id: product.id });
    expect(Math.abs(Date.parse(after.usage_expires_at!) - (paidAt + 365 * DAY))).toBeLessThan(2000);
    const issued = await t.app.services.database.db
      .selectFrom('licenses')
      .select('id')
      .where('order_id', '=', order.order_id)
      .execute();
    expect(issued).toEqual([]);
    expect(await events(license.id)).toEqual([
      {
        license_id: license.id,
        order_id: order.order_id,
        product_id: product.id,
        variation_id: target,
        previous_product_id: product.id,
        previous_variation_id: product.variations[0]!.id,
      },
    ]);
    const audit = await t.app.services.database.db
      .selectFrom('audit_events')
      .select(['action', 'actor_email'])
      .where('entity_type', '=', 'license')
      .where('entity_id', '=', license.id)
      .where('action', '=', 'upgrade')
      .execute();
    expect(audit).toHaveLength(1);
    // The new tier's worth is what the next move prorates.
    expect((await quote(license.id)).json()).toMatchObject({ paid: prices[1], period_days: 365 });
  });

  it('an upgrade order whose license was revoked before payment is not charged (409 license_not_upgradable)', async () => {
    owner.headers = await login(t.app, owner.email, owner.password);
    const license = await buy();
    const order = (await upgrade(license.id, { variation_id: product.variations[1]!.id })).json();
    expect((await admin(t, 'DELETE', `/licenses/${license.id}`)).statusCode).toBe(200);
    const res = await pay(order);
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ error_code: 'license_not_upgradable' });
    const stored = await t.app.services.database.db
      .selectFrom('orders')
      .select(['status', 'paid_at'])
      .where('id', '=', order.order_id)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ status: 'pending', paid_at: null });
    expect(await row(license.id)).toMatchObject({
      variation_id: product.variations[0]!.id,
      status: 'revoked',
    });
  });

  it('a coupon comes off the prorated price before tax, and its usage limit holds under parallel orders', async () => {
    const code = `up${currency.toLowerCase()}${Date.now().toString(36)}`;
    const coupon = await admin(t, 'POST', '/coupons', {
      code,
      discount_type: 'percent',
      amount: '10',
      usage_limit: 1,
    });
    expect(coupon.statusCode, coupon.body).toBe(201);
    const target = product.variations[1]!.id;
    expectError(
      await upgrade((await buy()).id, { variation_id: target, coupon_code: 'no-such-coupon' }),
      400,
      'coupon_failed',
    );
    // Bought today: the whole price paid is credit, so 99 - 49 = 50, and 10% off that is 45.
    const licenses = await Promise.all([buy(), buy(), buy(), buy()]);
    const answers = await Promise.all(
      licenses.map((l) => upgrade(l.id, { variation_id: target, coupon_code: code.toUpperCase() })),
    );
    const made = answers.filter((r) => r.statusCode === 201);
    expect(made).toHaveLength(1);
    for (const r of answers.filter((a) => a.statusCode !== 201)) {
      expectError(r, 400, 'coupon_failed');
      expect(r.json().data.reason).toBe('usage_limit_reached');
    }
    const amount = (whole: number) =>
      currency === 'JPY' ? String(whole * 100) : currency === 'KWD' ? `${whole}.000` : `${whole}.00`;
    expect(made[0]!.json()).toMatchObject({ total: amount(45) });
    const order = await adminOk<{ discount_total: string; coupons: { code: string }[] }>(
      t,
      'GET',
      `/orders/${made[0]!.json().order_id}`,
    );
    expect(order).toMatchObject({ discount_total: amount(5), coupons: [{ code }] });
  });

  it('a downgrade that costs nothing applies at once', async () => {
    owner.headers = await login(t.app, owner.email, owner.password);
    const license = await buy();
    const up = (await upgrade(license.id, { variation_id: product.variations[2]!.id })).json();
    expect((await pay(up)).statusCode).toBe(200);
    await advanceClock(t, 86400);
    const res = await upgrade(license.id, { variation_id: product.variations[0]!.id });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ status: 'completed', total: expect.stringMatching(/^0(\.0+)?$/) });
    expect(await row(license.id)).toMatchObject({
      variation_id: product.variations[0]!.id,
      activation_limit: 1,
    });
    expect(await events(license.id)).toHaveLength(2);
  });

  it('refuses the same tier, a tier it cannot move to, a license not upgradable, and bad input', async () => {
    owner.headers = await login(t.app, owner.email, owner.password);
    other.headers = await login(t.app, other.email, other.password);
    const license = await buy();
    const before = await row(license.id);
    expectError(
      await upgrade(license.id, { variation_id: product.variations[0]!.id }),
      400,
      'upgrade_same_tier',
    );
    expectError(await upgrade(license.id, { variation_id: 2147483000 }), 400, 'invalid_upgrade_target');
    expectError(await upgrade(license.id, {}), 400, 'invalid_upgrade_target');
    const unrelated = await createProduct(t, { price: prices[1] });
    expectError(await upgrade(license.id, { product_id: unrelated.id }), 400, 'invalid_upgrade_target');
    expectError(
      await upgrade(license.id, { product_id: unrelated.id, variation_id: product.variations[1]!.id }),
      400,
      'invalid_upgrade_target',
    );
    expectError(await upgrade(license.id, { variation_id: 'five' }), 400, 'rest_invalid_param');
    expectError(await upgrade(license.id, { variation_id: 1, extra: true }), 400, 'invalid_parameters');
    expectError(await upgrade(license.id, [1]), 400, 'rest_invalid_param');
    const malformed = await t.app.inject({
      method: 'POST',
      url: `/v1/account/licenses/${license.id}/upgrade-order`,
      headers: { ...owner.headers, 'content-type': 'application/json' },
      payload: '{"variation_id":',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().code).toBe('rest_invalid_json');
    const huge = await upgrade(license.id, { variation_id: 1, pad: 'x'.repeat(2_000_000) });
    expect([400, 413]).toContain(huge.statusCode);
    expectError(
      await upgrade(license.id, { variation_id: product.variations[1]!.id }, other),
      404,
      'license_not_found',
    );
    expectError(await quote(license.id, other), 404, 'license_not_found');
    const anonymous = await t.app.inject({
      method: 'GET',
      url: `/v1/account/licenses/${license.id}/upgrades`,
    });
    expect(anonymous.statusCode).toBe(401);
    expect(await row(license.id)).toEqual(before);
    expect((await admin(t, 'DELETE', `/licenses/${license.id}`)).statusCode).toBe(200);
    expectError(await quote(license.id), 409, 'license_not_upgradable');
    expectError(
      await upgrade(license.id, { variation_id: product.variations[1]!.id }),
      409,
      'license_not_upgradable',
    );
  });

  it('moves along an upgrade path to another product; the console can create the order for a customer', async () => {
    owner.headers = await login(t.app, owner.email, owner.password);
    const pro = await createProduct(t, { price: prices[2], activation_limit: 25, entitlement_policy: term });
    expectError(
      await admin(t, 'POST', `/software/products/${product.id}/config`, { upgrade_paths: [product.id] }),
      400,
      'invalid_upgrade_target',
    );
    await configureSoftware(t, product.id, { upgrade_paths: [pro.id] } as never);
    const license = await createLicense(t, {
      product_id: product.id,
      variation_id: product.variations[0]!.id,
      user_id: owner.id,
      entitlement_policy: term,
    });
    const quoted = (await admin(t, 'GET', `/licenses/${license.id}/upgrades`)).json();
    expect(quoted.targets.map((x: { product_id: number }) => x.product_id)).toContain(pro.id);
    const res = await admin(t, 'POST', `/licenses/${license.id}/upgrade-order`, { product_id: pro.id });
    expect(res.statusCode, res.body).toBe(201);
    const order = res.json();
    const audit = await t.app.services.database.db
      .selectFrom('audit_events')
      .select('action')
      .where('entity_type', '=', 'license')
      .where('entity_id', '=', license.id)
      .where('action', '=', 'upgrade_order')
      .execute();
    expect(audit).toHaveLength(1);
    expect((await pay(order)).statusCode).toBe(200);
    expect(await row(license.id)).toMatchObject({
      product_id: pro.id,
      variation_id: 0,
      activation_limit: 25,
      license_key: license.license_key,
    });
  });

  it('My licenses pages: the tiers with their prices, the form that goes on to the pay page, and its refusals', async () => {
    owner.headers = await login(t.app, owner.email, owner.password);
    other.headers = await login(t.app, other.email, other.password);
    const license = await buy();
    const page = (who: Customer, url: string) =>
      t.app.inject({ method: 'GET', url, headers: { cookie: who.headers.cookie } });
    const form = (who: Customer, fields: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: `/account/licenses/${license.id}/upgrade`,
        headers: { cookie: who.headers.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _nonce: who.headers['x-rest-nonce'], ...fields }).toString(),
      });
    const list = await page(owner, '/account/licenses');
    expect(list.body).toContain(`href="/account/licenses/${license.id}/upgrade"`);
    const choose = await page(owner, `/account/licenses/${license.id}/upgrade`);
    expect(choose.statusCode).toBe(200);
    const target = `${product.id}:${product.variations[1]!.id}`;
    expect(choose.body).toContain(`value="${target}"`);
    // Another customer's license, or nonsense in the address: back to My licenses with a notice.
    for (const url of [`/account/licenses/${license.id}/upgrade`, '/account/licenses/x/upgrade']) {
      const refused = await page(other, url);
      expect(refused.statusCode).toBe(303);
      expect(refused.headers.location).toBe('/account/licenses?error=upgrade_failed');
    }
    for (const bad of [
      '',
      'x',
      `${product.id}`,
      `${product.id}:-1`,
      `${product.id}:${product.variations[0]!.id}`,
    ]) {
      const res = await form(owner, { target: bad });
      expect(res.headers.location, bad).toBe('/account/licenses?error=upgrade_failed');
    }
    expect((await form(owner, { target, _nonce: 'forged' })).statusCode).toBe(403);
    expect((await form(other, { target })).headers.location).toBe('/account/licenses?error=upgrade_failed');
    const made = await form(owner, { target });
    expect(made.statusCode).toBe(303);
    expect(made.headers.location).toMatch(/^\/checkout\/pay\/\d+\?key=order_[0-9a-f]+$/);
  });

  it('refuses a trial', async () => {
    const trial = await createLicense(t, {
      product_id: product.id,
      user_id: owner.id,
      entitlement_policy: term,
    });
    await t.app.services.database.db
      .updateTable('licenses')
      .set({ trial: 1 })
      .where('id', '=', trial.id)
      .execute();
    expectError(await quote(trial.id), 409, 'license_not_upgradable');
    // My licenses does not offer what would be refused.
    owner.headers = await login(t.app, owner.email, owner.password);
    const list = await t.app.inject({
      method: 'GET',
      url: '/account/licenses',
      headers: { cookie: owner.headers.cookie },
    });
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(trial.license_key);
    expect(list.body).not.toContain(`href="/account/licenses/${trial.id}/upgrade"`);
  });
});
