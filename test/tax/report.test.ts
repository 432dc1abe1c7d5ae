import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, createCoupon } from '../cart/helpers.js';
import { submit } from '../checkout/helpers.js';
import { admin, adminOk, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { BILLING, createProduct, enableOfflineGateways, uniqueEmail } from '../helpers/factories.js';
import { ViesStandIn } from './helpers.js';

/**
 * The quarter's tax report (docs/taxes.md, 'The tax report') against the orders it is made of:
 * a test adds up the orders and refunds itself and finds the report's every row.
 */

let t: TestApp;
const vies = new ViesStandIn({ FR40303265045: 'ACME SARL' });

interface OrderView {
  id: number;
  total: string;
  total_tax: string;
  currency: string;
  reverse_charge: boolean;
  tax_country: string;
  buyer_tax_id: string;
  paid_at: string | null;
  tax_lines: { rate: string; amount: string }[];
}
interface Row {
  country: string;
  rate: string;
  currency: string;
  orders: number;
  net: string;
  tax: string;
  refunds: number;
  refunded_net: string;
  refunded_tax: string;
  total_net: string;
  total_tax: string;
}
interface Report {
  quarter: string;
  from: string;
  to: string;
  rows: Row[];
  reverse_charge: {
    order_id: number;
    country: string;
    buyer_tax_id: string;
    currency: string;
    net: string;
  }[];
}

const now = new Date();
const QUARTER = `${now.getUTCFullYear()}-Q${Math.floor(now.getUTCMonth() / 3) + 1}`;
const cents = (d: string) => Math.round(Number(d) * 100);
const placed: number[] = [];
const refunds: { order: number; amount: number }[] = [];

beforeAll(async () => {
  await vies.start();
  t = await createTestApp({ env: { VIES_URL: vies.url, VIES_TIMEOUT_MS: '1000' } });
  await enableOfflineGateways(t);
  await setSettings(t, {
    store_mode: 'live',
    checkout_rate_limit: 1000,
    tax_regime: 'digital_services',
    tax_seller_country: 'DE',
  });
  const cheap = await createProduct(t, { price: '9.99' });
  const dear = await createProduct(t, { price: '149.00' });
  await createCoupon(t, { code: 'tenoff', discount_type: 'percent', amount: '10' });
  const orders: [string, Record<string, unknown>][] = [
    ['FR', { items: [{ product_id: cheap.id, qty: 3 }] }],
    ['FR', { items: [{ product_id: dear.id, qty: 1 }], coupons: ['tenoff'] }],
    [
      'DE',
      {
        items: [
          { product_id: cheap.id, qty: 1 },
          { product_id: dear.id, qty: 2 },
        ],
      },
    ],
    ['IT', { items: [{ product_id: dear.id, qty: 1 }] }],
    ['FI', { items: [{ product_id: cheap.id, qty: 7 }] }],
    ['US', { items: [{ product_id: dear.id, qty: 1 }] }],
    ['DE', { items: [{ product_id: dear.id, qty: 1 }], vat_number: 'FR40303265045' }],
  ];
  for (const [country, body] of orders) {
    const { res, body: out } = await submit(new Browser(t), {
      billing: { ...BILLING, country, email: uniqueEmail('oss') },
      payment_method: 'bacs',
      ...body,
    });
    if (res.statusCode !== 200) throw new Error(res.body);
    await adminOk(t, 'POST', `/orders/${out.order_id}/status`, { status: 'processing' });
    placed.push(out.order_id);
  }
  // One order not paid: not a sale.
  await submit(new Browser(t), {
    billing: { ...BILLING, country: 'FR', email: uniqueEmail('oss') },
    payment_method: 'bacs',
    items: [{ product_id: dear.id, qty: 1 }],
  });
  // A partial refund of the second French order and a full one of the Italian.
  for (const [i, amount] of [
    [1, '50.00'],
    [3, '178.81'],
  ] as const) {
    await adminOk(t, 'POST', `/orders/${placed[i]}/refunds`, { amount, reason: 'test' });
    refunds.push({ order: placed[i]!, amount: cents(amount) });
  }
});
afterAll(async () => {
  vies.close();
  await t.close();
});

describe('GET /v1/reports/tax', () => {
  it('reconciles with the orders: every sale and refund in its country and rate row, reverse charge apart', async () => {
    const orders = await Promise.all(placed.map((id) => adminOk<OrderView>(t, 'GET', `/orders/${id}`)));
    // The report's sums, made here from the orders themselves.
    const expected = new Map<
      string,
      { orders: number; net: number; tax: number; refunds: number; rnet: number; rtax: number }
    >();
    const at = (o: OrderView, rate: string) => {
      const key = `${o.tax_country}|${rate}|${o.currency}`;
      if (!expected.has(key)) expected.set(key, { orders: 0, net: 0, tax: 0, refunds: 0, rnet: 0, rtax: 0 });
      return expected.get(key)!;
    };
    for (const o of orders) {
      if (o.reverse_charge) continue;
      for (const l of o.tax_lines) {
        const e = at(o, l.rate);
        e.orders += 1;
        e.net += cents(o.total) - cents(o.total_tax);
        e.tax += cents(l.amount);
      }
    }
    for (const r of refunds) {
      const o = orders.find((x) => x.id === r.order)!;
      const tax = Math.round((cents(o.total_tax) * r.amount) / cents(o.total));
      const e = at(o, o.tax_lines[0]!.rate);
      e.refunds += 1;
      e.rnet += r.amount - tax;
      e.rtax += tax;
    }
    const report = await adminOk<Report>(t, 'GET', `/reports/tax?quarter=${QUARTER}`);
    const money = (c: number) => (c / 100).toFixed(2);
    expect(report.rows).toEqual(
      [...expected.entries()]
        .map(([key, e]) => {
          const [country, rate, currency] = key.split('|') as [string, string, string];
          return {
            country,
            rate,
            currency,
            orders: e.orders,
            net: money(e.net),
            tax: money(e.tax),
            refunds: e.refunds,
            refunded_net: money(e.rnet),
            refunded_tax: money(e.rtax),
            total_net: money(e.net - e.rnet),
            total_tax: money(e.tax - e.rtax),
          };
        })
        .sort((a, b) => a.country.localeCompare(b.country)),
    );
    // The countries and rates by hand: DE 19 %, FI 25.5 %, FR 20 % (two orders), IT 22 %; none for US.
    expect(report.rows.map((r) => [r.country, r.rate, r.orders])).toEqual([
      ['DE', '19.0000', 1],
      ['FI', '25.5000', 1],
      ['FR', '20.0000', 2],
      ['IT', '22.0000', 1],
    ]);
    // 149.00 + 22 % = 181.78, refunded 178.81 → 32.24 tax back (181.78 × 178.81 / 181.78 × 0.22 / 1.22).
    expect(report.rows.find((r) => r.country === 'IT')).toMatchObject({
      tax: '32.78',
      refunded_tax: '32.24',
    });
    // All the tax of the quarter's paid orders, less the refunds' share, is in the rows.
    const collected = orders.reduce((s, o) => s + cents(o.total_tax), 0);
    const refundedTax = [...expected.values()].reduce((s, e) => s + e.rtax, 0);
    expect(report.rows.reduce((s, r) => s + cents(r.total_tax), 0)).toBe(collected - refundedTax);
    const rc = orders.find((o) => o.reverse_charge)!;
    expect(report.reverse_charge).toEqual([
      {
        order_id: rc.id,
        paid_at: rc.paid_at,
        country: 'DE',
        buyer_tax_id: 'FR40303265045',
        currency: 'USD',
        net: '149.00',
      },
    ]);
  });

  it('answers CSV with the same rows, and an empty report for a quarter without sales', async () => {
    const res = await admin(t, 'GET', `/reports/tax?quarter=${QUARTER}&format=csv`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="tax-${QUARTER}.csv"`);
    const lines = res.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'section,country,rate,currency,orders,net,tax,refunds,refunded_net,refunded_tax,total_net,total_tax',
    );
    const json = await adminOk<Report>(t, 'GET', `/reports/tax?quarter=${QUARTER}`);
    expect(lines.filter((l) => l.startsWith('sales,'))).toEqual(
      json.rows.map((r) => ['sales', ...Object.values(r)].join(',')),
    );
    expect(lines.filter((l) => l.startsWith('reverse_charge,'))).toHaveLength(1);
    const empty = await adminOk<Report>(t, 'GET', '/reports/tax?quarter=2020-Q1');
    expect(empty).toEqual({
      quarter: '2020-Q1',
      from: '2020-01-01T00:00:00.000Z',
      to: '2020-04-01T00:00:00.000Z',
      rows: [],
      reverse_charge: [],
    });
  });

  it.each(['2026-Q5', '2026Q4', '26-Q1', '1999-Q4', "2026-Q4' OR 1=1", ''])(
    'refuses quarter=%j with 400 invalid_tax_quarter',
    async (q) => {
      expectError(
        await admin(t, 'GET', `/reports/tax?quarter=${encodeURIComponent(q)}`),
        400,
        'invalid_tax_quarter',
      );
    },
  );

  it('refuses a missing quarter, an unknown format or parameter, and callers who are not administrators', async () => {
    expectError(await admin(t, 'GET', '/reports/tax'), 400, 'rest_missing_param');
    expectError(
      await admin(t, 'GET', `/reports/tax?quarter=${QUARTER}&format=xls`),
      400,
      'invalid_parameters',
    );
    expectError(
      await admin(t, 'GET', `/reports/tax?quarter=${QUARTER}&country=FR`),
      400,
      'invalid_parameters',
    );
    const anon = await t.app.inject({ method: 'GET', url: `/v1/reports/tax?quarter=${QUARTER}` });
    expect(anon.statusCode).toBe(401);
  });
});
