import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ImportKind,
  type ImportProblem,
  type ImportRecord,
  type ImportSource,
  isProblem,
} from '../../src/modules/imports/records.js';
import { SOURCES } from '../../src/modules/imports/sources.js';
import { defuseDecrypt, loadDefuseKey } from '../../src/modules/imports/woocommerce/defuse.js';
import { wooCommerceSource } from '../../src/modules/imports/woocommerce/source.js';
import { ROOT } from '../wordpress/helpers.js';
import { type OldStore, skipMariaDb, startOldStore } from './mariadb.js';

/**
 * The WooCommerce + License Manager for WooCommerce reader against a real MariaDB loaded with
 * test/import/fixtures/woocommerce.sql, whose license keys were encrypted by the real
 * defuse/php-encryption library; its key and secret are in the fixture's header.
 */

const fixture = readFileSync(join(ROOT, 'test/import/fixtures/woocommerce.sql'), 'utf8');
const DEFUSE = /LMFWC_PLUGIN_DEFUSE: (\S+)/.exec(fixture)![1]!;
const SECRET = /LMFWC_PLUGIN_SECRET: (\S+)/.exec(fixture)![1]!;

let store: OldStore;
beforeAll(async () => {
  if (!skipMariaDb) store = await startOldStore('woocommerce.sql');
}, 180_000);
afterAll(async () => store?.stop());

async function readAll<K extends ImportKind>(source: ImportSource, kind: K) {
  const records: ImportRecord<K>[] = [];
  const problems: ImportProblem[] = [];
  for await (const x of source.read(kind)) {
    if (isProblem(x)) problems.push(x);
    else records.push(x as ImportRecord<K>);
  }
  return { records, problems };
}

/** License Manager's licenses alone (the API Manager's have source ids of their own, `wcam:<id>`). */
async function lmfwcLicenses(source: ImportSource) {
  const { records, problems } = await readAll(source, 'licenses');
  const lmfwc = (id: string) => !id.startsWith('wcam:');
  return {
    records: records.filter((l) => lmfwc(l.sourceId)),
    problems: problems.filter((p) => lmfwc(p.sourceId)),
  };
}

const source = (extra: { secret?: string; defuseKey?: string } = {}) =>
  wooCommerceSource({
    db: store.url,
    prefix: 'wp_',
    pageSize: 2,
    defuseKey: DEFUSE,
    secret: SECRET,
    ...extra,
  });

describe('defuse/php-encryption', () => {
  it('refuses a tampered ciphertext and a key with a wrong checksum', () => {
    const key = loadDefuseKey(DEFUSE);
    const cipher = /'(def50200[0-9a-f]+)'/.exec(fixture)![1]!;
    expect(defuseDecrypt(cipher, key)).toBe('WCLM-AAAA-1111-ACTIVE');
    const flipped = cipher.slice(0, 120) + (cipher[120] === '0' ? '1' : '0') + cipher.slice(121);
    expect(() => defuseDecrypt(flipped, key)).toThrow();
    expect(() => loadDefuseKey(`${DEFUSE.slice(0, -1)}${DEFUSE.endsWith('0') ? '1' : '0'}`)).toThrow();
  });
});

describe.skipIf(skipMariaDb)('the WooCommerce source', () => {
  it('reads registered customers with their password hashes and Stripe customers, guests by email, and reports an invalid email', async () => {
    const s = source();
    const { records, problems } = await readAll(s, 'customers');
    await s.close();
    // The administrator is not a customer.
    expect(records).toEqual([
      {
        sourceId: '2',
        email: 'erika@example.de',
        firstName: 'Erika',
        lastName: 'Muster',
        passwordHash: '$P$BErikaPhpassHashForTheTest00000/',
        stripeCustomerId: 'cus_ErikaWooStripe',
        createdAt: '2022-05-05T05:05:05.000Z',
      },
      {
        sourceId: '3',
        email: 'frank@example.com',
        firstName: 'Frank',
        lastName: 'Ocean',
        passwordHash: '$2y$10$FrankBcryptHashForTheFixture0000000000000000000000000u',
        createdAt: '2023-02-02T02:02:02.000Z',
      },
      {
        sourceId: 'guest:guest@example.org',
        email: 'guest@example.org',
        createdAt: '2024-07-01T08:00:00.000Z',
      },
    ]);
    expect(problems).toEqual([
      { kind: 'customers', sourceId: '4', reason: 'invalid_email', detail: 'broken-at-example' },
    ]);
  });

  it('reads products with their variations in the store currency', async () => {
    const s = source();
    const { records, problems } = await readAll(s, 'products');
    await s.close();
    expect(problems).toEqual([]);
    expect(records).toEqual([
      {
        sourceId: '20',
        name: 'SEO Toolkit',
        slug: 'seo-toolkit',
        price: 3900,
        activationLimit: null,
        variations: [
          { sourceId: '21', name: 'SEO Toolkit - Single site', price: 3900, activationLimit: null },
          { sourceId: '22', name: 'SEO Toolkit - 5 sites', price: 9950, activationLimit: null },
        ],
      },
      {
        sourceId: '30',
        name: 'Cache Booster',
        slug: 'cache-booster',
        price: 1500,
        activationLimit: null,
        variations: [],
      },
    ]);
  });

  it('reads the same orders from the HPOS tables and from the legacy posts, tax included, refunds left out', async () => {
    const read = async () => {
      const s = source();
      const out = await readAll(s, 'orders');
      const totals = await s.totals();
      await s.close();
      return { ...out, totals };
    };
    const hpos = await read();
    await store.sql(
      "UPDATE wp_options SET option_value = 'no' WHERE option_name = 'woocommerce_custom_orders_table_enabled'",
    );
    const legacy = await read().finally(() =>
      store.sql(
        "UPDATE wp_options SET option_value = 'yes' WHERE option_name = 'woocommerce_custom_orders_table_enabled'",
      ),
    );
    for (const { records, problems } of [hpos, legacy]) {
      expect(problems).toEqual([]);
      expect(records.map((o) => o.sourceId)).toEqual(['500', '501', '502', '503']);
      expect(records[0]).toEqual({
        sourceId: '500',
        customerSourceId: '2',
        status: 'completed',
        currency: 'EUR',
        total: 4641,
        tax: 741,
        gateway: 'stripe',
        transactionId: 'pi_3WooErika500',
        createdAt: '2024-04-01T08:00:00.000Z',
        paidAt: '2024-04-01T08:00:05.000Z',
        items: [
          {
            productSourceId: '20',
            variationSourceId: '21',
            name: 'SEO Toolkit - Single site',
            quantity: 1,
            total: 4641,
            tax: 741,
          },
        ],
      });
      expect(records[1]).toMatchObject({ status: 'completed', currency: 'USD', total: 9950 });
      expect(records[2]).toMatchObject({
        status: 'refunded',
        items: [{ productSourceId: '30', total: 1500 }],
      });
      expect(records[3]).toMatchObject({
        customerSourceId: 'guest:guest@example.org',
        currency: 'EUR',
        total: 1500,
      });
    }
    for (const { totals } of [hpos, legacy]) {
      expect(totals).toEqual({
        customers: 4,
        // License Manager's 5 and the API Manager's 8 resources, with its 7 sites.
        licenses: 13,
        activations: 7,
        orders: 4,
        subscriptions: 2,
        revenue: { EUR: 6141, USD: 9950 },
      });
    }
  });

  it('reads WooCommerce Subscriptions from either storage, with period, interval and next payment', async () => {
    const read = async () => {
      const s = source();
      const out = await readAll(s, 'subscriptions');
      await s.close();
      return out;
    };
    const hpos = await read();
    await store.sql(
      "UPDATE wp_options SET option_value = 'no' WHERE option_name = 'woocommerce_custom_orders_table_enabled'",
    );
    const legacy = await read().finally(() =>
      store.sql(
        "UPDATE wp_options SET option_value = 'yes' WHERE option_name = 'woocommerce_custom_orders_table_enabled'",
      ),
    );
    for (const { records, problems } of [hpos, legacy]) {
      expect(problems).toEqual([]);
      expect(records).toEqual([
        {
          sourceId: '600',
          customerSourceId: '2',
          productSourceId: '20',
          variationSourceId: '21',
          parentOrderSourceId: '500',
          status: 'active',
          billingPeriod: 'year',
          billingInterval: 1,
          nextPaymentAt: '2027-04-01T08:00:05.000Z',
          currency: 'EUR',
          recurringTotal: 4641,
          gateway: 'stripe',
          createdAt: '2024-04-01T08:00:05.000Z',
        },
        {
          sourceId: '601',
          customerSourceId: '3',
          productSourceId: '20',
          variationSourceId: '22',
          parentOrderSourceId: '501',
          status: 'cancelled',
          billingPeriod: 'month',
          billingInterval: 3,
          nextPaymentAt: null,
          currency: 'USD',
          recurringTotal: 9950,
          gateway: 'paypal',
          createdAt: '2024-05-01T08:00:00.000Z',
        },
      ]);
    }
  });

  it('decrypts License Manager keys, checks them against their hash, and reports a license of a deleted product', async () => {
    const s = source();
    const { records, problems } = await lmfwcLicenses(s);
    await s.close();
    expect(records.map((l) => l.key)).toEqual([
      'WCLM-AAAA-1111-ACTIVE',
      'WCLM-BBBB-2222-DELIVERED',
      'WCLM-CCCC-3333-EXPIRED',
      'WCLM-DDDD-4444-INACTIVE',
    ]);
    expect(records[0]).toEqual({
      sourceId: '1',
      key: 'WCLM-AAAA-1111-ACTIVE',
      productSourceId: '20',
      variationSourceId: '21',
      customerSourceId: '2',
      orderSourceId: '500',
      status: 'active',
      expiresAt: '2027-04-01T08:00:05.000Z',
      activationLimit: 1,
      createdAt: '2024-04-01T08:00:05.000Z',
    });
    // Delivered is active; no maximum is unlimited; no expiry is lifetime.
    expect(records[1]).toMatchObject({ status: 'active', activationLimit: 0, expiresAt: null });
    expect(records[2]).toMatchObject({ productSourceId: '30', expiresAt: '2025-06-01T08:00:00.000Z' });
    expect(records[2]).not.toHaveProperty('variationSourceId');
    // A guest's license belongs to the guest of its order.
    expect(records[3]).toMatchObject({ status: 'inactive', customerSourceId: 'guest:guest@example.org' });
    expect(problems).toEqual([{ kind: 'licenses', sourceId: '5', reason: 'unknown_product', detail: '31' }]);
  });

  it("reads the API Manager's resources as licenses under their Product Order API Keys, and its sites", async () => {
    const s = source();
    const licenses = await readAll(s, 'licenses');
    const sites = await readAll(s, 'activations');
    await s.close();
    const wcam = licenses.records.filter((l) => l.sourceId.startsWith('wcam:'));
    expect(wcam).toEqual([
      {
        sourceId: 'wcam:1',
        key: 'wcam_9f3c1e7a5b2d4c6e8a0b1c2d3e4f5a6b',
        productSourceId: '20',
        variationSourceId: '21',
        customerSourceId: '2',
        orderSourceId: '500',
        subscriptionSourceId: '600',
        status: 'active',
        expiresAt: null,
        activationLimit: 2,
        createdAt: '2024-04-01T08:00:05.000Z',
      },
      // Its subscription was cancelled: the API Manager no longer grants it.
      expect.objectContaining({
        sourceId: 'wcam:2',
        variationSourceId: '22',
        customerSourceId: '3',
        subscriptionSourceId: '601',
        status: 'expired',
        activationLimit: 5,
      }),
      expect.objectContaining({
        sourceId: 'wcam:3',
        status: 'active',
        expiresAt: '2025-01-01T00:00:00.000Z',
        activationLimit: 1,
      }),
      // "Unlimited Activations" on the product: unlimited, whatever large number the resource holds.
      {
        sourceId: 'wcam:4',
        key: 'wcam_unlimited000000000000000000000001',
        productSourceId: '30',
        customerSourceId: '2',
        orderSourceId: '500',
        status: 'active',
        expiresAt: null,
        activationLimit: 0,
        createdAt: '2024-04-01T08:00:05.000Z',
      },
      // Refunded: switched off.
      expect.objectContaining({ sourceId: 'wcam:8', status: 'disabled', orderSourceId: '502' }),
    ]);
    expect(wcam[2]).not.toHaveProperty('subscriptionSourceId');
    // The key License Manager's license 1 holds is imported once, as that license; never the key in the report.
    expect(licenses.problems.filter((p) => p.sourceId.startsWith('wcam:'))).toEqual([
      { kind: 'licenses', sourceId: 'wcam:5', reason: 'unknown_product', detail: '31' },
      { kind: 'licenses', sourceId: 'wcam:6', reason: 'no_key' },
      { kind: 'licenses', sourceId: 'wcam:7', reason: 'duplicate_key', detail: '1' },
    ]);
    expect(sites.records).toEqual([
      {
        sourceId: 'wcam:1',
        licenseSourceId: 'wcam:1',
        url: 'https://erika.example.de',
        activatedAt: '2024-04-01T08:01:40.000Z',
      },
      // Activated with Erika's Master API Key: a seat of the resource it took.
      expect.objectContaining({
        sourceId: 'wcam:2',
        licenseSourceId: 'wcam:1',
        url: 'https://shop.erika.example.de/',
      }),
      expect.objectContaining({
        sourceId: 'wcam:3',
        licenseSourceId: 'wcam:4',
        url: 'http://cache.erika.example.de',
      }),
      // The duplicate's site is on the license that was kept.
      expect.objectContaining({
        sourceId: 'wcam:4',
        licenseSourceId: '1',
        url: 'https://moved.erika.example.de',
      }),
      expect.objectContaining({ sourceId: 'wcam:6', licenseSourceId: 'wcam:5' }),
      // Not a URL: the importer reports it (invalid_url).
      expect.objectContaining({ sourceId: 'wcam:7', url: '<script>alert(1)</script>' }),
    ]);
    expect(sites.problems).toEqual([{ kind: 'activations', sourceId: 'wcam:5', reason: 'no_url' }]);
  });

  it('reports keys that do not decrypt or do not match their hash, and needs the key to read licenses', async () => {
    const other = '7'.repeat(64);
    const wrongSecret = source({ secret: 'not the secret' });
    const { records, problems } = await lmfwcLicenses(wrongSecret);
    await wrongSecret.close();
    expect(records).toEqual([]);
    expect(problems.map((p) => p.reason)).toEqual([
      'hash_mismatch',
      'hash_mismatch',
      'hash_mismatch',
      'hash_mismatch',
      'unknown_product',
    ]);

    await store.sql(
      `UPDATE wp_lmfwc_licenses SET license_key = CONCAT(SUBSTRING(license_key, 1, 120), '${other}') WHERE id = 2`,
    );
    const s = source();
    const tampered = await lmfwcLicenses(s);
    await s.close();
    expect(tampered.problems).toContainEqual({
      kind: 'licenses',
      sourceId: '2',
      reason: 'undecryptable_key',
    });
    expect(tampered.records.map((l) => l.sourceId)).toEqual(['1', '3', '4']);

    const keyless = wooCommerceSource({ db: store.url });
    await expect(readAll(keyless, 'licenses')).rejects.toThrow();
    await keyless.close();
  });

  it('is registered as `woocommerce`', async () => {
    const make = SOURCES.woocommerce!.open;
    const s = await make({ db: store.url, prefix: 'wp_', 'defuse-key': DEFUSE, secret: SECRET });
    expect(s.name).toBe('woocommerce');
    expect((await readAll(s, 'licenses')).records.length).toBeGreaterThan(0);
    await s.close();
    await expect(make({ db: store.url, 'defuse-key': 'def000' })).rejects.toThrow();
  });

  it('reads a store with the API Manager alone without the defuse key', async () => {
    await store.sql('RENAME TABLE wp_lmfwc_licenses TO wp_lmfwc_licenses_away');
    // A resource with no activations bought: Tollgate has no license of no seats.
    await store.sql(
      'UPDATE wp_wc_am_api_resource SET activations_purchased_total = 0 WHERE api_resource_id = 3',
    );
    try {
      const s = wooCommerceSource({ db: store.url, prefix: 'wp_', pageSize: 2 });
      const { records, problems } = await readAll(s, 'licenses');
      const totals = await s.totals();
      await s.close();
      // Without License Manager, resource 7's key is nobody else's.
      expect(records.map((l) => l.sourceId)).toEqual(['wcam:1', 'wcam:2', 'wcam:4', 'wcam:7', 'wcam:8']);
      expect(problems).toEqual([
        { kind: 'licenses', sourceId: 'wcam:3', reason: 'no_activations' },
        { kind: 'licenses', sourceId: 'wcam:5', reason: 'unknown_product', detail: '31' },
        { kind: 'licenses', sourceId: 'wcam:6', reason: 'no_key' },
      ]);
      expect([totals.licenses, totals.activations]).toEqual([8, 7]);
    } finally {
      await store.sql('RENAME TABLE wp_lmfwc_licenses_away TO wp_lmfwc_licenses');
      await store.sql(
        'UPDATE wp_wc_am_api_resource SET activations_purchased_total = 1 WHERE api_resource_id = 3',
      );
    }
  });
});
