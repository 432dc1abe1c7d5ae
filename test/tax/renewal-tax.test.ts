import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { adminOk, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { BILLING, createCustomer, createOrder, createProduct, uniqueEmail } from '../helpers/factories.js';
import { ViesStandIn } from './helpers.js';

/**
 * A subscription's renewal order repeats its first order's total with tax, and now its tax too:
 * the same rate, country, VAT number and reverse charge (docs/taxes.md, 'Renewals'), so the tax
 * report counts renewals as it counts first orders.
 */

let t: TestApp;
const vies = new ViesStandIn({ FR40303265045: 'ACME SARL' });

beforeAll(async () => {
  await vies.start();
  t = await createTestApp({ env: { VIES_URL: vies.url, VIES_TIMEOUT_MS: '300' } });
  await setSettings(t, {
    checkout_rate_limit: 1000,
    tax_regime: 'digital_services',
    tax_seller_country: 'DE',
  });
});
afterAll(async () => {
  vies.close();
  await t.close();
});

interface OrderView {
  total: string;
  subtotal: string;
  total_tax: string;
  reverse_charge: boolean;
  buyer_tax_id: string;
  tax_country: string;
  tax_lines: { name: string; rate: string; amount: string }[];
  items: { total: string; total_tax: string }[];
}

/** A customer's monthly subscription of 10.00 bought from `country`; answers its renewal order. */
async function renewalOf(country: string, extra: Record<string, unknown> = {}) {
  const product = await createProduct(t, {
    type: 'subscription',
    price: '10.00',
    subscription: { period: 'month', interval: 1 },
  });
  const email = uniqueEmail('renew');
  const customer = await createCustomer(t, email);
  const b = new Browser(t);
  await b.login(email, customer.password);
  const out = await createOrder(
    t,
    { items: [{ product_id: product.id, qty: 1 }], billing: { ...BILLING, country, email }, ...extra },
    b,
  );
  const sub = await t.app.services.database.db
    .selectFrom('subscriptions')
    .select('id')
    .where('parent_order_id', '=', out.order_id)
    .executeTakeFirstOrThrow();
  const renewal = await t.app.services.subscriptions.createRenewalOrder(sub.id);
  return adminOk<OrderView>(t, 'GET', `/orders/${renewal.id}`);
}

describe('renewal orders', () => {
  it("carry the first order's VAT: 12.00 of which 2.00 French VAT", async () => {
    const o = await renewalOf('FR');
    expect(o).toMatchObject({
      total: '12.00',
      subtotal: '10.00',
      total_tax: '2.00',
      tax_country: 'FR',
      reverse_charge: false,
      tax_lines: [{ name: 'VAT FR', rate: '20.0000', amount: '2.00' }],
    });
    expect(o.items).toMatchObject([{ total: '10.00', total_tax: '2.00' }]);
  });

  it('a reverse-charge subscription renews with reverse charge and no VAT', async () => {
    const o = await renewalOf('DE', { vat_number: 'FR40303265045' });
    expect(o).toMatchObject({
      total: '10.00',
      total_tax: '0.00',
      reverse_charge: true,
      buyer_tax_id: 'FR40303265045',
      tax_lines: [],
    });
  });
});
