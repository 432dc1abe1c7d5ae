import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { verify } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { payOrder } from '../checkout/helpers.js';
import { pkg, siteCreds } from '../distribution/helpers.js';
import { adminOk, createTestApp, post, setSettings, type TestApp } from '../helpers/app.js';
import {
  BILLING,
  createCustomer,
  createOrder,
  createProduct,
  identity,
  makeZip,
  publish,
  softwareProduct,
  uniqueEmail,
} from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { type Receiver, startReceiver } from '../webhooks/helpers.js';

const CARD = { payment_method: 'test_card', payment_data: { card_number: '4242424242424242' } };
const SECRET = 'e2e-webhook-secret-of-the-store';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface AccountLicense {
  id: number;
  license_key: string;
  product_id: number;
  order_id: number;
  user_id: number;
  subscription_id: number | null;
  usage_expires_at_utc: string;
  product: { id: number; slug: string | null };
}

interface Sub {
  id: number;
  status: string;
  next_payment_at: string | null;
}

/** A signed-in customer's browser. */
async function customerBrowser(t: TestApp, tag: string) {
  const email = uniqueEmail(tag);
  const customer = await createCustomer(t, email);
  const b = new Browser(t);
  await b.login(email, customer.password);
  return { b, customer, email };
}

async function accountLicenses(b: Browser): Promise<AccountLicense[]> {
  const res = await b.get('/account/licenses');
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as AccountLicense[];
}

describe('e2e: purchase → license → activation → package download', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp();
    await setSettings(t, { checkout_rate_limit: 1000 });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => t.close());

  it('buys a licensed software product and downloads its release over real HTTP', async () => {
    const product = await softwareProduct(t);
    const zip = makeZip(4000, 2);
    const release = await publish(t, product.id, '1.2.0', [], zip);
    expect(release.file_sha256).toBe(sha256(zip));

    const { b, customer, email } = await customerBrowser(t, 'e2e-buyer');
    expect((await b.cart()).items).toEqual([]);
    const added = await b.add(product.id);
    expect(added.cart.items.map((i) => i.product_id)).toEqual([product.id]);

    const out = await createOrder(
      t,
      {
        items: added.cart.items.map((i) => ({ product_id: i.product_id, qty: i.quantity })),
        billing: { ...BILLING, email },
      },
      b,
    );
    expect(out.status).toBe('pending');
    expect((await b.cart()).items).toEqual([]);
    // Nothing is issued before payment.
    expect(await accountLicenses(b)).toEqual([]);

    const paid = await payOrder(b, out.order_id, CARD);
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json()).toMatchObject({ ok: true });
    expect((await adminOk<{ status: string }>(t, 'GET', `/orders/${out.order_id}`)).status).toBe(
      'processing',
    );

    const licenses = await accountLicenses(b);
    expect(licenses).toHaveLength(1);
    const license = licenses[0]!;
    expect(license).toMatchObject({
      product_id: product.id,
      order_id: out.order_id,
      user_id: customer.id,
      subscription_id: null,
    });
    const listed = await adminOk<{ licenses: { id: number; license_key: string }[] }>(
      t,
      'GET',
      `/licenses?user_id=${customer.id}`,
    );
    expect(listed.licenses.map((l) => [l.id, l.license_key])).toEqual([[license.id, license.license_key]]);

    const site = identity('shop.e2e.example.com');
    const act = await post(t, '/licenses/activate', { license_key: license.license_key, ...site });
    expect(act.statusCode, act.body).toBe(200);

    const res = await pkg(t, {
      slug: product.slug,
      purpose: 'install',
      ...siteCreds(license.license_key, site),
    });
    expect(res.statusCode, res.body).toBe(200);
    const pack = res.json() as {
      success: boolean;
      download_url: string;
      version: string;
      file_sha256: string;
    };
    expect(pack).toMatchObject({ success: true, version: '1.2.0', file_sha256: release.file_sha256 });

    const u = new URL(pack.download_url);
    const dl = await fetch(`${base}${u.pathname}${u.search}`);
    expect(dl.status).toBe(200);
    const bytes = Buffer.from(await dl.arrayBuffer());
    expect(sha256(bytes)).toBe(pack.file_sha256);
    expect(bytes.equals(zip)).toBe(true);
    if (dl.headers.get('x-package-sha256')) expect(dl.headers.get('x-package-sha256')).toBe(pack.file_sha256);

    // The URL is single-use.
    const again = await fetch(`${base}${u.pathname}${u.search}`);
    expect(again.status).not.toBe(200);
  });
});

describe('e2e: subscription purchase → renewal → license.renewed webhook', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await createTestApp({ env: { TEST_CLOCK: '1' } });
    await setSettings(t, { checkout_rate_limit: 1000 });
    receiver = await startReceiver(200);
    await setSettings(t, { webhook_url: receiver.url, webhook_secret: SECRET });
    t.app.services.dispatcher.start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('renews on schedule, extends the license and delivers a signed license.renewed', async () => {
    const product = await createProduct(t, {
      type: 'subscription',
      price: '10.00',
      subscription: { period: 'month', interval: 1 },
      entitlement_policy: { usage: { mode: 'days', days: 30 }, updates: { mode: 'license' } },
    });
    const { b, customer, email } = await customerBrowser(t, 'e2e-subscriber');
    const out = await createOrder(
      t,
      {
        items: [{ product_id: product.id, qty: 1 }],
        billing: { ...BILLING, email },
      },
      b,
    );
    const paid = await payOrder(b, out.order_id, CARD);
    expect(paid.json(), paid.body).toMatchObject({ ok: true });

    const [license] = await accountLicenses(b);
    expect(license).toMatchObject({ product_id: product.id, order_id: out.order_id, user_id: customer.id });
    const subId = license!.subscription_id!;
    expect(subId).toEqual(expect.any(Number));
    const before = license!.usage_expires_at_utc;
    expect(before).not.toBe('');
    const sub = await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`);
    expect(sub.status).toBe('active');
    const due = Date.parse(sub.next_payment_at!);

    // Past the due date: the scheduler creates exactly one pending renewal order.
    const clock = t.app.services.testClock!;
    await clock.advance(Math.ceil((due - clock.now().getTime()) / 1000) + 3600);
    await t.app.services.renewals.tick();
    await t.app.services.renewals.tick();
    const renewals = await t.app.services.database.db
      .selectFrom('orders')
      .selectAll()
      .where('subscription_id', '=', subId)
      .where('created_via', '=', 'renewal')
      .execute();
    expect(renewals).toHaveLength(1);
    const renewal = renewals[0]!;
    expect(renewal).toMatchObject({ status: 'pending', customer_id: customer.id });
    // Overdue and unpaid: on hold until the renewal is paid.
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`)).status).toBe('on-hold');

    const paidRenewal = await payOrder(new Browser(t), renewal.id, { key: renewal.order_key, ...CARD });
    expect(paidRenewal.json(), paidRenewal.body).toMatchObject({ ok: true });

    const after = await adminOk<{ licenses: { id: number; usage_expires_at_utc: string }[] }>(
      t,
      'GET',
      `/licenses?user_id=${customer.id}`,
    );
    const renewed = after.licenses.find((l) => l.id === license!.id)!;
    expect(Date.parse(renewed.usage_expires_at_utc)).toBeGreaterThan(Date.parse(before));
    expect(Date.parse(renewed.usage_expires_at_utc)).toBeGreaterThan(clock.now().getTime() + 27 * 86400_000);
    const next = await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`);
    expect(next.status).toBe('active');
    expect(Date.parse(next.next_payment_at!)).toBeGreaterThan(due);

    const req = await waitFor(
      () =>
        receiver.requests.find((r) => {
          const body = JSON.parse(r.body) as { event?: string; data?: { order_id?: number } };
          return body.event === 'license.renewed' && body.data?.order_id === renewal.id;
        }),
      'license.renewed delivery',
    );
    const signature = req.headers['x-tollgate-signature'] as string;
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(await verify(SECRET, req.body, signature)).toBe(true);
    expect(await verify('not-the-secret', req.body, signature)).toBe(false);
    const payload = JSON.parse(req.body) as { event: string; data: Record<string, unknown> };
    expect(payload.data).toEqual({ license_id: license!.id, subscription_id: subId, order_id: renewal.id });
    for (const v of Object.values(payload.data)) expect(Number.isInteger(v)).toBe(true);
    expect(req.body).not.toContain(license!.license_key);
    expect(req.body).not.toContain('license_key');
  });
});

describe('e2e: an unpaid renewal puts the subscription on hold, then expires it', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { TEST_CLOCK: '1' } });
    await setSettings(t, { checkout_rate_limit: 1000, renewal_window_days: 3 });
  });
  afterAll(async () => t.close());

  const statusEvents = async (subId: number) =>
    (
      await t.app.services.database.db
        .selectFrom('webhook_events')
        .select('payload')
        .where('event', '=', 'subscription.status_changed')
        .orderBy('id')
        .execute()
    )
      .map((r) => (JSON.parse(r.payload) as { data: { subscription_id: number } }).data)
      .filter((d) => d.subscription_id === subId);

  it('on-hold once overdue (license inactive), expired after renewal_window_days, one event each', async () => {
    const product = await createProduct(t, {
      type: 'subscription',
      price: '10.00',
      subscription: { period: 'month', interval: 1 },
    });
    const { b, email } = await customerBrowser(t, 'e2e-lapsed');
    const out = await createOrder(
      t,
      {
        items: [{ product_id: product.id, qty: 1 }],
        billing: { ...BILLING, email },
      },
      b,
    );
    expect((await payOrder(b, out.order_id, CARD)).json()).toMatchObject({ ok: true });
    const [license] = await accountLicenses(b);
    const subId = license!.subscription_id!;
    const sub = await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`);
    const due = Date.parse(sub.next_payment_at!);
    const clock = t.app.services.testClock!;
    const validate = async () =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/v1/licenses/validate',
          payload: { license_key: license!.license_key, ...identity('lapsed.example.com') },
        })
      ).json() as { valid: boolean; error?: string };

    // Not due yet: nothing happens.
    await t.app.services.renewals.tick();
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`)).status).toBe('active');

    await clock.advance(Math.ceil((due - clock.now().getTime()) / 1000) + 60);
    await t.app.services.renewals.tick();
    await t.app.services.renewals.tick();
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`)).status).toBe('on-hold');
    expect(await validate()).toMatchObject({ valid: false, error: 'subscription_inactive' });
    const renewals = await t.app.services.database.db
      .selectFrom('orders')
      .select(['id', 'status'])
      .where('subscription_id', '=', subId)
      .execute();
    expect(renewals).toEqual([{ id: expect.any(Number), status: 'pending' }]);

    // Still inside the window: stays on hold.
    await clock.advance(2 * 86400);
    await t.app.services.renewals.tick();
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`)).status).toBe('on-hold');

    await clock.advance(2 * 86400);
    await t.app.services.renewals.tick();
    await t.app.services.renewals.tick();
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`)).status).toBe('expired');
    expect((await adminOk<{ status: string }>(t, 'GET', `/orders/${renewals[0]!.id}`)).status).toBe(
      'cancelled',
    );
    expect(await statusEvents(subId)).toEqual([
      { subscription_id: subId, status: 'active', reason: 'payment_received' },
      { subscription_id: subId, status: 'on-hold', reason: 'renewal_payment_overdue' },
      { subscription_id: subId, status: 'expired', reason: 'renewal_window_expired' },
    ]);
    // An expired subscription gets no further renewal orders.
    await clock.advance(40 * 86400);
    await t.app.services.renewals.tick();
    expect(
      await t.app.services.database.db
        .selectFrom('orders')
        .select('id')
        .where('subscription_id', '=', subId)
        .execute(),
    ).toHaveLength(1);
  });

  it('paying the overdue renewal inside the window makes the subscription active again', async () => {
    const product = await createProduct(t, {
      type: 'subscription',
      price: '10.00',
      subscription: { period: 'month', interval: 1 },
    });
    const { b, email } = await customerBrowser(t, 'e2e-late-payer');
    const out = await createOrder(
      t,
      {
        items: [{ product_id: product.id, qty: 1 }],
        billing: { ...BILLING, email },
      },
      b,
    );
    await payOrder(b, out.order_id, CARD);
    const [license] = await accountLicenses(b);
    const subId = license!.subscription_id!;
    const due = Date.parse((await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`)).next_payment_at!);
    const clock = t.app.services.testClock!;
    await clock.advance(Math.ceil((due - clock.now().getTime()) / 1000) + 86400);
    await t.app.services.renewals.tick();
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`)).status).toBe('on-hold');
    const [renewal] = await t.app.services.database.db
      .selectFrom('orders')
      .select(['id', 'order_key'])
      .where('subscription_id', '=', subId)
      .execute();
    const paid = await payOrder(new Browser(t), renewal!.id, { key: renewal!.order_key, ...CARD });
    expect(paid.json(), paid.body).toMatchObject({ ok: true });
    const after = await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`);
    expect(after.status).toBe('active');
    expect(Date.parse(after.next_payment_at!)).toBeGreaterThan(due);
    await clock.advance(5 * 86400);
    await t.app.services.renewals.tick();
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${subId}`)).status).toBe('active');
    expect((await statusEvents(subId)).map((d) => (d as { status?: string }).status)).toEqual([
      'active',
      'on-hold',
      'active',
    ]);
  });
});
