import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportSubscription } from '../../src/modules/imports/records.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type Records, recordsSource } from './records.js';

// Subscriptions a gateway other than Stripe bills by itself (docs/migrating.md, 'Other gateways'
// subscriptions'): Tollgate cannot ask that gateway whether it still bills, so every run lists
// those the source says still renew, for the owner to cancel there before Tollgate's renewal.

let t: TestApp;
const tag = `${process.pid}${Date.now().toString(36)}`;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const subscription = (
  sourceId: string,
  status: ImportSubscription['status'],
  patch: Partial<ImportSubscription> = {},
): ImportSubscription => ({
  sourceId,
  customerSourceId: 'c1',
  productSourceId: 'p1',
  status,
  billingPeriod: 'month',
  billingInterval: 1,
  nextPaymentAt: status === 'cancelled' ? null : '2030-02-01T10:00:00Z',
  currency: 'USD',
  recurringTotal: 1900,
  ...patch,
});

const store = (): Records => ({
  customers: [{ sourceId: 'c1', email: `old-gateway-${tag}@example.com` }],
  products: [{ sourceId: 'p1', name: 'Pro', slug: `old-gateway-${tag}`, price: 1900, variations: [] }],
  subscriptions: [
    subscription('s1', 'active', { gateway: 'paypal', gatewayProfileId: 'I-7HV3X9KQ2B1A' }),
    subscription('s2', 'cancelled', { gateway: 'paypal', gatewayProfileId: 'I-CANCELLED01' }),
    // Renewed by the old store itself on a saved card: nothing bills it but the store.
    subscription('s3', 'active', { gateway: 'stripe' }),
    subscription('s4', 'pending-cancel', { gateway: 'paypal_commerce', gatewayProfileId: 'I-ENDING000001' }),
    subscription('s5', 'on-hold', { gateway: 'manual', gatewayProfileId: 'manual-5' }),
  ],
});

const LISTED = [
  { subscription: 's1', gateway: 'paypal', profile: 'I-7HV3X9KQ2B1A', nextPaymentAt: '2030-02-01T10:00:00Z' },
  {
    subscription: 's4',
    gateway: 'paypal_commerce',
    profile: 'I-ENDING000001',
    nextPaymentAt: '2030-02-01T10:00:00Z',
  },
  { subscription: 's5', gateway: 'manual', profile: 'manual-5', nextPaymentAt: '2030-02-01T10:00:00Z' },
];

describe('subscriptions their old gateway bills by itself', () => {
  it('a dry run lists those that still renew, and writes nothing', async () => {
    const report = await t.app.services.imports.run(recordsSource('edd', store()), { dryRun: true });
    expect(report.oldGateways).toEqual(LISTED);
    expect(report.counts.subscriptions).toEqual({ created: 5, present: 0, skipped: 0 });
    const imported = await t.app.services.database.db
      .selectFrom('import_map')
      .select('source_id')
      .where('source', '=', 'edd')
      .execute();
    expect(imported).toEqual([]);
  });

  it('the import brings them in, lists them again, and so does every run while they renew', async () => {
    const report = await t.app.services.imports.run(recordsSource('edd', store()), { dryRun: false });
    expect(report.ok).toBe(true);
    expect(report.counts.subscriptions).toEqual({ created: 5, present: 0, skipped: 0 });
    expect(report.oldGateways).toEqual(LISTED);
    const again = await t.app.services.imports.run(recordsSource('edd', store()), { dryRun: false });
    expect(again.counts.subscriptions).toEqual({ created: 0, present: 5, skipped: 0 });
    expect(again.oldGateways).toEqual(LISTED);
    // Cancelled at PayPal since, the old store says so: no longer listed.
    const later = store();
    later.subscriptions![0] = subscription('s1', 'cancelled', {
      gateway: 'paypal',
      gatewayProfileId: 'I-7HV3X9KQ2B1A',
    });
    const third = await t.app.services.imports.run(recordsSource('edd', later), { dryRun: true });
    expect(third.oldGateways.map((g) => g.subscription)).toEqual(['s4', 's5']);
  });
});

describe('in the console job report', () => {
  it('a Freemius export with a PayPal subscription lists it under old_gateways', async () => {
    const dir = join(t.config.dataDir, 'imports', 'freemius-paypal');
    mkdirSync(dir, { recursive: true });
    const json = (name: string, list: unknown[]) =>
      writeFileSync(join(dir, `${name}.json`), JSON.stringify({ [name]: list }));
    json('plugins', [{ id: 961, slug: `fs-paypal-${tag}`, title: 'FS PayPal', type: 'plugin' }]);
    json('users', [{ id: 71, email: `fs-paypal-${tag}@example.com`, created: '2024-01-02 03:04:05' }]);
    json('licenses', [
      {
        id: 561,
        plugin_id: 961,
        user_id: 71,
        quota: 1,
        expiration: '2030-05-06 07:08:09',
        secret_key: `sk_pp_${tag}`,
      },
    ]);
    json('subscriptions', [
      {
        id: 761,
        user_id: 71,
        plugin_id: 961,
        license_id: 561,
        billing_cycle: 12,
        amount_per_cycle: 49.99,
        currency: 'usd',
        next_payment: '2030-05-06 07:08:09',
        gateway: 'paypal',
        external_id: 'I-FSPAYPAL0001',
        created: '2024-01-02 03:05:00',
      },
    ]);
    const started = await t.app.inject({
      method: 'POST',
      url: '/v1/imports',
      headers: t.adminAuth,
      payload: { source: 'freemius', dir: 'freemius-paypal', dry_run: true },
    });
    expect(started.statusCode).toBe(202);
    const id = (started.json() as { id: number }).id;
    let job: { status: string; report: { old_gateways?: unknown[] } | null } | undefined;
    for (let i = 0; i < 1200; i++) {
      job = (await t.app.inject({ method: 'GET', url: `/v1/imports/${id}`, headers: t.adminAuth })).json();
      if (job?.status === 'done' || job?.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(job?.status).toBe('done');
    expect(job?.report?.old_gateways).toEqual([
      {
        subscription: '761',
        gateway: 'paypal',
        gateway_profile_id: 'I-FSPAYPAL0001',
        next_payment_at: '2030-05-06T07:08:09.000Z',
      },
    ]);
  });
});
