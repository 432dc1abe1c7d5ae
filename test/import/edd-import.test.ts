import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { URL_ONLY_INSTALLATION } from '../../src/modules/identity/identity.js';
import { eddSource } from '../../src/modules/imports/edd/source.js';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { STRIPE_KEYS, StripeStandIn } from '../stripe/helpers.js';
import { type OldStore, skipMariaDb, startOldStore } from './mariadb.js';

// An EDD 3 + Software Licensing store (test/import/fixtures/edd.sql in a MariaDB of its own)
// imported into the test's database end to end, then asked by the updater its sites run.

let store: OldStore;
let t: TestApp;
let standIn: StripeStandIn;
beforeAll(async () => {
  standIn = await new StripeStandIn().start();
  t = await createTestApp({ env: { STRIPE_API_URL: standIn.url } });
  // The old store's Stripe customers, without cards, and Bob's Stripe subscription, cancelled
  // there before the move (the import checks it with Stripe's key).
  standIn.addCustomer('cus_Alice123xyz');
  standIn.addCustomer('cus_Bob456DEmvp');
  standIn.addSubscription('sub_1ObobAgencyYearly', 'cus_Bob456DEmvp', 'canceled');
  // Bob's subscription renews in euros: a currency the store sells in.
  await setSettings(t, {
    stripe_secret_key: STRIPE_KEYS.stripe_secret_key,
    currencies: [
      { code: 'EUR', symbol: '€', decimals: 2, rate: '0.9', rate_updated_at: new Date().toISOString() },
    ],
  });
  if (!skipMariaDb) store = await startOldStore('edd.sql');
}, 180_000);
afterAll(async () => {
  await store?.stop();
  await t.close();
  await standIn.stop();
});

const run = () => t.app.services.imports.run(eddSource({ db: store.url, prefix: 'wp_' }), { dryRun: false });
const db = () => t.app.services.database.db;

describe.skipIf(skipMariaDb)('an EDD store imported', () => {
  it('brings its customers, products, orders, subscriptions, licenses and sites, and reconciles', async () => {
    const report = await run();
    expect(report.counts.customers).toEqual({ created: 4, present: 0, skipped: 1 });
    expect(report.counts.products).toEqual({ created: 3, present: 0, skipped: 0 });
    expect(report.counts.licenses).toEqual({ created: 8, present: 0, skipped: 1 });
    expect(report.counts.activations).toEqual({ created: 4, present: 0, skipped: 0 });
    // Sales (refund records are not orders), with the renewal, in their own currencies.
    expect(report.counts.orders).toEqual({ created: 7, present: 0, skipped: 0 });
    expect(report.counts.subscriptions).toEqual({ created: 2, present: 0, skipped: 0 });
    // EDD knows each download's current version without its zip: for the owner to upload.
    expect(report.problems.filter((p) => p.kind === 'releases').map((p) => p.reason)).toEqual([
      'no_file',
      'no_file',
    ]);
    expect(report.reconciliation.every((r) => r.ok)).toBe(true);
    expect(report.revenue).toEqual([
      { currency: 'EUR', source: 47600, imported: 47600, skipped: 0, ok: true },
      { currency: 'JPY', source: 3500, imported: 3500, skipped: 0, ok: true },
      { currency: 'USD', source: 14800, imported: 14800, skipped: 0, ok: true },
    ]);
    // Alice's and Bob's Stripe customers are kept; Stripe is not set up here, so no card yet.
    expect(report.stripe).toEqual({ customers: 2, cards: 0 });
    expect(report.ok).toBe(true);

    const orderOf = async (sourceId: string) => {
      const map = await db()
        .selectFrom('import_map')
        .select('target_id')
        .where('source', '=', 'edd')
        .where('kind', '=', 'orders')
        .where('source_id', '=', sourceId)
        .executeTakeFirstOrThrow();
      return db().selectFrom('orders').selectAll().where('id', '=', map.target_id).executeTakeFirstOrThrow();
    };
    const alice = await orderOf('100');
    expect(alice).toMatchObject({
      status: 'completed',
      created_via: 'import',
      currency: 'USD',
      decimals: 2,
      payment_method: 'stripe',
      created_at: '2024-01-10T10:00:00.000Z',
      paid_at: '2024-01-10T10:00:05.000Z',
      test: 0,
    });
    expect(Number(alice.total)).toBe(4900);
    const notes = await db()
      .selectFrom('order_notes')
      .select('body')
      .where('order_id', '=', alice.id)
      .execute();
    expect(notes.map((n) => n.body).join()).toContain('pi_3OaliceUSD100');
    const yen = await orderOf('102');
    expect([yen.currency, yen.decimals, Number(yen.total), yen.status]).toEqual([
      'JPY',
      0,
      3500,
      'completed',
    ]);
    const bob = await orderOf('101');
    expect([Number(bob.total), Number(bob.total_tax), Number(bob.subtotal)]).toEqual([23800, 3800, 20000]);
    const bobItems = await db()
      .selectFrom('order_items')
      .selectAll()
      .where('order_id', '=', bob.id)
      .execute();
    expect(bobItems.map((i) => [i.name, i.quantity, Number(i.total), Number(i.total_tax)])).toEqual([
      ['Site Kit Pro - Agency', 1, 20000, 3800],
    ]);
    expect((await orderOf('103')).status).toBe('refunded');
    expect(await orderOf('107')).toMatchObject({ status: 'pending', paid_at: null });
    // Nothing followed from them: no webhook, no email, no invoice.
    expect(await db().selectFrom('webhook_events').select('event').execute()).toEqual([]);
    expect(await db().selectFrom('mail_messages').select('kind').execute()).toEqual([]);
    expect(await db().selectFrom('invoices').select('id').execute()).toEqual([]);

    const subs = await db().selectFrom('subscriptions').selectAll().orderBy('id').execute();
    expect(
      subs.map((s) => [
        s.status,
        s.billing_period,
        s.currency,
        Number(s.recurring_total),
        s.next_payment_at,
        s.gateway_profile_id,
      ]),
    ).toEqual([
      ['active', 'year', 'EUR', 23800, '2027-03-01T00:00:00.000Z', 'sub_1ObobAgencyYearly'],
      ['cancelled', 'month', 'USD', 4900, null, 'sub_1OaliceMonthly'],
    ]);
    expect(subs[0]!.parent_order_id).toBe(bob.id);
    // Bob's renewal payment is his subscription's renewal order; his first order is its parent.
    const renewal = await orderOf('105');
    expect([renewal.subscription_id, renewal.created_via, Number(renewal.total)]).toEqual([
      subs[0]!.id,
      'import',
      23800,
    ]);
    expect(bob.subscription_id).toBeNull();
    expect((await orderOf('100')).subscription_id).toBeNull();
    const licensed = await db()
      .selectFrom('licenses')
      .select(['license_key', 'order_id', 'subscription_id'])
      .where('license_key', 'in', ['b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0', '5f0c2a8e9b7d4e1fa3c6b0d9e8f7a6b5'])
      .orderBy('license_key')
      .execute();
    // Bob's license renews with his subscription; Alice's, of a cancelled one, runs to its own expiry.
    expect(licensed).toEqual([
      { license_key: '5f0c2a8e9b7d4e1fa3c6b0d9e8f7a6b5', order_id: alice.id, subscription_id: null },
      { license_key: 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0', order_id: bob.id, subscription_id: subs[0]!.id },
    ]);
    const stripe = await db()
      .selectFrom('stripe_customers')
      .select(['customer_id', 'payment_method_id'])
      .orderBy('customer_id')
      .execute();
    expect(stripe).toEqual([
      { customer_id: 'cus_Alice123xyz', payment_method_id: null },
      { customer_id: 'cus_Bob456DEmvp', payment_method_id: null },
    ]);

    const keys = await db()
      .selectFrom('licenses')
      .select(['license_key', 'status', 'usage_expires_at'])
      .orderBy('id')
      .execute();
    expect(keys.map((k) => k.license_key)).toContain('5f0c2a8e9b7d4e1fa3c6b0d9e8f7a6b5');
    expect(keys.find((k) => k.license_key === 'c0ffee00c0ffee00c0ffee00c0ffee00')?.status).toBe('suspended');
    const sites = await db()
      .selectFrom('activations')
      .select(['domain_normalized', 'installation_id', 'environment'])
      .orderBy('domain_normalized')
      .execute();
    expect(sites).toEqual([
      {
        domain_normalized: 'alice.example.com',
        installation_id: URL_ONLY_INSTALLATION,
        environment: 'production',
      },
      { domain_normalized: 'alice.local', installation_id: URL_ONLY_INSTALLATION, environment: 'staging' },
      {
        domain_normalized: 'bob.example.de',
        installation_id: URL_ONLY_INSTALLATION,
        environment: 'production',
      },
      {
        domain_normalized: 'dave.example.com',
        installation_id: URL_ONLY_INSTALLATION,
        environment: 'production',
      },
    ]);
  });

  it('a second run makes nothing', async () => {
    const before = await db()
      .selectFrom('licenses')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const report = await run();
    expect(report.counts.licenses).toEqual({ created: 0, present: 8, skipped: 1 });
    expect(report.counts.activations).toEqual({ created: 0, present: 4, skipped: 0 });
    expect(report.counts.orders).toEqual({ created: 0, present: 7, skipped: 0 });
    expect(report.counts.subscriptions).toEqual({ created: 0, present: 2, skipped: 0 });
    expect(report.revenue.every((r) => r.ok)).toBe(true);
    const after = await db()
      .selectFrom('licenses')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('a later run links a renewal order an earlier run left unlinked', async () => {
    const map = (kind: string, sourceId: string) =>
      db()
        .selectFrom('import_map')
        .select('target_id')
        .where('source', '=', 'edd')
        .where('kind', '=', kind)
        .where('source_id', '=', sourceId)
        .executeTakeFirstOrThrow();
    const renewal = (await map('orders', '105')).target_id;
    await db().updateTable('orders').set({ subscription_id: null }).where('id', '=', renewal).execute();
    const report = await run();
    expect(report.counts.subscriptions).toEqual({ created: 0, present: 2, skipped: 0 });
    const order = await db()
      .selectFrom('orders')
      .select('subscription_id')
      .where('id', '=', renewal)
      .executeTakeFirstOrThrow();
    expect(order.subscription_id).toBe((await map('subscriptions', '1')).target_id);
  });

  it("the site's updater, pointed at Tollgate, finds its license valid on its imported seat", async () => {
    const map = await db()
      .selectFrom('import_map')
      .select('target_id')
      .where('source', '=', 'edd')
      .where('kind', '=', 'products')
      .where('source_id', '=', '10')
      .executeTakeFirstOrThrow();
    const res = await t.app.inject({
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        edd_action: 'check_license',
        item_id: String(map.target_id),
        license: '5f0c2a8e9b7d4e1fa3c6b0d9e8f7a6b5',
        url: 'https://alice.example.com',
      }).toString(),
    });
    expect(res.json()).toMatchObject({ success: true, license: 'valid', site_count: 1 });
  });
});
