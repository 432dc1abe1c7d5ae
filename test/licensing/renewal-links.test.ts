import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, advanceClock, createTestApp, type TestApp } from '../helpers/app.js';
import { type Customer, createCustomer, createLicense, createProduct } from '../helpers/factories.js';

/**
 * The one-click renewal link of a term license (docs/selling.md, 'Renewals'): signed out, it makes
 * the period's pending renewal order once and opens its pay page; a renewed license says so; a
 * link this store did not sign, or one past its time, is refused with its own code.
 */
describe('renewal links', () => {
  let t: TestApp;
  let owner: Customer;
  let productId: number;
  const DAY = 86_400_000;
  const term = { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 365 } };

  beforeAll(async () => {
    t = await createTestApp({ env: { TEST_CLOCK: '1' }, captureLogs: true });
    owner = await createCustomer(t);
    productId = (await createProduct(t, { price: '19.99' })).id;
    const res = await admin(t, 'PATCH', '/payment-gateways/test_card', { enabled: true });
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(() => t?.close());

  const db = () => t.app.services.database.db;
  const now = async () => Date.parse((await advanceClock(t, 0)).now as string);
  const termLicense = async (extra: Record<string, unknown> = {}) =>
    createLicense(t, { product_id: productId, user_id: owner.id, entitlement_policy: term, ...extra });
  /** The link's path and query, as a buyer's browser asks for it (no cookie, no sign-in). */
  const linkOf = async (licenseId: number) => {
    const { usage_expires_at } = await stored(licenseId);
    const url = await t.app.services.renewalLinks.urlFor(licenseId, usage_expires_at!);
    const u = new URL(url!);
    return u.pathname + u.search;
  };
  const open = (path: string) => t.app.inject({ method: 'GET', url: path });
  const renewalOrders = (licenseId: number) =>
    db()
      .selectFrom('order_items')
      .select('order_id')
      .where('meta', '=', JSON.stringify({ license_id: licenseId, license_action: 'renewal' }))
      .execute();
  const stored = (id: number) =>
    db().selectFrom('licenses').select('usage_expires_at').where('id', '=', id).executeTakeFirstOrThrow();
  const counts = async () => ({
    orders: Number(
      (
        await db()
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
    links: Number(
      (
        await db()
          .selectFrom('renewal_link_orders')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
  });
  const refusal = (res: { statusCode: number; body: string }, status: number, code: string) => {
    expect(res.statusCode, res.body).toBe(status);
    expect(res.body).toContain(`data-code="${code}"`);
  };

  it('signed out: makes the pending renewal order once and opens its pay page; again, the same order', async () => {
    const license = await termLicense();
    const path = await linkOf(license.id);
    expect(path).toMatch(/^\/renew\?token=\d+\.\d+\.[A-Za-z0-9_-]{43}$/);
    const first = await open(path);
    expect(first.statusCode, first.body).toBe(303);
    const location = String(first.headers.location);
    expect(location).toMatch(/^\/checkout\/pay\/\d+\?key=/);
    const page = await open(location);
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/Pay \D*19\.99/);
    expect((await open(path)).headers.location).toBe(location);
    // The request log names the page, never the token.
    expect(t.logs()).toContain('/renew?token=[REDACTED]');
    expect(t.logs()).not.toContain(path.slice('/renew?token='.length));
    const orders = await renewalOrders(license.id);
    expect(orders).toHaveLength(1);
    const order = await db()
      .selectFrom('orders')
      .select(['status', 'customer_id', 'total', 'billing'])
      .where('id', '=', orders[0]!.order_id)
      .executeTakeFirstOrThrow();
    // The owner's order, and nothing of the owner on a page that anyone holding the link can open.
    expect(order).toMatchObject({ status: 'pending', customer_id: owner.id, billing: '{}' });
    expect(Number(order.total)).toBe(1999);
  });

  it('paid: the license is renewed with license.renewed, and the link then says so without a new order', async () => {
    const license = await termLicense();
    const oldEnd = Date.parse((await stored(license.id)).usage_expires_at!);
    const path = await linkOf(license.id);
    const location = String((await open(path)).headers.location);
    const [, id, key] = /^\/checkout\/pay\/(\d+)\?key=(.+)$/.exec(location)!;
    const paid = await t.app.inject({
      method: 'POST',
      url: `/v1/checkout/pay-order/${id}`,
      payload: {
        key: decodeURIComponent(key!),
        payment_method: 'test_card',
        payment_data: { card_number: '4242424242424242' },
      },
    });
    expect(paid.json(), paid.body).toMatchObject({ ok: true });
    expect(Date.parse((await stored(license.id)).usage_expires_at!)).toBe(oldEnd + 365 * DAY);
    const events = await db()
      .selectFrom('webhook_events')
      .select('payload')
      .where('event', '=', 'license.renewed')
      .execute();
    const mine = events.map((e) => JSON.parse(e.payload).data).filter((d) => d.license_id === license.id);
    expect(mine).toEqual([{ license_id: license.id, subscription_id: 0, order_id: Number(id) }]);
    const again = await open(path);
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('data-state="renewed"');
    expect(await renewalOrders(license.id)).toHaveLength(1);
  });

  it('a cancelled order is replaced by a new one for the same period', async () => {
    const license = await termLicense();
    const path = await linkOf(license.id);
    const first = String((await open(path)).headers.location);
    const [, id] = /^\/checkout\/pay\/(\d+)/.exec(first)!;
    await db().updateTable('orders').set({ status: 'cancelled' }).where('id', '=', Number(id)).execute();
    const second = String((await open(path)).headers.location);
    expect(second).not.toBe(first);
    expect((await open(path)).headers.location).toBe(second);
    expect(await renewalOrders(license.id)).toHaveLength(2);
  });

  it('tampered, malformed and hostile links: 400 invalid_renewal_link, and nothing is made', async () => {
    const license = await termLicense();
    const other = await termLicense();
    const path = await linkOf(license.id);
    const token = path.slice('/renew?token='.length);
    const [lid, end, mac] = token.split('.') as [string, string, string];
    const flipped = mac.slice(0, -1) + (mac.endsWith('A') ? 'B' : 'A');
    const before = await counts();
    for (const bad of [
      `/renew?token=${lid}.${end}.${flipped}`,
      `/renew?token=${other.id}.${end}.${mac}`,
      `/renew?token=${lid}.${Number(end) + 86_400}.${mac}`,
      `/renew?token=${lid}.${end}`,
      '/renew',
      '/renew?token=',
      `/renew?token=${token}&token=${token}`,
      `/renew?token=${encodeURIComponent(`${lid}.${end}.<script>alert(1)</script>`)}`,
      `/renew?token=${'9'.repeat(10_000)}`,
      `/renew?token=${encodeURIComponent("1' OR '1'='1")}`,
    ]) {
      refusal(await open(bad), 400, 'invalid_renewal_link');
    }
    expect(await counts()).toEqual(before);
    // The genuine link still works.
    expect((await open(path)).statusCode).toBe(303);
  });

  it('expired: 410 renewal_link_expired from 60 days after the end; a revoked license: 409', async () => {
    const ends = new Date((await now()) + 10 * DAY).toISOString();
    const license = await termLicense({ usage_expires_at: ends });
    const path = await linkOf(license.id);
    const revoked = await termLicense({ usage_expires_at: ends });
    const revokedPath = await linkOf(revoked.id);
    expect((await admin(t, 'DELETE', `/licenses/${revoked.id}`)).statusCode).toBe(200);
    refusal(await open(revokedPath), 409, 'license_not_renewable');
    await advanceClock(t, 69 * 86_400);
    // 59 days after the end: it still works (the license is expired, the link is not).
    expect((await open(path)).statusCode).toBe(303);
    await advanceClock(t, 2 * 86_400);
    const before = await counts();
    refusal(await open(path), 410, 'renewal_link_expired');
    expect(await counts()).toEqual(before);
  });

  it('parallel opens over real HTTP make one order', async () => {
    const license = await termLicense();
    const path = await linkOf(license.id);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        fetch(`http://127.0.0.1:${port}${path}`, { redirect: 'manual' }).then((r) => ({
          status: r.status,
          location: r.headers.get('location'),
        })),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(303));
    expect(new Set(answers.map((a) => a.location)).size).toBe(1);
    expect(await renewalOrders(license.id)).toHaveLength(1);
  });
});
