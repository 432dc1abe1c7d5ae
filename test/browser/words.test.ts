import { describe, expect, it } from 'vitest';
import { fieldLabel } from '../../console/src/words.js';
import { ProductCreateBody } from '../../src/modules/catalogue/catalogue.schemas.js';
import { CouponCreateBody } from '../../src/modules/catalogue/coupons.schemas.js';
import { TaxRateBody } from '../../src/modules/catalogue/tax.schemas.js';
import { ListQuery } from '../../src/modules/licensing/license.schemas.js';
import { ORDER_STATUSES } from '../../src/modules/orders/orders.service.js';
import { Settings } from '../../src/modules/settings/settings.schemas.js';
import { ORDER_STATUS_LABELS } from '../../src/pages/status-labels.js';
import { skipBrowserTests } from './chromium.js';
import { api, enableOfflineGateways, page, server, setUpConsole, signInInBrowser, WIDE } from './console.js';

/**
 * What the store owner and the buyer read (docs/admin.md, docs/storefront.md): the same word for an
 * order's status on both sides, audit entries in words, a refusal shown at its field and scrolled
 * to, inputs that carry the server's limits, and the store's checkout refusing a malformed card
 * number at its field without making an order.
 */

const BILLING = {
  first_name: 'Ada',
  last_name: 'Byron',
  email: 'ada.words@example.com',
  phone: '+44 20 7946 0002',
  address_1: '3 Engine Row',
  city: 'London',
  postcode: 'N1 1AC',
  country: 'GB',
};

/** A property's schema of a TypeBox object, for the limits the console must carry. */
interface Limits {
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  anyOf?: Limits[];
}
const prop = (schema: unknown, name: string) =>
  (schema as { properties: Record<string, Limits> }).properties[name]!;

/** In the page: whether the element is wholly inside the window, and whether it has the focus. */
type Box = { getBoundingClientRect(): { top: number; bottom: number } };
const IN_VIEW = (e: unknown) => {
  const r = (e as Box).getBoundingClientRect();
  return r.top >= 0 && r.bottom <= (globalThis as unknown as { innerHeight: number }).innerHeight;
};
const FOCUSED = (e: unknown) =>
  e === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement;

it('names an audit field the console does not know in words', () => {
  expect(fieldLabel('price_minor')).toMatch(/^Price/);
  expect(fieldLabel('download_grace_days')).toBe('Download grace days');
  expect(fieldLabel('some_total_minor')).toBe('Some total');
});

describe.skipIf(skipBrowserTests)('words people read, in a real browser', () => {
  setUpConsole();

  const orderCount = async () => (await api<unknown[]>('GET', '/orders?per_page=100')).body.length;

  it('shows each order status with the same word to the owner (console) and to the buyer (receipt)', async () => {
    const product = await api<{ id: number }>('POST', '/products', { name: 'Status Kit', price: '20.00' });
    // Paid by bank transfer, which a new store starts without.
    await enableOfflineGateways();
    const res = await fetch(`${server.url}/v1/checkout/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        items: [{ product_id: product.body.id, qty: 1 }],
        billing: BILLING,
        payment_method: 'bacs',
      }),
    });
    const { order_id: id, order_key: key } = (await res.json()) as { order_id: number; order_key: string };
    await signInInBrowser(`/admin/orders/${id}`);

    const seen: Record<string, { owner: string; buyer: string }> = {};
    for (const status of ORDER_STATUSES) {
      if (status === 'refunded') {
        expect((await api('POST', `/orders/${id}/status`, { status: 'processing' })).status).toBe(200);
        expect((await api('POST', `/orders/${id}/refunds`, { amount: '20.00' })).status).toBe(201);
      } else if (status !== 'pending') {
        expect((await api('POST', `/orders/${id}/status`, { status })).status, status).toBe(200);
      }
      await page.goto(`${server.url}/admin/orders/${id}`);
      const badge = page.locator(`dl.facts .badge[data-value="${status}"]`);
      await badge.waitFor();
      const owner = (await badge.textContent())!.trim();
      await page.goto(`${server.url}/checkout/order-received/${id}?key=${key}`);
      const buyer = (await page.locator(`strong[data-status="${status}"]`).textContent())!.trim();
      seen[status] = { owner, buyer };
    }
    expect(seen).toEqual(
      Object.fromEntries(
        ORDER_STATUSES.map((s) => [s, { owner: ORDER_STATUS_LABELS[s], buyer: ORDER_STATUS_LABELS[s] }]),
      ),
    );
    // The order's history tells its status changes in the same words.
    await page.goto(`${server.url}/admin/orders/${id}`);
    const history = page.getByRole('region', { name: 'History', exact: true });
    await history.getByText('Status: Waiting for payment → Paid').first().waitFor();
    expect(await history.textContent()).not.toMatch(/→ (processing|on-hold|pending)\b/);
    // The list's filter offers the same words, never the API's names.
    await page.goto(`${server.url}/admin/orders`);
    const filter = page.getByLabel('Status', { exact: true });
    await filter.locator('option').nth(1).waitFor({ state: 'attached' });
    const options = await filter.locator('option').allTextContents();
    for (const s of ORDER_STATUSES) expect(options).toContain(ORDER_STATUS_LABELS[s]);
    expect(options).not.toContain('processing');
  }, 120_000);

  it('lists a product price change in the audit trail as “Price”, never price_minor', async () => {
    const product = await api<{ id: number }>('POST', '/products', { name: 'Audit Kit', price: '10.00' });
    expect((await api('PATCH', `/products/${product.body.id}`, { price: '12.50' })).status).toBe(200);
    await page.goto(`${server.url}/admin/audit?entity_type=product`);
    const change = page.locator('li[data-field="price_minor"]').first();
    await change.waitFor();
    expect(await change.textContent()).toMatch(/^Price \(in cents\): 1000 → 1250$/);
    const table = page.getByRole('region', { name: 'Audit events' });
    expect(await table.textContent()).not.toContain('price_minor');
    expect(await table.getByRole('link', { name: `Product #${product.body.id}` }).count()).toBeGreaterThan(0);
    expect(await table.getByRole('cell', { name: 'Changed', exact: true }).count()).toBeGreaterThan(0);
  });

  it('shows a refusal of a long form at its field, focused and scrolled into view', async () => {
    expect(
      (await api('POST', '/coupons', { code: 'taken10', discount_type: 'percent', amount: '10' })).status,
    ).toBe(201);
    // A short window: the code field is far above the button that saves the form.
    await page.setViewportSize({ width: 1280, height: 420 });
    await page.goto(`${server.url}/admin/coupons/new`);
    const code = page.getByLabel('Code', { exact: true });
    await code.fill('taken10');
    await page.getByLabel('Percent').fill('15');
    const save = page.getByRole('button', { name: 'Create coupon' });
    await save.scrollIntoViewIfNeeded();
    const inView = () => code.evaluate(IN_VIEW);
    expect(await inView()).toBe(false);
    await save.click();
    await expect.poll(() => code.getAttribute('aria-invalid')).toBe('true');
    await expect.poll(inView).toBe(true);
    expect(await code.evaluate(FOCUSED)).toBe(true);
    const describedBy = (await code.getAttribute('aria-describedby'))!;
    const error = page.locator(`[id="${describedBy.split(' ').find((i) => i.endsWith('-error'))}"]`);
    expect(await error.isVisible()).toBe(true);
    await page.setViewportSize(WIDE);
  });

  it('gives inputs the limits of the API’s schemas', async () => {
    await page.goto(`${server.url}/admin/coupons/new`);
    const code = page.getByLabel('Code', { exact: true });
    expect(Number(await code.getAttribute('maxlength'))).toBe(prop(CouponCreateBody, 'code').maxLength);
    const uses = page.getByLabel('Uses in all (optional)');
    expect(Number(await uses.getAttribute('min'))).toBe(
      prop(CouponCreateBody, 'usage_limit').anyOf?.[0]?.minimum ?? 1,
    );
    expect(Number(await uses.getAttribute('max'))).toBe(1_000_000_000);
    // Typing past the limit stops at it.
    await code.fill('');
    await code.pressSequentially('x'.repeat(105), { delay: 0 });
    expect((await code.inputValue()).length).toBe(prop(CouponCreateBody, 'code').maxLength);

    await page.goto(`${server.url}/admin/licenses`);
    expect(Number(await page.getByLabel('Search', { exact: true }).getAttribute('maxlength'))).toBe(
      prop(ListQuery, 'search').maxLength,
    );
    await page.goto(`${server.url}/admin/tax-rates`);
    expect(Number(await page.getByLabel('Name', { exact: true }).getAttribute('maxlength'))).toBe(
      prop(TaxRateBody, 'name').maxLength,
    );
    await page.goto(`${server.url}/admin/webhooks`);
    const url = page.locator('input[name="webhook_url"]');
    expect(Number(await url.getAttribute('maxlength'))).toBe(2000);
    expect(prop(Settings, 'webhook_url').anyOf?.some((m) => m.maxLength === 2000)).toBe(true);
    // The product form (new and edit) and the Settings screen's text fields.
    await page.goto(`${server.url}/admin/products/new`);
    const productName = page.getByLabel('Name', { exact: true });
    await productName.waitFor();
    expect(Number(await productName.getAttribute('maxlength'))).toBe(
      prop(ProductCreateBody, 'name').maxLength,
    );
    await page.goto(`${server.url}/admin/settings`);
    const mailFrom = page.locator('input[name="mail_from"]');
    await mailFrom.waitFor();
    const mailFromLimit = prop(Settings, 'mail_from');
    expect(Number(await mailFrom.getAttribute('maxlength'))).toBe(
      mailFromLimit.maxLength ?? mailFromLimit.anyOf?.find((m) => m.maxLength)?.maxLength,
    );
  });

  it('the store’s checkout shows a malformed card number at its field and makes no order', async () => {
    expect((await api('PATCH', '/settings', { checkout_rate_limit: 1000 })).status).toBe(200);
    const product = await api<{ id: number; slug: string }>('POST', '/products', {
      name: 'Card Kit',
      price: '9.00',
    });
    await page.goto(`${server.url}/products/${product.body.slug}`);
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${server.url}/cart`);
    await page.goto(`${server.url}/checkout`);
    await page.locator('#billing_first_name').waitFor();
    await page.fill('#billing_first_name', 'Ada');
    await page.fill('#billing_last_name', 'Byron');
    await page.selectOption('#billing_country', 'GB');
    await page.fill('#billing_email', 'ada.card@example.com');
    await page.getByLabel('Card (test gateway)').check();
    const before = await orderCount();
    // One digit off a good number: the checksum fails.
    await page.fill('#card_number', '4242 4242 4242 4241');
    await page.getByRole('button', { name: 'Place order' }).click();
    await expect
      .poll(() => page.locator('#card_number-error').getAttribute('data-code'))
      .toBe('invalid_card_number');
    expect(await page.locator('#card_number').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#card_number-error').isVisible()).toBe(true);
    expect(await page.locator('#store-alert').getAttribute('data-code')).toBe('invalid_card_number');
    expect(await page.locator('#card_number').evaluate(FOCUSED)).toBe(true);
    expect(await orderCount()).toBe(before);
    // Corrected, the order is placed and paid.
    await page.fill('#card_number', '4242 4242 4242 4242');
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.waitForURL(/\/checkout\/order-received\/\d+\?key=/);
    expect(await orderCount()).toBe(before + 1);
  });
});
