import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * Migration 2026112863_store_mode on stores as they were before it (docs/payments.md, 'Test mode
 * and live mode'): a database migrated up to the migration before it gets orders as an older store
 * has them, then the rest of the migrations run, on the database under test.
 */
let d: TestDatabase | null = null;
afterEach(async () => {
  await d?.drop();
  d = null;
});

async function olderStore(statuses: { status: string; paid: boolean }[]) {
  d = await freshDatabase({ upTo: '2026112810_artifact_stored_etag' });
  // biome-ignore lint/suspicious/noExplicitAny: the columns of the schema before the migration
  const old = d.database.db as any;
  const now = new Date().toISOString();
  for (const [i, { status, paid }] of statuses.entries()) {
    await old
      .insertInto('orders')
      .values({
        order_key: `order_old_${i}`,
        customer_id: null,
        status,
        created_via: 'checkout',
        currency: 'USD',
        currency_symbol: '$',
        decimals: 2,
        base_currency: 'USD',
        rate: '1',
        rate_id: 'base',
        rate_updated_at: null,
        prices_include_tax: 0,
        subtotal: 1000,
        subtotal_tax: 0,
        discount_total: 0,
        discount_tax: 0,
        shipping_total: 0,
        shipping_tax: 0,
        total_tax: 0,
        total: 1000,
        payment_method: 'bacs',
        payment_method_title: 'Direct bank transfer',
        billing: '{}',
        shipping: '{}',
        shipping_lines: '[]',
        coupons: '[]',
        customer_note: '',
        custom_fields: '{}',
        referral_code: '',
        ip_address: '',
        stock_held: '[]',
        audit: null,
        subscription_id: null,
        renewal_of: null,
        renewal_due_at: null,
        idempotency_hash: null,
        tracking_number: '',
        tracking_url: '',
        paid_at: paid ? now : null,
        disputed_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
  await migrateToLatest(d.database.db, d.database.dialect);
  const db = d.database.db;
  const mode = await db
    .selectFrom('settings')
    .select('value')
    .where('key', '=', 'store_mode')
    .executeTakeFirst();
  const gateways = Object.fromEntries(
    (await db.selectFrom('payment_gateways').select(['id', 'enabled']).execute()).map((g) => [
      g.id,
      g.enabled,
    ]),
  );
  const tests = (await db.selectFrom('orders').select('test').execute()).map((o) => o.test);
  return { mode: JSON.parse(mode!.value) as string, gateways, tests };
}

describe('migration 2026112863_store_mode', () => {
  it('a store with a paid order is live: its gateways stay, the test card goes off, its orders are real', async () => {
    const store = await olderStore([
      { status: 'completed', paid: true },
      { status: 'on-hold', paid: false },
    ]);
    expect(store).toEqual({
      mode: 'live',
      gateways: { bacs: 1, cheque: 1, test_card: 0, stripe: 0 },
      tests: [0, 0],
    });
  });

  it('an order refunded after it was paid counts as paid', async () => {
    expect((await olderStore([{ status: 'refunded', paid: true }])).mode).toBe('live');
  });

  it('a store with orders but none paid is in test mode and keeps its offline gateways', async () => {
    const store = await olderStore([
      { status: 'on-hold', paid: false },
      { status: 'refunded', paid: false },
      { status: 'cancelled', paid: false },
    ]);
    expect(store).toEqual({
      mode: 'test',
      gateways: { bacs: 1, cheque: 1, test_card: 1, stripe: 0 },
      tests: [0, 0, 0],
    });
  });

  it('a store without orders (a new one) is in test mode with only the test card on', async () => {
    expect(await olderStore([])).toEqual({
      mode: 'test',
      gateways: { bacs: 0, cheque: 0, test_card: 1, stripe: 0 },
      tests: [],
    });
  });
});
