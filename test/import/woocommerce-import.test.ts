import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wooCommerceSource } from '../../src/modules/imports/woocommerce/source.js';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { ROOT } from '../wordpress/helpers.js';
import { type OldStore, skipMariaDb, startOldStore } from './mariadb.js';

// A WooCommerce store with License Manager for WooCommerce and the WooCommerce API Manager
// (test/import/fixtures/woocommerce.sql in a MariaDB of its own) imported into the test's database
// end to end, then an API Manager key asked for from its site over HTTP.

const fixture = readFileSync(join(ROOT, 'test/import/fixtures/woocommerce.sql'), 'utf8');
const DEFUSE = /LMFWC_PLUGIN_DEFUSE: (\S+)/.exec(fixture)![1]!;
const SECRET = /LMFWC_PLUGIN_SECRET: (\S+)/.exec(fixture)![1]!;
const ERIKA_KEY = 'wcam_9f3c1e7a5b2d4c6e8a0b1c2d3e4f5a6b';

let store: OldStore;
let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  // Erika's subscription renews in euros: a currency the store sells in.
  await setSettings(t, {
    currencies: [
      { code: 'EUR', symbol: '€', decimals: 2, rate: '0.9', rate_updated_at: new Date().toISOString() },
    ],
  });
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  if (!skipMariaDb) store = await startOldStore('woocommerce.sql');
}, 180_000);
afterAll(async () => {
  await store?.stop();
  await t.close();
});

const run = (dryRun: boolean) =>
  t.app.services.imports.run(
    wooCommerceSource({ db: store.url, prefix: 'wp_', defuseKey: DEFUSE, secret: SECRET }),
    { dryRun },
  );
const db = () => t.app.services.database.db;

const licenseOf = async (sourceId: string) => {
  const map = await db()
    .selectFrom('import_map')
    .select('target_id')
    .where('source', '=', 'woocommerce')
    .where('kind', '=', 'licenses')
    .where('source_id', '=', sourceId)
    .executeTakeFirstOrThrow();
  return db().selectFrom('licenses').selectAll().where('id', '=', map.target_id).executeTakeFirstOrThrow();
};

const count = async (table: 'licenses' | 'activations') =>
  Number(
    (
      await db()
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe.skipIf(skipMariaDb)('a WooCommerce store with License Manager and the API Manager imported', () => {
  it('a dry run counts what it would make and writes nothing', async () => {
    const report = await run(true);
    expect(report.counts.licenses).toEqual({ created: 9, present: 0, skipped: 4 });
    // The site without a URL is the reader's; the deleted product's site and the one whose URL is
    // none are the writer's.
    expect(report.counts.activations).toEqual({ created: 4, present: 0, skipped: 3 });
    expect(report.reconciliation.find((r) => r.kind === 'licenses')).toEqual({
      kind: 'licenses',
      source: 13,
      imported: 9,
      skipped: 4,
      ok: true,
    });
    expect(report.ok).toBe(true);
    expect(await count('licenses')).toBe(0);
    expect(await count('activations')).toBe(0);
  });

  it("brings both plugins' licenses once each, the sites, and reconciles", async () => {
    const report = await run(false);
    expect(report.counts.customers).toEqual({ created: 3, present: 0, skipped: 1 });
    expect(report.counts.orders).toEqual({ created: 4, present: 0, skipped: 0 });
    expect(report.counts.subscriptions).toEqual({ created: 2, present: 0, skipped: 0 });
    expect(report.counts.licenses).toEqual({ created: 9, present: 0, skipped: 4 });
    expect(report.counts.activations).toEqual({ created: 4, present: 0, skipped: 3 });
    expect(
      report.problems
        .filter((p) => p.kind === 'licenses' || p.kind === 'activations')
        .map((p) => [p.kind, p.sourceId, p.reason]),
    ).toEqual([
      ['licenses', '5', 'unknown_product'],
      ['licenses', 'wcam:5', 'unknown_product'],
      ['licenses', 'wcam:6', 'no_key'],
      ['licenses', 'wcam:7', 'duplicate_key'],
      ['activations', 'wcam:5', 'no_url'],
      ['activations', 'wcam:6', 'unknown_license'],
      ['activations', 'wcam:7', 'invalid_url'],
    ]);
    expect(report.reconciliation.every((r) => r.ok)).toBe(true);
    expect(report.ok).toBe(true);
    expect(await count('licenses')).toBe(9);

    // The key is the API Manager's, unchanged; it renews with Erika's running subscription.
    const erika = await licenseOf('wcam:1');
    const subscription = await db()
      .selectFrom('import_map')
      .select('target_id')
      .where('source', '=', 'woocommerce')
      .where('kind', '=', 'subscriptions')
      .where('source_id', '=', '600')
      .executeTakeFirstOrThrow();
    expect(erika).toMatchObject({
      license_key: ERIKA_KEY,
      status: 'active',
      activation_limit: 2,
      usage_expires_at: null,
      subscription_id: subscription.target_id,
    });
    expect(new Date(String((await licenseOf('wcam:3')).usage_expires_at)).toISOString()).toBe(
      '2025-01-01T00:00:00.000Z',
    );
    expect(await licenseOf('wcam:4')).toMatchObject({ activation_limit: 0, usage_expires_at: null });
    expect((await licenseOf('wcam:8')).status).toBe('suspended');
    // Frank's subscription was cancelled: his five-site license ended with it.
    const frank = await licenseOf('wcam:2');
    expect(frank.subscription_id).toBeNull();
    expect(frank.usage_expires_at).not.toBeNull();

    const sites = await db()
      .selectFrom('activations')
      .select(['license_id', 'domain_normalized'])
      .orderBy('domain_normalized')
      .execute();
    const lmfwc = await licenseOf('1');
    expect(sites).toEqual([
      { license_id: (await licenseOf('wcam:4')).id, domain_normalized: 'cache.erika.example.de' },
      { license_id: erika.id, domain_normalized: 'erika.example.de' },
      // The resource that held License Manager's key 1 brought its site to that license.
      { license_id: lmfwc.id, domain_normalized: 'moved.erika.example.de' },
      { license_id: erika.id, domain_normalized: 'shop.erika.example.de' },
    ]);
  });

  it('a second run makes nothing', async () => {
    const report = await run(false);
    expect(report.counts.licenses).toEqual({ created: 0, present: 9, skipped: 4 });
    expect(report.counts.activations).toEqual({ created: 0, present: 4, skipped: 3 });
    expect(report.counts.orders).toEqual({ created: 0, present: 4, skipped: 0 });
    expect(report.ok).toBe(true);
    expect(await count('licenses')).toBe(9);
    expect(await count('activations')).toBe(4);
  });

  it("Erika's API Manager key works from her imported site over HTTP, on its seat", async () => {
    const site = {
      domain: 'https://erika.example.de',
      installation_id: '3f1d2c4b-5a69-4e7f-8d0c-1b2a3c4d5e6f',
    };
    const call = (path: string, from = site) =>
      fetch(`${base}/v1/licenses/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ license_key: ERIKA_KEY, ...from }),
      });
    const activated = await call('activate');
    expect(activated.status).toBe(200);
    expect(await activated.json()).toMatchObject({ success: true });
    const validated = await call('validate');
    expect(validated.status).toBe(200);
    expect(await validated.json()).toMatchObject({ valid: true });
    // Her site took its imported seat over: still her two sites, and a third does not fit.
    const erika = await licenseOf('wcam:1');
    const seats = await db()
      .selectFrom('activations')
      .select('installation_id')
      .where('license_id', '=', erika.id)
      .where('status', '=', 'active')
      .execute();
    expect(seats).toHaveLength(2);
    const third = await call('activate', {
      domain: 'https://third.example.de',
      installation_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    });
    expect(third.status).toBe(403);
    expect(((await third.json()) as { code: string }).code).toBe('activation_limit_reached');
  });
});
