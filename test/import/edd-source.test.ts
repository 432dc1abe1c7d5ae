import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eddSource } from '../../src/modules/imports/edd/source.js';
import {
  IMPORT_ORDER,
  type ImportKind,
  type ImportProblem,
  type ImportRecord,
  type ImportSource,
  isProblem,
} from '../../src/modules/imports/records.js';
import { SOURCES } from '../../src/modules/imports/sources.js';
import { type OldStore, skipMariaDb, startOldStore } from './mariadb.js';

/**
 * The EDD 3 + Software Licensing + Recurring reader against a real MariaDB loaded with the
 * fixture test/import/fixtures/edd.sql. It touches only MariaDB, so it runs the same whatever
 * DATABASE_URL says.
 */

let store: OldStore;
beforeAll(async () => {
  if (!skipMariaDb) store = await startOldStore('edd.sql');
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

const byId = <T extends { sourceId: string }>(list: T[], id: string): T => {
  const found = list.find((x) => x.sourceId === id);
  if (!found) throw new Error(`no record ${id}`);
  return found;
};

describe.skipIf(skipMariaDb)('the EDD source', () => {
  // Pages of two rows, so every list crosses several pages of the keyset pagination.
  const source = () => eddSource({ db: store.url, prefix: 'wp_', pageSize: 2 });

  it('reads customers with their WordPress password hashes and Stripe customers, and reports an invalid email', async () => {
    const s = source();
    const { records, problems } = await readAll(s, 'customers');
    await s.close();
    expect(records.map((c) => c.sourceId)).toEqual(['1', '2', '3', '4']);
    expect(byId(records, '1')).toMatchObject({
      email: 'alice@example.com',
      firstName: 'Alice',
      lastName: 'Martin',
      passwordHash: '$P$BvKM2sX0bMvUvyN3q2qgk9A8xFfEhD/',
      // From EDD's customer meta.
      stripeCustomerId: 'cus_Alice123xyz',
      createdAt: '2021-03-04T10:00:00.000Z',
    });
    // bcrypt, and the Stripe customer from the user meta.
    expect(byId(records, '2')).toMatchObject({
      passwordHash: '$2y$10$Q3mXb4m8l9T6pYd0K1h7vO2w8J4qv0bYw7n2x6y0Zk1s3f5g7h9jK',
      stripeCustomerId: 'cus_Bob456DEmvp',
    });
    expect(byId(records, '3').passwordHash).toBe(
      '$wp$2y$10$Uq8r0Lk2m4N6p8R0t2V4x.y6A8c0E2g4I6k8M0o2Q4s6U8w0Y2a4C',
    );
    // A guest purchase: no WordPress user, no password.
    expect(byId(records, '4')).not.toHaveProperty('passwordHash');
    expect(problems).toEqual([
      { kind: 'customers', sourceId: '5', reason: 'invalid_email', detail: 'not-an-email' },
    ]);
  });

  it('reads downloads as products with their price options, limits and bundles, and their releases', async () => {
    const s = source();
    const { records, problems } = await readAll(s, 'products');
    const releases = await readAll(s, 'releases');
    await s.close();
    expect(problems).toEqual([]);
    // The trashed download and the page are not products.
    expect(records.map((p) => p.sourceId)).toEqual(['10', '11', '12']);
    expect(byId(records, '10')).toEqual({
      sourceId: '10',
      name: 'Site Kit Pro',
      slug: 'site-kit-pro',
      price: 4900,
      activationLimit: 1,
      variations: [
        { sourceId: '10:1', name: 'Personal', price: 4900, activationLimit: 1 },
        // A multi-byte name in the serialized array, and a yearly subscription price option.
        {
          sourceId: '10:2',
          name: 'Agency – ∞',
          price: 19900,
          activationLimit: 0,
          billingPeriod: 'year',
          billingInterval: 1,
        },
      ],
    });
    expect(byId(records, '11')).toMatchObject({ price: 2900, activationLimit: 3, variations: [] });
    expect(byId(records, '12')).toMatchObject({
      price: 9900,
      activationLimit: 0,
      bundledProductSourceIds: ['10', '11'],
    });
    expect(releases.records).toEqual([
      {
        productSourceId: '10',
        version: '2.4.1',
        changelog: '<h4>2.4.1</h4><ul><li>Fix: the settings page on PHP 8.3.</li></ul>',
        createdAt: '2025-10-01T09:00:00.000Z',
      },
      { productSourceId: '11', version: '1.0.3', createdAt: '2025-08-12T14:00:00.000Z' },
    ]);
  });

  it('reads sales in minor units of each currency, and leaves refund records out', async () => {
    const s = source();
    const { records, problems } = await readAll(s, 'orders');
    await s.close();
    expect(problems).toEqual([]);
    expect(records.map((o) => o.sourceId)).toEqual(['100', '101', '102', '103', '104', '105', '107']);
    expect(byId(records, '100')).toEqual({
      sourceId: '100',
      customerSourceId: '1',
      status: 'completed',
      currency: 'USD',
      total: 4900,
      gateway: 'stripe',
      transactionId: 'pi_3OaliceUSD100',
      createdAt: '2024-01-10T10:00:00.000Z',
      paidAt: '2024-01-10T10:00:05.000Z',
      items: [
        {
          productSourceId: '10',
          variationSourceId: '10:1',
          name: 'Site Kit Pro - Personal',
          quantity: 1,
          total: 4900,
        },
      ],
    });
    expect(byId(records, '101')).toMatchObject({ currency: 'EUR', total: 23800, tax: 3800 });
    // The yen has no minor unit.
    expect(byId(records, '102')).toMatchObject({ currency: 'JPY', total: 3500, items: [{ total: 3500 }] });
    expect(byId(records, '103').status).toBe('refunded');
    // A renewal.
    expect(byId(records, '105')).toMatchObject({ status: 'completed', currency: 'EUR', total: 23800 });
    expect(byId(records, '107')).toMatchObject({ status: 'pending', gateway: 'paypal' });
    expect(byId(records, '107')).not.toHaveProperty('paidAt');
  });

  it('reads subscriptions with their period, next payment and Stripe profile', async () => {
    const s = source();
    const { records, problems } = await readAll(s, 'subscriptions');
    await s.close();
    expect(problems).toEqual([]);
    expect(byId(records, '1')).toEqual({
      sourceId: '1',
      customerSourceId: '2',
      productSourceId: '10',
      variationSourceId: '10:2',
      parentOrderSourceId: '101',
      // Its renewal payment, by the order meta EDD Recurring writes.
      renewalOrderSourceIds: ['105'],
      status: 'active',
      billingPeriod: 'year',
      billingInterval: 1,
      nextPaymentAt: '2027-03-01T00:00:00.000Z',
      currency: 'EUR',
      recurringTotal: 23800,
      gateway: 'stripe',
      gatewayProfileId: 'sub_1ObobAgencyYearly',
      createdAt: '2024-03-01T00:00:09.000Z',
    });
    expect(byId(records, '2')).not.toHaveProperty('renewalOrderSourceIds');
    expect(byId(records, '2')).toMatchObject({
      status: 'cancelled',
      billingPeriod: 'month',
      nextPaymentAt: null,
      currency: 'USD',
      recurringTotal: 4900,
      gatewayProfileId: 'sub_1OaliceMonthly',
    });
  });

  it('reads licenses with their keys unchanged, statuses, expiry, limits and bundle parents', async () => {
    const s = source();
    const { records, problems } = await readAll(s, 'licenses');
    await s.close();
    expect(byId(records, '1')).toEqual({
      sourceId: '1',
      key: '5f0c2a8e9b7d4e1fa3c6b0d9e8f7a6b5',
      productSourceId: '10',
      variationSourceId: '10:1',
      customerSourceId: '1',
      orderSourceId: '100',
      subscriptionSourceId: '2',
      status: 'active',
      expiresAt: '2030-01-01T00:00:00.000Z',
      activationLimit: null,
      createdAt: '2024-01-10T10:00:05.000Z',
    });
    expect(byId(records, '2')).toMatchObject({ status: 'disabled', expiresAt: '2025-02-02T00:00:00.000Z' });
    // The license's own limit: 0 is unlimited.
    expect(byId(records, '3')).toMatchObject({
      status: 'active',
      activationLimit: 0,
      subscriptionSourceId: '1',
    });
    expect(byId(records, '4')).toMatchObject({ key: 'JP-3500-LICENSE-KEY-4444', status: 'expired' });
    // The bundle: a lifetime parent and its children.
    expect(byId(records, '5')).toMatchObject({ productSourceId: '12', expiresAt: null });
    expect(byId(records, '5')).not.toHaveProperty('parentSourceId');
    expect(byId(records, '6')).toMatchObject({ productSourceId: '10', parentSourceId: '5', expiresAt: null });
    expect(byId(records, '7')).toMatchObject({ productSourceId: '11', parentSourceId: '5' });
    expect(byId(records, '9')).toMatchObject({ status: 'inactive', activationLimit: 5 });
    expect(problems).toEqual([{ kind: 'licenses', sourceId: '8', reason: 'unknown_product', detail: '999' }]);
  });

  it('reads active sites, the local one as staging, and leaves deactivated ones out', async () => {
    const s = source();
    const { records, problems } = await readAll(s, 'activations');
    await s.close();
    expect(problems).toEqual([]);
    expect(records).toEqual([
      { sourceId: '1', licenseSourceId: '1', url: 'https://alice.example.com' },
      { sourceId: '2', licenseSourceId: '1', url: 'alice.local', staging: true },
      { sourceId: '3', licenseSourceId: '3', url: 'https://bob.example.de' },
      { sourceId: '5', licenseSourceId: '6', url: 'dave.example.com' },
    ]);
  });

  it('counts what the store holds, with paid revenue per currency', async () => {
    const s = source();
    expect(await s.totals()).toEqual({
      customers: 5,
      licenses: 9,
      activations: 4,
      orders: 7,
      subscriptions: 2,
      // Completed sales and renewals; not the refunded or pending ones.
      revenue: { USD: 14800, EUR: 47600, JPY: 3500 },
    });
    await s.close();
  });

  it('is registered as `edd`, reads every kind in the import order, and honours the table prefix', async () => {
    const make = SOURCES.edd!.open;
    const s = await make({ db: store.url, prefix: 'wp_' });
    expect(s.name).toBe('edd');
    let count = 0;
    for (const kind of IMPORT_ORDER) for await (const _ of s.read(kind)) count++;
    await s.close();
    expect(count).toBe(5 + 3 + 2 + 7 + 2 + 9 + 4);
    const other = await make({ db: store.url, prefix: 'shop_' });
    await expect(other.totals()).rejects.toThrow();
    await other.close();
    await expect(make({ db: store.url, prefix: 'wp_; DROP TABLE x' })).rejects.toThrow();
    await expect(make({ prefix: 'wp_' })).rejects.toThrow();
  });
});
