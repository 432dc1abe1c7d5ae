import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { URL_ONLY_INSTALLATION } from '../../src/modules/identity/identity.js';
import { freemiusSource } from '../../src/modules/imports/freemius/source.js';
import { openSource } from '../../src/modules/imports/sources.js';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { STRIPE_KEYS, StripeStandIn } from '../stripe/helpers.js';

// The Freemius import end to end (docs/migrating.md, 'From Freemius'), on the test's database: a
// folder of the exports a developer takes, as Freemius's API answers its lists (JSON with the
// entity's fields) and one as CSV with the same fields as its header.

let t: TestApp;
let dir: string;
const tag = `${process.pid}${Date.now().toString(36)}`;
const FS_KEY = `sk_A1b2%^+67Y+;sXXz<${tag}>`;

let standIn: StripeStandIn;
beforeAll(async () => {
  standIn = await new StripeStandIn().start();
  t = await createTestApp({ env: { STRIPE_API_URL: standIn.url } });
  // Stripe's key lets the import see that the old store's Stripe subscription was cancelled there.
  await setSettings(t, { stripe_secret_key: STRIPE_KEYS.stripe_secret_key });
  standIn.addSubscription('sub_123', 'cus_123', 'canceled');
  dir = mkdtempSync(join(tmpdir(), 'tollgate-freemius-'));
  const json = (name: string, list: unknown[], wrapped = true) =>
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(wrapped ? { [name]: list } : list));
  json('plugins', [
    { id: 901, slug: `fs-pro-${tag}`, title: 'FS Pro', type: 'plugin' },
    { id: 902, slug: `fs-theme-${tag}`, title: 'FS Theme', type: 'theme' },
  ]);
  json('plans', [
    { id: 11, plugin_id: 901, name: 'pro', title: 'Pro' },
    { id: 12, plugin_id: 902, name: 'business', title: 'Business' },
  ]);
  // The same list as a bare array: both forms are read.
  json(
    'pricing',
    [
      {
        id: 101,
        plan_id: 11,
        licenses: 1,
        annual_price: 49.99,
        monthly_price: null,
        lifetime_price: null,
        currency: 'usd',
      },
      { id: 102, plan_id: 11, licenses: null, annual_price: 199, monthly_price: 19.99, currency: 'usd' },
      {
        id: 103,
        plan_id: 12,
        licenses: 3,
        annual_price: null,
        monthly_price: null,
        lifetime_price: 299,
        currency: 'eur',
      },
    ],
    false,
  );
  json('users', [
    { id: 1, email: 'fs-ann@example.com', first: 'Ann', last: 'Lee', created: '2024-01-02 03:04:05' },
    { id: 2, email: 'fs-bob@example.com', first: 'Bob', last: '', created: '2024-02-02 03:04:05' },
    { id: 3, email: 'not an email', first: 'X', last: 'Y', created: '2024-02-02 03:04:05' },
  ]);
  json('licenses', [
    {
      id: 501,
      plugin_id: 901,
      user_id: 1,
      plan_id: 11,
      pricing_id: 101,
      quota: 1,
      expiration: '2030-05-06 07:08:09',
      secret_key: FS_KEY,
      is_cancelled: false,
      created: '2024-01-02 03:05:00',
    },
    {
      id: 502,
      plugin_id: 901,
      user_id: 2,
      plan_id: 11,
      pricing_id: 102,
      quota: null,
      expiration: null,
      secret_key: `sk_unlimited_${tag}`,
      is_cancelled: true,
      created: '2024-02-02 03:05:00',
    },
    { id: 503, plugin_id: 901, user_id: 1, quota: 1, expiration: 'soon', secret_key: `sk_bad_date_${tag}` },
    { id: 504, plugin_id: 901, user_id: 1, quota: 1, expiration: null, secret_key: 'short' },
  ]);
  json('subscriptions', [
    {
      id: 701,
      user_id: 1,
      plugin_id: 901,
      license_id: 501,
      billing_cycle: 12,
      amount_per_cycle: 49.99,
      currency: 'usd',
      next_payment: '2025-01-02 03:05:00',
      gateway: 'stripe',
      external_id: 'sub_123',
      created: '2024-01-02 03:05:00',
    },
  ]);
  json('payments', [
    {
      id: 801,
      user_id: 1,
      plugin_id: 901,
      license_id: 501,
      gross: 49.99,
      vat: 0,
      currency: 'usd',
      type: 'payment',
      gateway: 'stripe',
      external_id: 'ch_1',
      created: '2024-01-02 03:05:00',
    },
    {
      id: 802,
      user_id: 2,
      plugin_id: 901,
      license_id: 502,
      gross: 199,
      vat: 0,
      currency: 'usd',
      type: 'payment',
      created: '2024-02-02 03:05:00',
    },
    {
      id: 803,
      user_id: 2,
      plugin_id: 901,
      license_id: 502,
      gross: -199,
      currency: 'usd',
      type: 'refund',
      bound_payment_id: 802,
      created: '2024-02-03 03:05:00',
    },
  ]);
  // Installs as CSV, with the API's field names as the header.
  writeFileSync(
    join(dir, 'installs.csv'),
    [
      'id,plugin_id,user_id,url,license_id,is_active,is_uninstalled,created',
      `3001,901,1,https://ann-${tag}.example.com,501,1,0,2024-01-03 00:00:00`,
      `3002,901,1,http://localhost:8080/,501,1,0,2024-01-04 00:00:00`,
      `3003,901,2,https://bob-${tag}.example.org,502,1,0,2024-02-04 00:00:00`,
      `3004,901,2,https://gone-${tag}.example.org,502,0,1,2024-02-05 00:00:00`,
      `3005,901,2,https://free-${tag}.example.org,,1,0,2024-02-05 00:00:00`,
      `3006,901,1,https://other-${tag}.example.com,509,1,0,2024-02-05 00:00:00`,
    ].join('\n'),
  );
});
afterAll(async () => {
  await t.close();
  await standIn.stop();
  rmSync(dir, { recursive: true, force: true });
});

const db = () => t.app.services.database.db;
const run = async (dryRun: boolean) => t.app.services.imports.run(await freemiusSource(dir), { dryRun });
const problemsOf = (r: Awaited<ReturnType<typeof run>>) =>
  r.problems.map((p) => `${p.kind}:${p.sourceId}:${p.reason}`).sort();

describe('Freemius import', () => {
  it('is a source of npm run import, and refuses a folder without its exports', async () => {
    await expect(openSource('freemius', {})).rejects.toThrow(/--dir/);
    const empty = mkdtempSync(join(tmpdir(), 'tollgate-freemius-empty-'));
    await expect(openSource('freemius', { dir: empty })).rejects.toThrow(/plugins/);
    // An export that is not what Freemius gives is refused whole, before anything is read.
    writeFileSync(join(empty, 'plugins.json'), JSON.stringify({ products: [] }));
    await expect(openSource('freemius', { dir: empty })).rejects.toThrow(/plugins/);
    rmSync(empty, { recursive: true, force: true });
    expect((await openSource('freemius', { dir })).name).toBe('freemius');
  });

  it('a dry run reports what it would make and every row it leaves out, and writes nothing', async () => {
    const report = await run(true);
    expect(report.counts.customers).toEqual({ created: 2, present: 0, skipped: 1 });
    expect(report.counts.products).toEqual({ created: 2, present: 0, skipped: 0 });
    expect(report.counts.licenses).toEqual({ created: 2, present: 0, skipped: 2 });
    expect(report.counts.activations).toEqual({ created: 3, present: 0, skipped: 1 });
    expect(problemsOf(report)).toEqual([
      'activations:3006:unknown_license',
      'customers:3:invalid_email',
      'licenses:503:invalid_expiry',
      'licenses:504:invalid_key',
    ]);
    expect(report.counts.orders).toEqual({ created: 2, present: 0, skipped: 0 });
    expect(report.counts.subscriptions).toEqual({ created: 1, present: 0, skipped: 0 });
    // The refunded payment is an order, and no revenue.
    expect(report.revenue).toEqual([{ currency: 'USD', source: 4999, imported: 4999, skipped: 0, ok: true }]);
    expect(report.totals).toMatchObject({
      customers: 3,
      licenses: 4,
      activations: 4,
      orders: 2,
      subscriptions: 1,
      // The refunded payment is no revenue.
      revenue: { USD: 4999 },
    });
    expect(report.ok).toBe(true);
    const keys = await db().selectFrom('licenses').select('id').where('license_key', '=', FS_KEY).execute();
    expect(keys).toEqual([]);
    const subs = await db()
      .selectFrom('subscriptions')
      .select('id')
      .where('gateway_profile_id', '=', 'sub_123')
      .execute();
    expect(subs).toEqual([]);
  });

  it('imports keys unchanged, quotas as limits, plans as variations, and installs as sites', async () => {
    const report = await run(false);
    expect(report.ok).toBe(true);
    expect(report.reconciliation.every((r) => r.ok)).toBe(true);
    const licenses = await db()
      .selectFrom('licenses')
      .selectAll()
      .where('license_key', 'in', [FS_KEY, `sk_unlimited_${tag}`])
      .orderBy('license_key')
      .execute();
    expect(licenses.map((l) => [l.license_key, l.status, l.usage_expires_at, l.activation_limit])).toEqual([
      [FS_KEY, 'active', '2030-05-06T07:08:09Z', 1],
      [`sk_unlimited_${tag}`, 'suspended', null, 0],
    ]);
    const sites = await db()
      .selectFrom('activations')
      .select(['domain_normalized', 'installation_id', 'environment', 'status'])
      .where(
        'license_id',
        'in',
        licenses.map((l) => l.id),
      )
      .orderBy('domain_normalized')
      .execute();
    expect(sites.map((s) => [s.domain_normalized, s.environment])).toEqual([
      [`ann-${tag}.example.com`, 'production'],
      [`bob-${tag}.example.org`, 'production'],
      ['localhost:8080', 'staging'],
    ]);
    expect(sites.every((s) => s.installation_id === URL_ONLY_INSTALLATION && s.status === 'active')).toBe(
      true,
    );

    // Payments are orders as they were paid, refunds mark theirs refunded; the subscription keeps
    // Stripe's id, and its license is linked to it.
    const orders = await db()
      .selectFrom('orders')
      .selectAll()
      .where('customer_id', 'in', [licenses[0]!.user_id, licenses[1]!.user_id])
      .orderBy('id')
      .execute();
    expect(
      orders.map((o) => [
        o.status,
        o.created_via,
        o.currency,
        Number(o.total),
        o.paid_at,
        Number(o.refunded_total),
        o.test,
        o.payment_method,
      ]),
    ).toEqual([
      ['completed', 'import', 'USD', 4999, '2024-01-02T03:05:00.000Z', 0, 0, 'stripe'],
      ['refunded', 'import', 'USD', 19900, '2024-02-02T03:05:00.000Z', 19900, 0, ''],
    ]);
    const notes = await db()
      .selectFrom('order_notes')
      .select('body')
      .where('order_id', '=', orders[0]!.id)
      .execute();
    expect(notes.map((n) => n.body).join()).toContain('ch_1');
    const sub = await db()
      .selectFrom('subscriptions')
      .selectAll()
      .where('gateway_profile_id', '=', 'sub_123')
      .executeTakeFirstOrThrow();
    expect(sub).toMatchObject({
      user_id: licenses[0]!.user_id,
      status: 'active',
      billing_period: 'year',
      billing_interval: 1,
      currency: 'USD',
      payment_method: 'stripe',
      next_payment_at: '2025-01-02T03:05:00.000Z',
    });
    expect(Number(sub.recurring_total)).toBe(4999);
    expect(licenses[0]!.subscription_id).toBe(sub.id);

    const pro = (await t.app.services.catalogue.findPublishedBySlug(`fs-pro-${tag}`))[0]!;
    expect(pro.variations.map((v) => [v.name, v.price, v.activation_limit])).toEqual([
      ['Pro, 1 site', '49.99', 1],
      ['Pro, unlimited sites', '199.00', 0],
    ]);

    // The key, punctuation and all, validates from the imported site's domain with the SDK.
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/licenses/activate',
      payload: {
        license_key: FS_KEY,
        domain: `https://ann-${tag}.example.com`,
        installation_id: '5b8f7a52-9c3e-4d0b-8a1f-2e6c7d9b0a41',
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: true });
    expect(
      (
        await db()
          .selectFrom('activations')
          .select('id')
          .where('license_id', '=', licenses[0]!.id)
          .where('status', '=', 'active')
          .execute()
      ).length,
    ).toBe(2);
  });

  it('a second run makes nothing', async () => {
    const report = await run(false);
    expect(report.counts.customers).toEqual({ created: 0, present: 2, skipped: 1 });
    expect(report.counts.licenses).toEqual({ created: 0, present: 2, skipped: 2 });
    expect(report.counts.activations).toEqual({ created: 0, present: 3, skipped: 1 });
    expect(report.counts.orders).toEqual({ created: 0, present: 2, skipped: 0 });
    expect(report.counts.subscriptions).toEqual({ created: 0, present: 1, skipped: 0 });
    expect(report.ok).toBe(true);
  });
});
