import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ViesStandIn } from '../tax/helpers.js';
import { skipBrowserTests } from './chromium.js';
import {
  api,
  checkBothWidths,
  enableOfflineGateways,
  page,
  server,
  setUpConsole,
  signInInBrowser,
} from './console.js';

/**
 * VAT at the store's checkout in a real browser (docs/taxes.md): a buyer with a German address
 * and a French VAT number, against a VIES stand-in; a mistyped number refused beside its field;
 * a billing country the IP address contradicts confirmed by the buyer; reverse charge on the
 * order, its evidence on the console's order screen, and the quarter's tax report. axe-core at
 * 1280 and 390 px; SAVE_SCREENSHOTS=1 writes docs/screenshots/store-checkout-vat-*.png and
 * admin-order-tax-*.png, admin-tax-report-*.png.
 */
const vies = new ViesStandIn({ FR40303265045: 'ACME SARL' });
const env: Record<string, string> = { TRUST_PROXY: '1', VIES_TIMEOUT_MS: '2000' };

describe.skipIf(skipBrowserTests)('VAT at checkout in a real browser', () => {
  // Before the server starts (setUpConsole's own hook reads `env` then).
  beforeAll(async () => {
    env.VIES_URL = await vies.start();
  });
  afterAll(() => vies.close());
  setUpConsole({ env });

  it('a German address with a French VAT number buys with reverse charge', async () => {
    await enableOfflineGateways();
    const settings = await api('PATCH', '/settings', {
      store_mode: 'live',
      checkout_rate_limit: 1000,
      tax_regime: 'digital_services',
      tax_seller_country: 'NL',
    });
    expect(settings.status).toBe(200);
    const product = await api<{ slug: string }>('POST', '/products', { name: 'Forms Pro', price: '100.00' });
    expect(product.status).toBe(201);

    await page.goto(`${server.url}/products/${product.body.slug}`);
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${server.url}/cart`);
    await page.getByRole('link', { name: 'Proceed to checkout' }).click();
    await page.waitForURL(`${server.url}/checkout`);
    await page.locator('#billing_first_name').waitFor();
    await page.fill('#billing_first_name', 'Jeanne');
    await page.fill('#billing_last_name', 'Martin');
    // The summary's VAT follows the billing country: France's 20 %, then Germany's 19 %.
    await page.selectOption('#billing_country', 'FR');
    await page.locator('#checkout-tax', { hasText: '$20.00' }).waitFor();
    expect(await page.locator('#checkout-total').textContent()).toContain('$120.00');
    await page.selectOption('#billing_country', 'DE');
    await page.locator('#checkout-tax', { hasText: '$19.00' }).waitFor();
    expect(await page.locator('#checkout-total').textContent()).toContain('$119.00');
    await page.fill('#billing_email', 'jeanne@example.com');
    await page.locator('#pm-bacs').check();

    // A mistyped number: refused, with its code beside the field; no order.
    await page.getByLabel('EU VAT number (optional)').fill('FR 40 303 265 046');
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.locator('#store-alert[data-code=invalid_vat_number]').waitFor();
    expect(await page.locator('#vat_number-error').getAttribute('data-code')).toBe('invalid_vat_number');
    expect(await page.locator('#vat_number').getAttribute('aria-invalid')).toBe('true');
    await checkBothWidths('checkout-vat-invalid', 'store');

    // The right number, from a connection in the United Kingdom: the country must be confirmed.
    await page.setExtraHTTPHeaders({ 'x-forwarded-for': '81.2.69.142' });
    await page.getByLabel('EU VAT number (optional)').fill('FR 40 303 265 045');
    // Once the number is in, the summary drops the VAT that reverse charge removes.
    await page.getByLabel('EU VAT number (optional)').press('Tab');
    await page.locator('#checkout-tax', { hasText: '$0.00' }).waitFor();
    expect(await page.locator('.totals dt', { hasText: 'VAT' }).textContent()).toBe('VAT (reverse charge)');
    expect(await page.locator('#checkout-total').textContent()).toContain('$100.00');
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.locator('#store-alert[data-code=tax_country_unconfirmed]').waitFor();
    const confirm = page.getByLabel(/I confirm that I am in DE/);
    await confirm.waitFor();
    expect(await page.locator('#confirm_country-label').textContent()).toContain('GB');
    await checkBothWidths('checkout-vat-confirm', 'store');
    await confirm.check();
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.waitForURL(/\/checkout\/order-received\/\d+\?key=/);
    const id = Number(new URL(page.url()).pathname.split('/').pop());
    await page.setExtraHTTPHeaders({});

    const order = await api<Record<string, unknown>>('GET', `/orders/${id}`);
    expect(order.body).toMatchObject({
      total: '100.00',
      total_tax: '0.00',
      buyer_tax_id: 'FR40303265045',
      reverse_charge: true,
      tax_country: 'DE',
      tax_evidence: { billing_country: 'DE', ip_country: 'GB', country_confirmed: true },
    });
    expect((await api('POST', `/orders/${id}/status`, { status: 'processing' })).status).toBe(200);

    // The console: the order's tax and evidence, and the quarter's report listing the sale apart.
    await signInInBrowser(`/admin/orders/${id}`);
    await page.getByRole('heading', { level: 2, name: 'Tax and the buyer’s location' }).waitFor();
    const facts = await page.locator('section[aria-labelledby=order-tax]').textContent();
    expect(facts).toContain('FR40303265045');
    expect(facts).toContain('the buyer confirmed the billing country');
    await checkBothWidths('order-tax');
    await page.getByRole('link', { name: 'Tax report' }).click();
    await page.getByRole('heading', { level: 1, name: 'Tax report' }).waitFor();
    await page.getByRole('cell', { name: 'FR40303265045' }).waitFor();
    await checkBothWidths('tax-report');
  }, 240_000);
});
