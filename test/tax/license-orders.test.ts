import { describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { adminOk, setSettings } from '../helpers/app.js';
import { BILLING, createCustomer, createOrder, createProduct, uniqueEmail } from '../helpers/factories.js';
import { type TaxedOrderView, useTaxedStore } from './helpers.js';

/**
 * The orders that act on a license outside checkout, its renewal and its move to another tier, are
 * taxed as the license's first order was: the same rates, country, VAT number and reverse charge,
 * taken out of the price when prices include tax and added to it when not (docs/taxes.md,
 * 'Renewals'), so the invoice and the tax report count them.
 */

const store = useTaxedStore();
const term = { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 365 } };

/** A term license of a 10.00 product (two tiers) bought from `country`, and its owner's browser. */
async function licenseFrom(country: string, extra: Record<string, unknown> = {}) {
  const product = await createProduct(store.t, {
    type: 'variable',
    entitlement_policy: term,
    variations: [
      { name: 'One site', price: '10.00', activation_limit: 1 },
      { name: 'Five sites', price: '30.00', activation_limit: 5 },
    ],
  } as never);
  const email = uniqueEmail('licorder');
  const customer = await createCustomer(store.t, email);
  const b = new Browser(store.t);
  await b.login(email, customer.password);
  const variation = (product as unknown as { variations: { id: number }[] }).variations[0]!.id;
  const out = await createOrder(
    store.t,
    {
      items: [{ product_id: product.id, variation_id: variation, qty: 1 }],
      billing: { ...BILLING, country, email },
      ...extra,
    },
    b,
  );
  if ((await adminOk<{ status: string }>(store.t, 'GET', `/orders/${out.order_id}`)).status === 'pending') {
    await adminOk(store.t, 'POST', `/orders/${out.order_id}/status`, { status: 'processing' });
  }
  const license = await store.t.app.services.database.db
    .selectFrom('licenses')
    .select(['id'])
    .where('order_id', '=', out.order_id)
    .executeTakeFirstOrThrow();
  return { license: license.id, headers: customer.headers, product };
}

async function renewal(license: number, headers: Record<string, string>) {
  const res = await store.t.app.inject({
    method: 'POST',
    url: `/v1/account/licenses/${license}/renewal-order`,
    headers,
  });
  expect(res.statusCode, res.body).toBe(201);
  return adminOk<TaxedOrderView>(store.t, 'GET', `/orders/${res.json().order_id}`);
}

describe('orders acting on a license are taxed as its first order', () => {
  it('a renewal from France with prices entered without tax: 10.00 + 2.00 French VAT', async () => {
    await setSettings(store.t, { prices_include_tax: false });
    const { license, headers } = await licenseFrom('FR');
    const o = await renewal(license, headers);
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

  it('a renewal with prices entered with tax: 10.00 of which 1.67 French VAT', async () => {
    await setSettings(store.t, { prices_include_tax: true });
    const { license, headers } = await licenseFrom('FR');
    const o = await renewal(license, headers);
    expect(o).toMatchObject({ total: '10.00', subtotal: '8.33', total_tax: '1.67', tax_country: 'FR' });
    await setSettings(store.t, { prices_include_tax: false });
  });

  it('a reverse-charge license renews with reverse charge and no VAT', async () => {
    const { license, headers } = await licenseFrom('DE', { vat_number: 'FR40303265045' });
    const o = await renewal(license, headers);
    expect(o).toMatchObject({
      total: '10.00',
      total_tax: '0.00',
      reverse_charge: true,
      buyer_tax_id: 'FR40303265045',
      tax_lines: [],
    });
  });

  it("an upgrade's prorated price is taxed at the first order's rate", async () => {
    const { license, headers, product } = await licenseFrom('FR');
    const target = (product as unknown as { variations: { id: number }[] }).variations[1]!.id;
    const res = await store.t.app.inject({
      method: 'POST',
      url: `/v1/account/licenses/${license}/upgrade-order`,
      headers,
      payload: { variation_id: target },
    });
    expect(res.statusCode, res.body).toBe(201);
    const o = await adminOk<TaxedOrderView>(store.t, 'GET', `/orders/${res.json().order_id}`);
    // 30.00 less the unused share of the 12.00 paid (all of it, bought today), plus 20% of the rest.
    expect(o.tax_country).toBe('FR');
    expect(o.tax_lines).toHaveLength(1);
    const net = Number(o.subtotal);
    expect(Number(o.total_tax)).toBeCloseTo(Math.round(net * 20) / 100, 2);
    expect(Number(o.total)).toBeCloseTo(net + Number(o.total_tax), 2);
    expect(Number(o.total_tax)).toBeGreaterThan(0);
  });

  it("a subscription's license moved tier renews at the new tier's price taxed as checkout taxes it", async () => {
    const product = (await createProduct(store.t, {
      type: 'variable-subscription',
      subscription: { period: 'month', interval: 1 },
      entitlement_policy: { usage: { mode: 'subscription' }, updates: { mode: 'license' } },
      variations: [
        { name: 'One site', price: '10.00', activation_limit: 1 },
        { name: 'Five sites', price: '30.00', activation_limit: 5 },
      ],
    } as never)) as unknown as { id: number; variations: { id: number }[] };
    const one = product.variations[0]!.id;
    const five = product.variations[1]!.id;
    const db = store.t.app.services.database.db;
    /** A subscription bought from France at checkout, paid: its license and subscription. */
    const subscribe = async (variation: number) => {
      const email = uniqueEmail('subtax');
      const customer = await createCustomer(store.t, email);
      const b = new Browser(store.t);
      await b.login(email, customer.password);
      const out = await createOrder(
        store.t,
        {
          items: [{ product_id: product.id, variation_id: variation, qty: 1 }],
          billing: { ...BILLING, country: 'FR', email },
        },
        b,
      );
      await adminOk(store.t, 'POST', `/orders/${out.order_id}/status`, { status: 'processing' });
      const license = await db
        .selectFrom('licenses')
        .select(['id', 'subscription_id'])
        .where('order_id', '=', out.order_id)
        .executeTakeFirstOrThrow();
      return { license: license.id, subscription: license.subscription_id!, headers: customer.headers };
    };
    const recurring = async (id: number) =>
      Number(
        (
          await db
            .selectFrom('subscriptions')
            .select('recurring_total')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).recurring_total,
      );
    for (const includeTax of [false, true]) {
      await setSettings(store.t, { prices_include_tax: includeTax });
      const moving = await subscribe(one);
      // What checkout sets for the dearer tier bought outright from France.
      const outright = await recurring((await subscribe(five)).subscription);
      expect(outright).toBe(includeTax ? 3000 : 3600);
      const res = await store.t.app.inject({
        method: 'POST',
        url: `/v1/account/licenses/${moving.license}/upgrade-order`,
        headers: moving.headers,
        payload: { variation_id: five },
      });
      expect(res.statusCode, res.body).toBe(201);
      await adminOk(store.t, 'POST', `/orders/${res.json().order_id}/status`, { status: 'processing' });
      expect(await recurring(moving.subscription)).toBe(outright);
    }
    await setSettings(store.t, { prices_include_tax: false });
  });
});
