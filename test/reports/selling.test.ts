import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/clock.js';
import { adminOk, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import {
  BILLING,
  createCustomer,
  createProduct,
  enableOfflineGateways,
  uniqueEmail,
} from '../helpers/factories.js';

/**
 * The dashboard's renewal rate, upgrade revenue and MRR (docs/selling.md, 'Reports') against
 * values computed by hand from the rows seeded here.
 */
let t: TestApp;
const db = () => t.app.services.database.db;

async function paidOrder(productId: number, meta: Record<string, unknown> | null = null) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/checkout/submit',
    payload: {
      items: [{ product_id: productId, qty: 1 }],
      payment_method: 'bacs',
      billing: { ...BILLING, email: uniqueEmail() },
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  const id = res.json().order_id as number;
  await adminOk(t, 'POST', `/orders/${id}/status`, { status: 'processing' });
  // What the upgrade and renewal flows write on their items (docs/selling.md, 'Reports').
  if (meta)
    await db()
      .updateTable('order_items')
      .set({ meta: JSON.stringify(meta) })
      .where('order_id', '=', id)
      .execute();
  return id;
}

async function subscription(
  userId: number,
  productId: number,
  status: string,
  currency: string,
  recurringMinor: number,
  period: string,
  interval: number,
  updatedAt = new Date(),
) {
  await db()
    .insertInto('subscriptions')
    .values({
      user_id: userId,
      product_id: productId,
      variation_id: null,
      status,
      next_payment_at: null,
      billing_period: period,
      billing_interval: interval,
      quantity: 1,
      currency,
      recurring_total: recurringMinor,
      payment_method: '',
      parent_order_id: null,
      status_reason: null,
      created_at: iso(updatedAt),
      updated_at: iso(updatedAt),
    })
    .execute();
}

beforeAll(async () => {
  t = await createTestApp();
  await enableOfflineGateways(t);
  await setSettings(t, { store_mode: 'live', checkout_rate_limit: 100 });
});
afterAll(async () => t.close());

describe('GET /v1/reports/dashboard: renewal rate, upgrade revenue, MRR', () => {
  it('counts what the definitions say and nothing else', async () => {
    const p = await createProduct(t, { price: '49.00' });
    const customer = await createCustomer(t);

    // Upgrades: two paid USD items of 49.00 = 98.00. Not counted: an unpaid one, a cancelled one,
    // a test order's, and a plain sale.
    await paidOrder(p.id, { license_action: 'upgrade', license_id: 1 });
    await paidOrder(p.id, { license_action: 'upgrade' });
    const cancelled = await paidOrder(p.id, { license_action: 'upgrade' });
    await adminOk(t, 'POST', `/orders/${cancelled}/status`, { status: 'cancelled' });
    const test = await paidOrder(p.id, { license_action: 'upgrade' });
    await db().updateTable('orders').set({ test: 1 }).where('id', '=', test).execute();
    await paidOrder(p.id);

    // Renewals: an item with license_action 'renewal' and an order made to renew a subscription.
    await paidOrder(p.id, { license_action: 'renewal' });
    const renewal = await paidOrder(p.id);
    await db().updateTable('orders').set({ created_via: 'renewal' }).where('id', '=', renewal).execute();

    // Lapsed in the range: one expired, one cancelled; one cancelled 60 days ago is outside it.
    await subscription(customer.id, p.id, 'expired', 'USD', 1000, 'month', 1);
    await subscription(customer.id, p.id, 'cancelled', 'USD', 1000, 'month', 1);
    await subscription(
      customer.id,
      p.id,
      'cancelled',
      'USD',
      1000,
      'month',
      1,
      new Date(Date.now() - 60 * 86_400_000),
    );

    // MRR: USD 12.00 a month + 120.00 a year (10.00) + 30.00 every 3 months (10.00) = 32.00;
    // EUR 20.00 a month while pending cancellation; on-hold is not billing.
    await subscription(customer.id, p.id, 'active', 'USD', 1200, 'month', 1);
    await subscription(customer.id, p.id, 'active', 'USD', 12000, 'year', 1);
    await subscription(customer.id, p.id, 'active', 'USD', 3000, 'month', 3);
    await subscription(customer.id, p.id, 'pending-cancel', 'EUR', 2000, 'month', 1);
    await subscription(customer.id, p.id, 'on-hold', 'USD', 5000, 'month', 1);

    const r = await adminOk<Record<string, unknown>>(t, 'GET', '/reports/dashboard?days=30');
    expect(r.renewal_rate).toEqual({ renewals: 2, lapsed: 2, rate: 0.5 });
    expect(r.upgrade_revenue).toEqual([
      { currency: 'USD', decimals: 2, total_minor: 9800, total: '98.00', items: 2 },
    ]);
    expect(r.mrr).toEqual([
      { currency: 'EUR', decimals: 2, total_minor: 2000, total: '20.00', subscriptions: 1 },
      { currency: 'USD', decimals: 2, total_minor: 3200, total: '32.00', subscriptions: 3 },
    ]);
  });
});
