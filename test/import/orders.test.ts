import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportOrder, ImportSubscription } from '../../src/modules/imports/records.js';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { STRIPE_KEYS, StripeStandIn } from '../stripe/helpers.js';
import { type Records, recordsSource } from './records.js';

// The importer's orders and subscriptions (docs/migrating.md, 'Importing'), from records as every
// source yields them, on the test's database: a dry run, a run, a second run, two runs at once.

let t: TestApp;
let standIn: StripeStandIn;
const tag = `${process.pid}${Date.now().toString(36)}`;
beforeAll(async () => {
  standIn = await new StripeStandIn().start();
  t = await createTestApp({ env: { STRIPE_API_URL: standIn.url } });
  // A new store is in test mode: imported orders happened for real and are never test orders.
  // Stripe's key lets the import see that the old store's Stripe subscription was cancelled there.
  await setSettings(t, { store_mode: 'test', stripe_secret_key: STRIPE_KEYS.stripe_secret_key });
  standIn.addSubscription('sub_1Old', 'cus_1Old', 'canceled');
});
afterAll(async () => {
  await t.close();
  await standIn.stop();
});

const db = () => t.app.services.database.db;

const order = (sourceId: string, patch: Partial<ImportOrder> = {}): ImportOrder => ({
  sourceId,
  customerSourceId: 'c1',
  status: 'completed',
  currency: 'USD',
  total: 1200,
  tax: 200,
  gateway: 'stripe',
  transactionId: `pi_${sourceId}`,
  createdAt: '2024-01-10T10:00:00Z',
  paidAt: '2024-01-10T10:00:05Z',
  items: [{ productSourceId: 'p1', name: 'Pro', quantity: 1, total: 1200, tax: 200 }],
  ...patch,
});
const subscription = (sourceId: string, patch: Partial<ImportSubscription> = {}): ImportSubscription => ({
  sourceId,
  customerSourceId: 'c1',
  productSourceId: 'p1',
  status: 'active',
  billingPeriod: 'month',
  billingInterval: 1,
  nextPaymentAt: '2030-01-10T10:00:00Z',
  currency: 'USD',
  recurringTotal: 1200,
  ...patch,
});

function records(): Records {
  return {
    customers: [
      { sourceId: 'c1', email: `ann-${tag}@example.com` },
      { sourceId: 'c2', email: `bob-${tag}@example.com` },
    ],
    products: [
      {
        sourceId: 'p1',
        name: 'Pro',
        slug: `pro-${tag}`,
        price: 1200,
        variations: [{ sourceId: 'v1', name: 'Agency', price: 9900 }],
      },
    ],
    orders: [
      order('o1'),
      order('o2', {
        customerSourceId: 'c2',
        currency: 'JPY',
        total: 3500,
        tax: 0,
        gateway: 'paypal',
        transactionId: undefined,
        items: [
          { productSourceId: 'p1', variationSourceId: 'v1', name: 'Pro - Agency', quantity: 2, total: 3500 },
        ],
      }),
      order('o3', { status: 'refunded', total: 500, tax: 0, items: [] }),
      order('o4', { status: 'pending', total: 900, tax: 0, paidAt: undefined, items: [] }),
      order('o5', { customerSourceId: 'gone', total: 700 }),
      order('o6', { currency: 'EURO' }),
      order('o7', { total: -100 }),
      order('o8', {
        total: 400,
        items: [{ productSourceId: 'p9', name: 'Deleted', quantity: 1, total: 400 }],
      }),
      order('o9', { total: 100, tax: 0, createdAt: 'yesterday' }),
      // A row the reader could not translate: its amount is not known to the writer.
      { kind: 'orders', sourceId: 'o10', reason: 'invalid_amount', detail: '3.001' },
    ],
    subscriptions: [
      subscription('s1', { parentOrderSourceId: 'o1', gateway: 'stripe', gatewayProfileId: 'sub_1Old' }),
      // It renews, in a currency this store does not sell in.
      subscription('s2', { currency: 'EUR' }),
      // Ended: it never renews, so its currency does not matter.
      subscription('s3', {
        customerSourceId: 'c2',
        status: 'cancelled',
        currency: 'EUR',
        nextPaymentAt: null,
      }),
      subscription('s4', { billingPeriod: 'fortnight' as 'month' }),
      subscription('s5', { parentOrderSourceId: 'o5', status: 'on-hold', gateway: 'paypal_commerce' }),
    ],
    licenses: [
      {
        sourceId: 'l1',
        key: `KEY-ONE-${tag}`,
        productSourceId: 'p1',
        customerSourceId: 'c1',
        orderSourceId: 'o1',
        subscriptionSourceId: 's1',
        status: 'active',
        expiresAt: '2030-01-10T10:00:00Z',
        activationLimit: null,
      },
      {
        sourceId: 'l2',
        key: `KEY-TWO-${tag}`,
        productSourceId: 'p1',
        customerSourceId: 'c2',
        // Its order was left out; its subscription ended: the license stands alone.
        orderSourceId: 'o5',
        subscriptionSourceId: 's3',
        status: 'active',
        expiresAt: '2030-01-10T10:00:00Z',
        activationLimit: null,
      },
    ],
  };
}

// What the old store says it took: o10's 300 is in it, and in no row the writer saw.
const source = (name = 'edd') =>
  recordsSource(name, records(), { revenue: { USD: 1200 + 700 + 400 + 100 + 300, JPY: 3500, EURO: 1200 } });

const problemsOf = (r: { problems: { kind: string; sourceId: string; reason: string }[] }) =>
  r.problems.map((p) => `${p.kind}:${p.sourceId}:${p.reason}`).sort();
const PROBLEMS = [
  'orders:o10:invalid_amount',
  'orders:o5:unknown_customer',
  'orders:o6:invalid_currency',
  'orders:o7:invalid_amount',
  'orders:o8:unknown_product',
  'orders:o9:invalid_date',
  'subscriptions:s2:currency_not_enabled',
  'subscriptions:s4:invalid_period',
];

const imported = async (kind: string, name = 'edd') =>
  db()
    .selectFrom('import_map')
    .select(['source_id', 'target_id'])
    .where('source', '=', name)
    .where('kind', '=', kind)
    .execute()
    .then((rows) => new Map(rows.map((r) => [r.source_id, Number(r.target_id)])));

describe('orders and subscriptions imported', () => {
  it('a dry run counts and checks everything, and writes nothing', async () => {
    const report = await t.app.services.imports.run(source(), { dryRun: true });
    expect(report.counts.orders).toEqual({ created: 4, present: 0, skipped: 6 });
    expect(report.counts.subscriptions).toEqual({ created: 3, present: 0, skipped: 2 });
    expect(problemsOf(report)).toEqual(PROBLEMS);
    expect((await imported('orders')).size).toBe(0);
    expect(await db().selectFrom('orders').select('id').execute()).toEqual([]);
    expect(await db().selectFrom('subscriptions').select('id').execute()).toEqual([]);
  });

  it('writes orders as they happened, and reconciles counts and revenue per currency', async () => {
    const report = await t.app.services.imports.run(source(), { dryRun: false });
    expect(report.counts.orders).toEqual({ created: 4, present: 0, skipped: 6 });
    expect(report.counts.subscriptions).toEqual({ created: 3, present: 0, skipped: 2 });
    expect(problemsOf(report)).toEqual(PROBLEMS);
    expect(report.reconciliation.filter((r) => r.kind === 'orders' || r.kind === 'subscriptions')).toEqual([
      { kind: 'orders', source: 10, imported: 4, skipped: 6, ok: true },
      { kind: 'subscriptions', source: 5, imported: 3, skipped: 2, ok: true },
    ]);
    // Paid orders left out are counted with their amounts; the reader's row has none, so USD is
    // 300 short and the import does not reconcile.
    expect(report.revenue).toEqual([
      { currency: 'EURO', source: 1200, imported: 0, skipped: 1200, ok: true },
      { currency: 'JPY', source: 3500, imported: 3500, skipped: 0, ok: true },
      { currency: 'USD', source: 2700, imported: 1200, skipped: 1200, ok: false },
    ]);
    expect(report.ok).toBe(false);

    const ids = await imported('orders');
    const rows = await db()
      .selectFrom('orders')
      .selectAll()
      .where('id', 'in', [...ids.values()])
      .orderBy('id')
      .execute();
    const bySource = new Map([...ids].map(([s, id]) => [s, rows.find((r) => r.id === id)!]));
    const users = await imported('customers');
    expect(bySource.get('o1')).toMatchObject({
      customer_id: users.get('c1'),
      status: 'completed',
      created_via: 'import',
      currency: 'USD',
      decimals: 2,
      payment_method: 'stripe',
      created_at: '2024-01-10T10:00:00.000Z',
      paid_at: '2024-01-10T10:00:05.000Z',
      test: 0,
      stock_held: '[]',
    });
    const o1 = bySource.get('o1')!;
    expect([Number(o1.total), Number(o1.total_tax), Number(o1.subtotal)]).toEqual([1200, 200, 1000]);
    const o2 = bySource.get('o2')!;
    expect([o2.currency, o2.decimals, Number(o2.total), o2.customer_id]).toEqual([
      'JPY',
      0,
      3500,
      users.get('c2'),
    ]);
    // A gateway this store does not have is only the order's title: it is paid with any gateway.
    expect([o2.payment_method, o2.payment_method_title]).toEqual(['', 'paypal']);
    const items = await db().selectFrom('order_items').selectAll().where('order_id', '=', o2.id).execute();
    const products = await imported('products');
    const variations = await imported('variations');
    expect(
      items.map((i) => [i.product_id, i.variation_id, i.quantity, Number(i.total), Number(i.price)]),
    ).toEqual([[products.get('p1'), variations.get('v1'), 2, 3500, 1750]]);
    expect(bySource.get('o3')).toMatchObject({ status: 'refunded' });
    expect(Number(bySource.get('o3')!.refunded_total)).toBe(500);
    expect(bySource.get('o4')).toMatchObject({ status: 'pending', paid_at: null });
    const notes = await db().selectFrom('order_notes').select('body').where('order_id', '=', o1.id).execute();
    expect(notes.map((n) => n.body).join()).toContain('pi_o1');

    // Nothing followed: no license issued by an order, no webhook, no email, no invoice.
    const licenses = await db()
      .selectFrom('licenses')
      .select(['license_key', 'order_id', 'subscription_id'])
      .orderBy('license_key')
      .execute();
    expect(licenses.map((l) => l.license_key)).toEqual([`KEY-ONE-${tag}`, `KEY-TWO-${tag}`]);
    expect(await db().selectFrom('webhook_events').select('event').execute()).toEqual([]);
    expect(await db().selectFrom('mail_messages').select('kind').execute()).toEqual([]);
    expect(await db().selectFrom('invoices').select('id').execute()).toEqual([]);

    const subs = await imported('subscriptions');
    const s1 = await db()
      .selectFrom('subscriptions')
      .selectAll()
      .where('id', '=', subs.get('s1')!)
      .executeTakeFirstOrThrow();
    expect(s1).toMatchObject({
      user_id: users.get('c1'),
      product_id: products.get('p1'),
      status: 'active',
      billing_period: 'month',
      billing_interval: 1,
      next_payment_at: '2030-01-10T10:00:00.000Z',
      currency: 'USD',
      payment_method: 'stripe',
      parent_order_id: o1.id,
      gateway_profile_id: 'sub_1Old',
    });
    expect(Number(s1.recurring_total)).toBe(1200);
    const s5 = await db()
      .selectFrom('subscriptions')
      .selectAll()
      .where('id', '=', subs.get('s5')!)
      .executeTakeFirstOrThrow();
    expect([s5.status, s5.parent_order_id, s5.payment_method]).toEqual(['on-hold', null, '']);
    // The license renews with its running subscription; the other keeps its own expiry alone.
    expect(licenses).toEqual([
      { license_key: `KEY-ONE-${tag}`, order_id: o1.id, subscription_id: s1.id },
      { license_key: `KEY-TWO-${tag}`, order_id: null, subscription_id: null },
    ]);

    // The audit trail has one entry per kind.
    const audit = await db()
      .selectFrom('audit_events')
      .select('action')
      .where('entity_type', '=', 'import')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(
      expect.arrayContaining(['import_orders', 'import_subscriptions']),
    );
  });

  it('a second run makes nothing', async () => {
    const count = async (table: 'orders' | 'subscriptions' | 'order_items' | 'order_notes') =>
      Number(
        (
          await db()
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = [
      await count('orders'),
      await count('subscriptions'),
      await count('order_items'),
      await count('order_notes'),
    ];
    const report = await t.app.services.imports.run(source(), { dryRun: false });
    expect(report.counts.orders).toEqual({ created: 0, present: 4, skipped: 6 });
    expect(report.counts.subscriptions).toEqual({ created: 0, present: 3, skipped: 2 });
    expect(report.revenue.find((r) => r.currency === 'JPY')).toMatchObject({ imported: 3500, ok: true });
    expect([
      await count('orders'),
      await count('subscriptions'),
      await count('order_items'),
      await count('order_notes'),
    ]).toEqual(before);
  });

  it('two runs at once make each order and subscription once', async () => {
    const [a, b] = await Promise.all([
      t.app.services.imports.run(source('parallel'), { dryRun: false }),
      t.app.services.imports.run(source('parallel'), { dryRun: false }),
    ]);
    expect(a.counts.orders.created + b.counts.orders.created).toBe(4);
    expect(a.counts.orders.created + a.counts.orders.present).toBe(4);
    expect(b.counts.orders.created + b.counts.orders.present).toBe(4);
    expect(a.counts.subscriptions.created + b.counts.subscriptions.created).toBe(3);
    const notes = await db()
      .selectFrom('order_notes')
      .select('order_id')
      .where('body', 'like', 'Imported from parallel %')
      .execute();
    expect(notes).toHaveLength(4);
    const subs = await db()
      .selectFrom('subscriptions')
      .select('id')
      .where('gateway_profile_id', '=', 'sub_1Old')
      .execute();
    expect(subs).toHaveLength(2);
  });
});
