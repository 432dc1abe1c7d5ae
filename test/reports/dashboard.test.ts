import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/clock.js';
import { call, download, protectedFixture } from '../distribution/helpers.js';
import {
  admin,
  adminOk,
  advanceClock,
  createTestApp,
  expectError,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import {
  BILLING,
  createCustomer,
  createOrder,
  createProduct,
  enableOfflineGateways,
  publish,
  uniqueEmail,
} from '../helpers/factories.js';

/**
 * GET /v1/reports/dashboard (docs/api.md, 'Reports'): a store with paid orders in two currencies
 * over three days of the test clock, an unpaid and a cancelled order, a license, an activation,
 * update checks, a download, failing webhooks and a draft.
 */
let t: TestApp;
const DAY = 86_400;
const day = (d: Date) => iso(d).slice(0, 10);
let today: Date;
const expected = {
  usd: new Map<string, { orders: number; minor: number }>(),
  eur: new Map<string, { orders: number; minor: number }>(),
};

interface Report {
  days: number;
  from: string;
  to: string;
  sales: {
    currency: string;
    decimals: number;
    orders: number;
    total_minor: number;
    total: string;
    per_day: { day: string; orders: number; total_minor: number; total: string }[];
  }[];
  new_licenses: { total: number; per_day: { day: string; count: number }[] };
  activations: { active: number; staging: number; total: number; per_day: { day: string; count: number }[] };
  update_checks: { total: number; per_day: { day: string; count: number }[] };
  downloads: { total: number; per_day: { day: string; count: number }[] };
  failing_webhooks: { count: number; latest: Record<string, unknown>[] };
  drafts: { count: number; latest: Record<string, unknown>[] };
}

const now = async () => new Date(((await adminOk(t, 'GET', '/test-clock')) as { now: string }).now);

async function eurRateFresh() {
  await setSettings(t, {
    currencies: [{ code: 'EUR', symbol: '€', decimals: 2, rate: '0.9', rate_updated_at: iso(await now()) }],
  });
}

async function paidOrder(productId: number, currency: 'USD' | 'EUR') {
  const res = await t.app.inject({
    method: 'POST',
    url: `/v1/checkout/submit${currency === 'EUR' ? '?currency=EUR' : ''}`,
    payload: {
      items: [{ product_id: productId, qty: 1 }],
      payment_method: 'bacs',
      billing: { ...BILLING, email: uniqueEmail() },
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  const id = res.json().order_id as number;
  // Marked paid by the administrator: processing issues its license and sets paid_at.
  await adminOk(t, 'POST', `/orders/${id}/status`, { status: 'processing' });
  const row = await t.app.services.database.db
    .selectFrom('orders')
    .select(['total', 'status', 'paid_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  expect(row.paid_at).not.toBeNull();
  return { id, total: Number(row.total) };
}

function expect1(currency: 'usd' | 'eur', d: string, minor: number) {
  const m = expected[currency];
  const e = m.get(d) ?? { orders: 0, minor: 0 };
  m.set(d, { orders: e.orders + 1, minor: e.minor + minor });
}

beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  // Orders here are paid by bank transfer or cheque, which a new store starts without; the store
  // is live, so they are real sales (test orders are left out: test/orders/test-mode.test.ts).
  await enableOfflineGateways(t);
  await setSettings(t, { store_mode: 'live' });
  // Noon UTC, so that no step of the seeding crosses a midnight.
  const start = await now();
  const noon = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + 1, 12);
  await advanceClock(t, Math.ceil((noon - start.getTime()) / 1000));
  const p = await createProduct(t, { price: '49.00' });

  // Day 1: two USD orders and one EUR order paid; one cheque order never paid.
  await eurRateFresh();
  const d1 = day(await now());
  for (const c of ['USD', 'USD', 'EUR'] as const) {
    const o = await paidOrder(p.id, c);
    expect1(c === 'USD' ? 'usd' : 'eur', d1, o.total);
  }
  await createOrder(t, { items: [{ product_id: p.id, qty: 1 }], payment_method: 'cheque' });

  // Day 2: two USD orders paid, one of them cancelled afterwards (no longer a sale).
  await advanceClock(t, DAY);
  const d2 = day(await now());
  const kept = await paidOrder(p.id, 'USD');
  expect1('usd', d2, kept.total);
  const cancelled = await paidOrder(p.id, 'USD');
  await adminOk(t, 'POST', `/orders/${cancelled.id}/status`, { status: 'cancelled' });

  // Day 3 (today): two EUR orders; a license with an activation, three update checks, a download.
  await advanceClock(t, DAY);
  await eurRateFresh();
  today = await now();
  const d3 = day(today);
  for (const c of ['EUR', 'EUR'] as const) expect1('eur', d3, (await paidOrder(p.id, c)).total);
  const f = await protectedFixture(t);
  const check = (version: string) =>
    call(t, 'POST', '/software/check', { slug: f.slug, version, ...f.creds });
  expect((await check('1.0.0')).statusCode).toBe(200);
  expect((await check('1.0.0')).statusCode).toBe(200);
  const eligible = await check('0.9.0');
  expect(eligible.statusCode, eligible.body).toBe(200);
  expect((await download(t, eligible.json().download_url)).statusCode).toBe(200);
  await publish(t, f.product.id, '2.0.0-beta', [['status', 'draft']]);

  // Webhooks: one abandoned after a 500, one pending after a network error, one delivered, one
  // not yet attempted.
  const db = t.app.services.database.db;
  const at = iso(today);
  const event = (event_id: string, status: string, attempts: number, last_error: string | null) => ({
    event_id,
    event: 'license.revoked' as const,
    payload: '{}',
    status: status as 'pending',
    attempts,
    next_attempt_at: null,
    locked_until: null,
    last_error,
    created_at: at,
    updated_at: at,
  });
  await db
    .insertInto('webhook_events')
    .values([
      event('00000000-0000-4000-8000-000000000001', 'abandoned', 5, 'unexpected status 500'),
      event('00000000-0000-4000-8000-000000000002', 'pending', 1, 'network error: ECONNREFUSED'),
      event('00000000-0000-4000-8000-000000000003', 'delivered', 1, null),
      event('00000000-0000-4000-8000-000000000004', 'pending', 0, null),
    ])
    .execute();
  await db
    .insertInto('webhook_attempts')
    .values({
      event_id: '00000000-0000-4000-8000-000000000001',
      event: 'license.revoked',
      attempt: 5,
      response_code: 500,
      delivered: 0,
      error: 'unexpected status 500',
      attempted_at: at,
    })
    .execute();
  // The counters are in memory until a flush (every few seconds while listening, and on close).
  await t.app.services.counters.flush();
});
afterAll(async () => t.close());

const report = async (query = '') => {
  const res = await admin(t, 'GET', `/reports/dashboard${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Report;
};

describe('GET /reports/dashboard', () => {
  it('answers every day of the range, today last, with 0 on days without anything', async () => {
    const r = await report('?days=7');
    expect(r.days).toBe(7);
    expect(r.to).toBe(day(today));
    expect(r.from).toBe(day(new Date(today.getTime() - 6 * DAY * 1000)));
    for (const series of [r.new_licenses, r.activations, r.update_checks, r.downloads]) {
      expect(series.per_day.map((d) => d.day)).toHaveLength(7);
      expect(series.per_day[0]).toEqual({ day: r.from, count: 0 });
    }
    for (const s of r.sales) {
      expect(s.per_day).toHaveLength(7);
      expect(
        s.per_day.slice(0, 4).every((d) => d.orders === 0 && d.total_minor === 0 && d.total === '0.00'),
      ).toBe(true);
    }
    expect((await report()).days).toBe(30);
    expect((await report()).new_licenses.per_day).toHaveLength(30);
    const one = await report('?days=1');
    expect(one.from).toBe(one.to);
    expect(await report('?days=366')).toMatchObject({ days: 366 });
  });

  it('sales per currency and day: paid orders (processing, completed) dated by payment', async () => {
    const r = await report('?days=7');
    expect(r.sales.map((s) => s.currency)).toEqual(['EUR', 'USD']);
    for (const [code, m] of [
      ['USD', expected.usd],
      ['EUR', expected.eur],
    ] as const) {
      const s = r.sales.find((x) => x.currency === code)!;
      const minor = [...m.values()].reduce((n, e) => n + e.minor, 0);
      expect(s).toMatchObject({
        decimals: 2,
        orders: [...m.values()].reduce((n, e) => n + e.orders, 0),
        total_minor: minor,
        total: (minor / 100).toFixed(2),
      });
      for (const d of s.per_day) {
        const e = m.get(d.day) ?? { orders: 0, minor: 0 };
        expect(d).toEqual({
          day: d.day,
          orders: e.orders,
          total_minor: e.minor,
          total: (e.minor / 100).toFixed(2),
        });
      }
    }
    const usd = r.sales.find((x) => x.currency === 'USD')!;
    expect(usd.orders).toBe(3);
    expect(usd.per_day.slice(-3).map((d) => d.orders)).toEqual([2, 1, 0]);
    const eur = r.sales.find((x) => x.currency === 'EUR')!;
    expect(eur.per_day.slice(-3).map((d) => d.orders)).toEqual([1, 0, 2]);
  });

  it('new licenses and activations per day, active activations now', async () => {
    const r = await report('?days=7');
    // One license per paid order (the cancelled one's stays), and the fixture's license today.
    expect(r.new_licenses.per_day.slice(-3).map((d) => d.count)).toEqual([3, 2, 3]);
    expect(r.new_licenses.total).toBe(8);
    expect(r.activations).toMatchObject({ active: 1, total: 1 });
    expect(r.activations.per_day.at(-1)).toEqual({ day: day(today), count: 1 });
  });

  it('active activations name the staging ones among them (they take no seat)', async () => {
    expect((await report('?days=7')).activations.staging).toBe(0);
    const f = await protectedFixture(t);
    const res = await call(t, 'POST', '/licenses/activate', {
      license_key: f.key,
      domain: 'shop.local',
      installation_id: crypto.randomUUID(),
    });
    expect(res.json()).toMatchObject({ success: true, environment: 'staging' });
    const r = await report('?days=7');
    // The fixture's production site and the staging one: both active, one of them staging.
    expect(r.activations).toMatchObject({ active: 3, staging: 1 });
    // Back as it was for the tests after this one.
    await call(t, 'POST', '/licenses/deactivate', {
      license_key: f.key,
      activation_id: res.json().activation_id,
    });
    await call(t, 'POST', '/licenses/deactivate', { license_key: f.key, ...f.site });
    expect((await report('?days=7')).activations).toMatchObject({ active: 1, staging: 0 });
  });

  it('update checks and completed downloads per day', async () => {
    const r = await report('?days=7');
    expect(r.update_checks.per_day.at(-1)).toEqual({ day: day(today), count: 3 });
    expect(r.update_checks.total).toBe(3);
    expect(r.downloads.per_day.at(-1)).toEqual({ day: day(today), count: 1 });
    expect(r.downloads.total).toBe(1);
  });

  it('failing webhooks: abandoned or pending after a failed attempt, newest first, with the HTTP status', async () => {
    const { failing_webhooks: w } = await report();
    expect(w.count).toBe(2);
    expect(w.latest).toHaveLength(2);
    expect(w.latest).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          event_id: '00000000-0000-4000-8000-000000000001',
          event: 'license.revoked',
          status: 'abandoned',
          attempts: 5,
          response_code: 500,
          failed_at: iso(today),
        }),
        expect.objectContaining({
          event_id: '00000000-0000-4000-8000-000000000002',
          status: 'pending',
          response_code: null,
          error: 'network error: ECONNREFUSED',
        }),
      ]),
    );
  });

  it('releases waiting as drafts, with their product', async () => {
    const { drafts } = await report();
    expect(drafts.count).toBe(1);
    expect(drafts.latest[0]).toMatchObject({ version: '2.0.0-beta' });
    expect(typeof drafts.latest[0]!.product_name).toBe('string');
    expect(Date.parse(drafts.latest[0]!.created_at as string)).not.toBeNaN();
  });

  it('days out of range or not a whole number: 400 invalid_report_days, nothing else changes', async () => {
    for (const q of ['0', '367', '-1', '1.5', 'abc', '', '%3Cscript%3E', '1e3', '30%20OR%201=1']) {
      expectError(await admin(t, 'GET', `/reports/dashboard?days=${q}`), 400, 'invalid_report_days');
    }
    expectError(await admin(t, 'GET', '/reports/dashboard?days=7&days=8'), 400, 'invalid_report_days');
  });

  it('an unknown query field is 400 invalid_parameters, as on the other lists', async () => {
    expectError(await admin(t, 'GET', '/reports/dashboard?color=red'), 400, 'invalid_parameters');
    expectError(await admin(t, 'GET', '/reports/dashboard?days=7&page=2'), 400, 'invalid_parameters');
  });

  it('anonymous 401, customer 403', async () => {
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/reports/dashboard' }),
      401,
      'rest_not_logged_in',
    );
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/reports/dashboard?days=abc' }),
      401,
      'rest_not_logged_in',
    );
    const customer = await createCustomer(t);
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/reports/dashboard', headers: customer.headers }),
      403,
      'rest_forbidden',
    );
  });
});
