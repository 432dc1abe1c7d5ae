import { describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { adminOk } from '../helpers/app.js';
import { BILLING, createCustomer, createOrder, createProduct, uniqueEmail } from '../helpers/factories.js';
import { type TaxedOrderView, useTaxedStore } from './helpers.js';

/**
 * A subscription's renewal order repeats its first order's total with tax, and now its tax too:
 * the same rate, country, VAT number and reverse charge (docs/taxes.md, 'Renewals'), so the tax
 * report counts renewals as it counts first orders.
 */

const store = useTaxedStore();

/** A customer's monthly subscription of 10.00 bought from `country`; answers its renewal order. */
async function renewalOf(country: string, extra: Record<string, unknown> = {}) {
  const product = await createProduct(store.t, {
    type: 'subscription',
    price: '10.00',
    subscription: { period: 'month', interval: 1 },
  });
  const email = uniqueEmail('renew');
  const customer = await createCustomer(store.t, email);
  const b = new Browser(store.t);
  await b.login(email, customer.password);
  const out = await createOrder(
    store.t,
    { items: [{ product_id: product.id, qty: 1 }], billing: { ...BILLING, country, email }, ...extra },
    b,
  );
  const sub = await store.t.app.services.database.db
    .selectFrom('subscriptions')
    .select('id')
    .where('parent_order_id', '=', out.order_id)
    .executeTakeFirstOrThrow();
  const renewal = await store.t.app.services.subscriptions.createRenewalOrder(sub.id);
  return adminOk<TaxedOrderView>(store.t, 'GET', `/orders/${renewal.id}`);
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
