import { describe, expect, it } from 'vitest';
import { skipPageBrowserTests } from './chromium.js';
import {
  api,
  checkBothWidths,
  expectAccessible,
  page,
  server,
  setUpConsole,
  signInInBrowser,
  tabTo,
} from './console.js';

/**
 * Test mode in a real browser (docs/admin.md, 'First hour, test mode and going live'; docs/storefront.md,
 * 'Test mode'): the banner on every console screen and every store page while the store is in test
 * mode and on none once live; the dashboard's checklist from the store's data, each step linking
 * to its field; going live by keyboard alone and by mouse; then the first live sale, paid by bank
 * transfer and marked paid by the owner. Once (SQLite), with the page tests.
 */
const BANNER = 'Test mode: no real payments';

/** Every route of console/src/App.tsx, the ones with an id given a real one. */
function consoleRoutes(ids: { product: number; license: number; order: number; customer: number }) {
  return [
    '/',
    '/licenses',
    '/licenses/new',
    `/licenses/${ids.license}`,
    '/products',
    '/products/new',
    `/products/${ids.product}`,
    `/products/${ids.product}/releases`,
    '/orders',
    `/orders/${ids.order}`,
    '/customers',
    `/customers/${ids.customer}`,
    '/subscriptions',
    '/coupons',
    '/coupons/new',
    '/tax-rates',
    '/shipping-zones',
    '/payment-gateways',
    '/webhooks',
    '/mail',
    '/storage',
    '/settings',
    '/audit',
    '/app-passwords',
  ];
}

const STORE_PAGES = ['/', '/cart', '/checkout', '/account/sign-in', '/account/forgot-password'];

async function bannerCount(): Promise<number> {
  return page.locator('.test-mode-banner').filter({ hasText: BANNER }).count();
}

/** Waits until the element with this id has the focus (the page's CSP allows no evaluated function). */
async function waitForFocus(id: string) {
  for (let i = 0; i < 100; i++) {
    if ((await page.evaluate('document.activeElement && document.activeElement.id')) === id) return;
    await page.waitForTimeout(50);
  }
  expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe(id);
}

describe.skipIf(skipPageBrowserTests)('test mode in a real browser', () => {
  setUpConsole();
  let ids: { product: number; license: number; order: number; customer: number };

  it('shows the banner on every console screen and every store page in test mode', async () => {
    const product = await api<{ id: number }>('POST', '/products', {
      name: 'Banner Kit',
      price: '10.00',
    });
    expect(product.status, JSON.stringify(product.body)).toBe(201);
    const customer = await api<{ id: number }>('POST', '/users', {
      email: 'buyer@example.com',
      password: 'buyer-password-1',
      role: 'customer',
    });
    const license = await api<{ id: number }>('POST', '/licenses', {
      product_id: product.body.id,
      user_id: customer.body.id,
    });
    const placed = await fetch(`${server.url}/v1/checkout/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        items: [{ product_id: product.body.id, qty: 1 }],
        payment_method: 'test_card',
        billing: { first_name: 'Ada', last_name: 'L', email: 'ada@example.com', country: 'GB' },
      }),
    });
    const order = (await placed.json()) as { order_id: number };
    ids = {
      product: product.body.id,
      license: license.body.id,
      order: order.order_id,
      customer: customer.body.id,
    };

    await signInInBrowser('/admin/');
    for (const route of consoleRoutes(ids)) {
      await page.goto(`${server.url}/admin${route}`);
      await page.locator('h1').first().waitFor();
      await page.locator('.test-mode-banner').filter({ hasText: BANNER }).waitFor();
      expect(await bannerCount(), route).toBe(1);
    }
    await expectAccessible('the orders screen with the banner');
    for (const path of STORE_PAGES) {
      await page.goto(`${server.url}${path}`);
      expect(await bannerCount(), path).toBe(1);
    }
    await expectAccessible('the catalogue with the banner');
  }, 180_000);

  it('the checklist shows each step from the store’s data and links to its field', async () => {
    await page.goto(`${server.url}/admin/`);
    const checklist = page.getByRole('region', { name: 'First hour' });
    await checklist.waitFor();
    const state = async (label: RegExp) =>
      (await checklist.locator('li').filter({ hasText: label }).locator('.state').textContent())?.trim();
    expect(await state(/Name the store/)).toBe('To do');
    expect(await state(/mail server/)).toBe('To do');
    expect(await state(/payment gateway/)).toBe('To do');
    expect(await state(/Buy it once/)).toBe('Done');
    await page.getByRole('note', { name: 'Mail' }).waitFor();
    await checkBothWidths('dashboard-first-hour');

    // A step's link lands on its field, focused.
    await checklist.getByRole('link', { name: /mail server/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await waitForFocus('setting-smtp_url');
    await page.goto(`${server.url}/admin/`);
    await checklist.getByRole('link', { name: /payment gateway/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Payment gateways' }).waitFor();
    await waitForFocus('gateway-bacs');

    // Enabling bank transfer without instructions asks for them first, and enables nothing.
    await page.getByRole('button', { name: 'Enable Direct bank transfer' }).click();
    await page.getByRole('alert').filter({ hasText: 'payment instructions' }).waitFor();
    expect(await page.evaluate('document.activeElement.id')).toBe('gateway-bacs-instructions');
    const gateways = await api<{ id: string; enabled: boolean }[]>('GET', '/payment-gateways');
    expect(gateways.body.find((g) => g.id === 'bacs')!.enabled).toBe(false);
    await checkBothWidths('gateways-instructions-first');
  }, 180_000);

  it('going live by keyboard alone: refused without a live gateway, then confirmed, test data deleted', async () => {
    await page.goto(`${server.url}/admin/`);
    await page.getByRole('region', { name: 'First hour' }).waitFor();
    await tabTo(`el.textContent === 'Go live' && el.tagName === 'BUTTON'`, 'the Go live button');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'cannot go live' }).waitFor();
    expect((await api<{ store_mode: string }>('GET', '/settings')).body.store_mode).toBe('test');

    // Bank transfer with its instructions, typed and enabled by keyboard.
    await page.goto(`${server.url}/admin/payment-gateways#gateway-bacs-instructions`);
    await waitForFocus('gateway-bacs-instructions');
    await page.keyboard.type('Pay to Example Ltd, IBAN GB33 BUKB 2020 1555 5555 55');
    await page.keyboard.down('Shift');
    await tabTo(
      `el.textContent.startsWith('Enable') && el.textContent.includes('Direct bank transfer')`,
      'Enable',
    );
    await page.keyboard.up('Shift');
    await page.keyboard.press('Enter');
    await page.getByText('Direct bank transfer is enabled.').waitFor();

    await page.goto(`${server.url}/admin/`);
    await page.getByRole('region', { name: 'First hour' }).waitFor();
    await tabTo(`el.textContent === 'Go live' && el.tagName === 'BUTTON'`, 'the Go live button');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Go live?' });
    await dialog.waitFor();
    expect(await dialog.getByRole('listitem').filter({ hasText: 'mail server' }).count()).toBe(1);
    expect(await dialog.getByRole('checkbox', { name: /Delete the test orders/ }).isChecked()).toBe(true);
    await checkBothWidths('go-live-confirm');
    await tabTo(
      `el.tagName === 'BUTTON' && el.textContent === 'Go live' && !!el.closest('dialog')`,
      'confirm',
    );
    await page.keyboard.press('Enter');
    await page.getByText('The store is live: payments are real.').waitFor();
    expect((await api<{ store_mode: string }>('GET', '/settings')).body.store_mode).toBe('live');
    expect((await api<unknown[]>('GET', '/orders?test=true')).body).toEqual([]);
    expect(await bannerCount()).toBe(0);
  }, 180_000);

  it('in live mode no screen and no store page shows the banner; the test card cannot be enabled', async () => {
    for (const route of consoleRoutes({ ...ids, order: ids.order })) {
      if (route.startsWith('/orders/')) continue; // the test order was deleted on going live
      await page.goto(`${server.url}/admin${route}`);
      await page.locator('h1').first().waitFor();
      expect(await bannerCount(), route).toBe(0);
    }
    await page.goto(`${server.url}/admin/payment-gateways`);
    await page.getByText('The store is live: the test card works only in test mode.').waitFor();
    expect(await page.getByRole('button', { name: 'Enable Card (test gateway)' }).isDisabled()).toBe(true);
    await checkBothWidths('gateways-live');
    for (const path of STORE_PAGES) {
      await page.goto(`${server.url}${path}`);
      // The catalogue may be kept by the browser for a minute (docs/storefront.md, 'Test mode'): reloaded.
      await page.reload();
      expect(await bannerCount(), path).toBe(0);
    }
  }, 180_000);

  it('going live by mouse, after going back to test mode', async () => {
    await api('PATCH', '/settings', { store_mode: 'test' });
    await page.goto(`${server.url}/admin/`);
    await page.locator('.test-mode-banner').filter({ hasText: BANNER }).waitFor();
    await page.getByRole('region', { name: 'First hour' }).getByRole('button', { name: 'Go live' }).click();
    const dialog = page.getByRole('dialog', { name: 'Go live?' });
    await dialog.getByRole('checkbox', { name: /Delete the test orders/ }).uncheck();
    await dialog.getByRole('button', { name: 'Go live' }).click();
    await page.getByText('The store is live: payments are real.').waitFor();
    expect((await api<{ store_mode: string }>('GET', '/settings')).body.store_mode).toBe('live');
    expect(await bannerCount()).toBe(0);
    await checkBothWidths('dashboard-live');
  }, 180_000);

  it('the first live sale: a buyer orders by bank transfer, the owner marks it paid, a real license is issued', async () => {
    const product = await api<{ id: number; slug: string }>('POST', '/products', {
      name: 'Live Kit',
      price: '29.00',
      licensing_enabled: 'yes',
    });
    expect(product.status).toBe(201);
    // The buyer, in the store: no banner, and no test card to pay with.
    await page.goto(`${server.url}/products/${product.body.slug}`);
    expect(await bannerCount()).toBe(0);
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${server.url}/cart`);
    await page.goto(`${server.url}/checkout`);
    await page.locator('#billing_first_name').waitFor();
    await page.fill('#billing_first_name', 'Lin');
    await page.fill('#billing_last_name', 'Okafor');
    await page.selectOption('#billing_country', 'GB');
    await page.fill('#billing_email', 'first.live@example.com');
    expect(await page.getByLabel('Card (test gateway)').count()).toBe(0);
    await page.getByLabel('Direct bank transfer').check();
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.waitForURL(/\/checkout\/order-received\//);
    const orderId = Number(new URL(page.url()).pathname.split('/').pop());
    const placed = (await api<{ status: string; test: boolean }>('GET', `/orders/${orderId}`)).body;
    expect(placed).toMatchObject({ status: 'on-hold', test: false });

    // The owner, in the console, marks the transfer received.
    await page.goto(`${server.url}/admin/orders/${orderId}`);
    await page.getByRole('heading', { level: 1, name: `Order #${orderId}` }).waitFor();
    await page.getByLabel('New status').selectOption('processing');
    await page.getByRole('button', { name: 'Change status' }).click();
    const issued = page.getByRole('region', { name: 'Licenses issued' }).locator('tbody tr .key');
    await issued.first().waitFor();
    const { licenses } = (
      await api<{ licenses: { order_id: number; test: boolean }[] }>('GET', '/licenses?per_page=500')
    ).body;
    expect(licenses.filter((l) => l.order_id === orderId)).toMatchObject([{ test: false }]);
    expect((await api<unknown[]>('GET', '/orders?test=false')).body.length).toBeGreaterThan(0);
  }, 180_000);
});
