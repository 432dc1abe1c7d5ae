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
import { type Customer, createCustomer, createLicense, createProduct } from '../helpers/factories.js';

/** Buying the renewal of a term license (docs/selling.md, 'Buying a renewal'). */
describe('license renewal purchase', () => {
  let t: TestApp;
  let owner: Customer;
  let other: Customer;
  let productId: number;
  const DAY = 86_400_000;
  const term = { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 365 } };

  beforeAll(async () => {
    t = await createTestApp({ env: { TEST_CLOCK: '1' } });
    owner = await createCustomer(t);
    other = await createCustomer(t);
    productId = (await createProduct(t, { price: '19.99' })).id;
    const res = await admin(t, 'PATCH', '/payment-gateways/test_card', { enabled: true });
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(() => t?.close());

  const now = async () => Date.parse((await advanceClock(t, 0)).now as string);
  const termLicense = async (extra: Record<string, unknown> = {}) =>
    createLicense(t, { product_id: productId, user_id: owner.id, entitlement_policy: term, ...extra });
  const renewalOrder = (id: number, who: Customer = owner) =>
    t.app.inject({ method: 'POST', url: `/v1/account/licenses/${id}/renewal-order`, headers: who.headers });
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
    expect(res.json(), res.body).toMatchObject({ ok: true });
  };
  const stored = (id: number) =>
    t.app.services.database.db
      .selectFrom('licenses')
      .select(['usage_expires_at', 'entitlement_policy'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  it('prices the renewal at the price less renewal_discount_percent, exact in minor units', async () => {
    await setSettings(t, { renewal_discount_percent: 25 });
    const license = await termLicense();
    const res = await renewalOrder(license.id);
    expect(res.statusCode, res.body).toBe(201);
    // 1999 × 75% = 1499.25 → 1499.
    expect(res.json()).toMatchObject({ status: 'pending', total: '14.99', license_id: license.id });
    const item = await t.app.services.database.db
      .selectFrom('order_items')
      .select(['total', 'meta', 'product_id'])
      .where('order_id', '=', res.json().order_id)
      .executeTakeFirstOrThrow();
    expect(Number(item.total)).toBe(1499);
    expect(JSON.parse(item.meta)).toEqual({ license_id: license.id, license_action: 'renewal' });
    await setSettings(t, { renewal_discount_percent: 0 });
    expect((await renewalOrder(license.id)).json()).toMatchObject({ total: '19.99' });
    expectError(
      await admin(t, 'PATCH', '/settings', { renewal_discount_percent: 101 }),
      400,
      'rest_invalid_param',
    );
  });

  it('paid early: extends usage and the updates window by the term from the old end, issues no license', async () => {
    const license = await termLicense();
    const before = await stored(license.id);
    const oldEnd = Date.parse(before.usage_expires_at!);
    const order = (await renewalOrder(license.id)).json();
    await pay(order);
    const after = await stored(license.id);
    expect(Date.parse(after.usage_expires_at!)).toBe(oldEnd + 365 * DAY);
    expect(JSON.parse(after.entitlement_policy!).updates).toEqual({ mode: 'days', days: 730 });
    const issued = await t.app.services.database.db
      .selectFrom('licenses')
      .select('id')
      .where('order_id', '=', order.order_id)
      .execute();
    expect(issued).toEqual([]);
    const audit = await t.app.services.database.db
      .selectFrom('audit_events')
      .select('action')
      .where('entity_type', '=', 'license')
      .where('entity_id', '=', license.id)
      .where('action', '=', 'renew')
      .execute();
    expect(audit).toHaveLength(1);
  });

  it('paid late: extends from the payment, not the old end', async () => {
    const license = await termLicense();
    const order = (await renewalOrder(license.id)).json();
    await advanceClock(t, 400 * 86400); // the license ended 35 days ago
    const paidAt = await now();
    await pay(order);
    const after = await stored(license.id);
    expect(Math.abs(Date.parse(after.usage_expires_at!) - (paidAt + 365 * DAY))).toBeLessThan(2000);
  });

  it('a renewal order whose license was revoked before payment is not charged (409 license_not_renewable)', async () => {
    owner.headers = await login(t.app, owner.email, owner.password);
    const license = await termLicense();
    const order = (await renewalOrder(license.id)).json() as { order_id: number; order_key: string };
    expect((await admin(t, 'DELETE', `/licenses/${license.id}`)).statusCode).toBe(200);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/checkout/pay-order/${order.order_id}`,
      payload: {
        key: order.order_key,
        payment_method: 'test_card',
        payment_data: { card_number: '4242424242424242' },
      },
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ error_code: 'license_not_renewable' });
    const row = await t.app.services.database.db
      .selectFrom('orders')
      .select(['status', 'paid_at', 'payment_method'])
      .where('id', '=', order.order_id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'pending', paid_at: null, payment_method: '' });
  });

  it("refuses another customer's license (404) and one that cannot be renewed (409)", async () => {
    // The clock moved on past the sessions' lifetime: sign in again.
    owner.headers = await login(t.app, owner.email, owner.password);
    other.headers = await login(t.app, other.email, other.password);
    const license = await termLicense();
    expectError(await renewalOrder(license.id, other), 404, 'license_not_found');
    expectError(await renewalOrder(2147483000), 404, 'license_not_found');
    const lifetime = await createLicense(t, { product_id: productId, user_id: owner.id });
    expectError(await renewalOrder(lifetime.id), 409, 'license_not_renewable');
    expect((await admin(t, 'DELETE', `/licenses/${license.id}`)).statusCode).toBe(200);
    expectError(await renewalOrder(license.id), 409, 'license_not_renewable');
    const anonymous = await t.app.inject({
      method: 'POST',
      url: `/v1/account/licenses/${license.id}/renewal-order`,
    });
    expect(anonymous.statusCode).toBe(401);
    expectError(await renewalOrder(0), 400, 'rest_invalid_param');
  });
});
