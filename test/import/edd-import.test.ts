import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { URL_ONLY_INSTALLATION } from '../../src/modules/identity/identity.js';
import { eddSource } from '../../src/modules/imports/edd/source.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type OldStore, skipMariaDb, startOldStore } from './mariadb.js';

// An EDD 3 + Software Licensing store (test/import/fixtures/edd.sql in a MariaDB of its own)
// imported into the test's database end to end, then asked by the updater its sites run.

let store: OldStore;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  if (!skipMariaDb) store = await startOldStore('edd.sql');
}, 180_000);
afterAll(async () => {
  await store?.stop();
  await t.close();
});

const run = () => t.app.services.imports.run(eddSource({ db: store.url, prefix: 'wp_' }), { dryRun: false });
const db = () => t.app.services.database.db;

describe.skipIf(skipMariaDb)('an EDD store imported', () => {
  it('brings its customers, products, licenses and sites, reports the rest, and reconciles', async () => {
    const report = await run();
    expect(report.counts.customers).toEqual({ created: 4, present: 0, skipped: 1 });
    expect(report.counts.products).toEqual({ created: 3, present: 0, skipped: 0 });
    expect(report.counts.licenses).toEqual({ created: 8, present: 0, skipped: 1 });
    expect(report.counts.activations).toEqual({ created: 4, present: 0, skipped: 0 });
    // What this importer does not write yet is reported row by row, never dropped silently.
    expect(report.counts.orders.skipped).toBe(7);
    expect(
      report.problems.filter((p) => p.kind === 'orders').every((p) => p.reason === 'not_supported'),
    ).toBe(true);
    expect(report.reconciliation.every((r) => r.ok)).toBe(true);
    expect(report.ok).toBe(true);

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
    const after = await db()
      .selectFrom('licenses')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
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
