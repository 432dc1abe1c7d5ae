import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportLicense, ImportOrder, ImportSubscription } from '../../src/modules/imports/records.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type Records, recordsSource } from './records.js';

// Licenses an earlier run imported without their order or subscription, linked by a later run that
// imports those (docs/migrating.md, 'Orders and subscriptions imported later'): every state here
// is made by import runs, as a store moving in several steps makes it.

let t: TestApp;
const tag = `${process.pid}${Date.now().toString(36)}`;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;

const order = (sourceId: string): ImportOrder => ({
  sourceId,
  customerSourceId: 'c1',
  status: 'completed',
  currency: 'USD',
  total: 4900,
  createdAt: '2024-01-10T10:00:00Z',
  items: [{ productSourceId: 'p1', name: 'Pro', quantity: 1, total: 4900 }],
});
const subscription = (sourceId: string, status: ImportSubscription['status']): ImportSubscription => ({
  sourceId,
  customerSourceId: 'c1',
  productSourceId: 'p1',
  status,
  billingPeriod: 'year',
  billingInterval: 1,
  nextPaymentAt: status === 'active' ? '2030-01-10T10:00:00Z' : null,
  currency: 'USD',
  recurringTotal: 4900,
});
const license = (name: string, sourceId: string, patch: Partial<ImportLicense> = {}): ImportLicense => ({
  sourceId,
  key: `LATE-${name}-${sourceId}-${tag}`,
  productSourceId: 'p1',
  customerSourceId: 'c1',
  status: 'active',
  expiresAt: '2030-01-10T10:00:00Z',
  activationLimit: null,
  ...patch,
});

const people = (name: string): Records => ({
  customers: [{ sourceId: 'c1', email: `late-${name}-${tag}@example.com` }],
  products: [{ sourceId: 'p1', name: 'Pro', slug: `late-${name}-${tag}`, price: 4900, variations: [] }],
});

/** The first export held one order (o3) and no subscriptions; each license names its order. */
const first = (name = 'edd'): Records => ({
  ...people(name),
  orders: [order('o3')],
  licenses: [
    license(name, 'l1', { orderSourceId: 'o1' }),
    license(name, 'l2', { orderSourceId: 'o2', subscriptionSourceId: 's1' }),
    license(name, 'l3', { orderSourceId: 'o9' }),
    license(name, 'l4', { orderSourceId: 'o3' }),
    license(name, 'l5', { subscriptionSourceId: 's2' }),
  ],
});

/** The whole store: every order and subscription; l4 now names o4 (the old store moved it). */
const whole = (name = 'edd'): Records => ({
  ...people(name),
  orders: [order('o1'), order('o2'), order('o3'), order('o4')],
  subscriptions: [subscription('s1', 'active'), subscription('s2', 'cancelled')],
  licenses: [
    license(name, 'l1', { orderSourceId: 'o1' }),
    license(name, 'l2', { orderSourceId: 'o2', subscriptionSourceId: 's1' }),
    license(name, 'l3', { orderSourceId: 'o9' }),
    license(name, 'l4', { orderSourceId: 'o4' }),
    license(name, 'l5', { subscriptionSourceId: 's2' }),
  ],
});

const mapped = async (kind: string, name = 'edd') =>
  new Map(
    (
      await db()
        .selectFrom('import_map')
        .select(['source_id', 'target_id'])
        .where('source', '=', name)
        .where('kind', '=', kind)
        .execute()
    ).map((r) => [r.source_id, Number(r.target_id)]),
  );

/** Each imported license's order and subscription, by the source's license id. */
async function links(
  name = 'edd',
): Promise<Record<string, { order: number | null; subscription: number | null }>> {
  const ids = await mapped('licenses', name);
  const rows = await db()
    .selectFrom('licenses')
    .select(['id', 'order_id', 'subscription_id'])
    .where('id', 'in', [...ids.values()])
    .execute();
  return Object.fromEntries(
    [...ids].map(([sourceId, id]) => {
      const row = rows.find((r) => Number(r.id) === id)!;
      return [
        sourceId,
        {
          order: row.order_id === null ? null : Number(row.order_id),
          subscription: row.subscription_id === null ? null : Number(row.subscription_id),
        },
      ];
    }),
  );
}

describe('licenses linked late to orders and subscriptions', () => {
  it('a first run without the orders leaves its licenses unlinked', async () => {
    const report = await t.app.services.imports.run(recordsSource('edd', first()), { dryRun: false });
    expect(report.counts.licenses).toEqual({ created: 5, present: 0, skipped: 0 });
    expect(report.links).toEqual({ orders: 0, subscriptions: 0, kept: [] });
    const o3 = (await mapped('orders')).get('o3')!;
    expect(await links()).toEqual({
      l1: { order: null, subscription: null },
      l2: { order: null, subscription: null },
      l3: { order: null, subscription: null },
      l4: { order: o3, subscription: null },
      l5: { order: null, subscription: null },
    });
  });

  it('a dry run of the whole store links nothing', async () => {
    const before = await links();
    const report = await t.app.services.imports.run(recordsSource('edd', whole()), { dryRun: true });
    expect(report.links).toEqual({ orders: 0, subscriptions: 0, kept: [] });
    expect(await links()).toEqual(before);
  });

  it('the run that brings the orders and subscriptions links the licenses that have none, and keeps and reports another link', async () => {
    const report = await t.app.services.imports.run(recordsSource('edd', whole()), { dryRun: false });
    expect(report.counts.orders).toEqual({ created: 3, present: 1, skipped: 0 });
    expect(report.counts.subscriptions).toEqual({ created: 2, present: 0, skipped: 0 });
    expect(report.counts.licenses).toEqual({ created: 0, present: 5, skipped: 0 });
    expect(report.ok).toBe(true);
    const orders = await mapped('orders');
    const subscriptions = await mapped('subscriptions');
    // l3's order was never imported; l5's subscription ended, and an ended one governs no license.
    expect(await links()).toEqual({
      l1: { order: orders.get('o1'), subscription: null },
      l2: { order: orders.get('o2'), subscription: subscriptions.get('s1') },
      l3: { order: null, subscription: null },
      l4: { order: orders.get('o3'), subscription: null },
      l5: { order: null, subscription: null },
    });
    expect(report.links).toEqual({
      orders: 2,
      subscriptions: 1,
      kept: [{ license: 'l4', kind: 'orders', sourceId: 'o4', keptId: orders.get('o3') }],
    });
  });

  it('a run again links nothing more and reports the kept link again', async () => {
    const before = await links();
    const report = await t.app.services.imports.run(recordsSource('edd', whole()), { dryRun: false });
    expect(report.counts.licenses).toEqual({ created: 0, present: 5, skipped: 0 });
    expect(report.links).toEqual({
      orders: 0,
      subscriptions: 0,
      kept: [{ license: 'l4', kind: 'orders', sourceId: 'o4', keptId: (await mapped('orders')).get('o3') }],
    });
    expect(await links()).toEqual(before);
  });

  it('two runs at once link each license once', async () => {
    const run = (records: Records) =>
      t.app.services.imports.run(recordsSource('woocommerce', records), { dryRun: false });
    await run(first('woocommerce'));
    const reports = await Promise.all([run(whole('woocommerce')), run(whole('woocommerce'))]);
    const sum = (of: (r: (typeof reports)[number]) => number) => reports.reduce((n, r) => n + of(r), 0);
    expect(sum((r) => r.links.orders)).toBe(2);
    expect(sum((r) => r.links.subscriptions)).toBe(1);
    const orders = await mapped('orders', 'woocommerce');
    const subscriptions = await mapped('subscriptions', 'woocommerce');
    expect(await links('woocommerce')).toEqual({
      l1: { order: orders.get('o1'), subscription: null },
      l2: { order: orders.get('o2'), subscription: subscriptions.get('s1') },
      l3: { order: null, subscription: null },
      l4: { order: orders.get('o3'), subscription: null },
      l5: { order: null, subscription: null },
    });
  });
});

describe('from the console, a Freemius export whose subscriptions come later', () => {
  interface Job {
    status: string;
    report: {
      ok: boolean;
      links?: {
        orders: number;
        subscriptions: number;
        kept: { license: string; kind: string; source_id: string; kept_id: number }[];
      };
    } | null;
  }
  const dir = () => join(t.config.dataDir, 'imports', 'freemius-late');
  const json = (name: string, list: unknown[]) =>
    writeFileSync(join(dir(), `${name}.json`), JSON.stringify({ [name]: list }));

  async function runJob(): Promise<Job> {
    const started = await t.app.inject({
      method: 'POST',
      url: '/v1/imports',
      headers: t.adminAuth,
      payload: { source: 'freemius', dir: 'freemius-late' },
    });
    expect(started.statusCode).toBe(202);
    const id = (started.json() as { id: number }).id;
    for (let i = 0; i < 1200; i++) {
      const job = (
        await t.app.inject({ method: 'GET', url: `/v1/imports/${id}`, headers: t.adminAuth })
      ).json() as Job;
      if (job.status === 'done' || job.status === 'failed') return job;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`job ${id} did not end`);
  }

  const subscriptionOf = async (key: string) =>
    (
      await db()
        .selectFrom('licenses')
        .select('subscription_id')
        .where('license_key', '=', key)
        .executeTakeFirstOrThrow()
    ).subscription_id;

  it('links the license to its subscription once an export with it is imported', async () => {
    mkdirSync(dir(), { recursive: true });
    const key = `sk_late_${tag}`;
    json('plugins', [{ id: 951, slug: `fs-late-${tag}`, title: 'FS Late', type: 'plugin' }]);
    json('users', [{ id: 61, email: `fs-late-${tag}@example.com`, created: '2024-01-02 03:04:05' }]);
    json('licenses', [
      { id: 551, plugin_id: 951, user_id: 61, quota: 1, expiration: '2030-05-06 07:08:09', secret_key: key },
    ]);
    const first = await runJob();
    expect(first.status).toBe('done');
    expect(first.report?.links).toEqual({ orders: 0, subscriptions: 0, kept: [] });
    expect(await subscriptionOf(key)).toBeNull();

    json('subscriptions', [
      {
        id: 751,
        user_id: 61,
        plugin_id: 951,
        license_id: 551,
        billing_cycle: 12,
        amount_per_cycle: 49.99,
        currency: 'usd',
        next_payment: '2030-05-06 07:08:09',
        gateway: 'paypal',
        created: '2024-01-02 03:05:00',
      },
    ]);
    const second = await runJob();
    expect(second.status).toBe('done');
    expect(second.report?.ok).toBe(true);
    expect(second.report?.links).toEqual({ orders: 0, subscriptions: 1, kept: [] });
    const subscription = (
      await db()
        .selectFrom('subscriptions')
        .select('id')
        .where('gateway_profile_id', '=', '')
        .where(
          'user_id',
          '=',
          (
            await db()
              .selectFrom('users')
              .select('id')
              .where('email', '=', `fs-late-${tag}@example.com`)
              .executeTakeFirstOrThrow()
          ).id,
        )
        .executeTakeFirstOrThrow()
    ).id;
    expect(Number(await subscriptionOf(key))).toBe(Number(subscription));
  });
});
