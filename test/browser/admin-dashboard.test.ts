import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { skipBrowserTests } from './chromium.js';
import {
  api,
  enableOfflineGateways,
  expectAccessible,
  expectNoSidewaysScroll,
  NARROW,
  page,
  server,
  setUpConsole,
  shot,
  signInInBrowser,
  WIDE,
} from './console.js';

/**
 * The console's Dashboard (docs/admin.md, 'Dashboard') in a real browser: the console's home,
 * first in the menu; its figures from GET /v1/reports/dashboard, its charts with their tables,
 * the period in the address, axe-clean and no wider than the screen at 1280 and 390 px.
 */
describe.skipIf(skipBrowserTests)('the console\u2019s dashboard', () => {
  setUpConsole();

  const billing = (n: number) => ({
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: `buyer-${n}@example.com`,
    address_1: '1 Analytical Row',
    city: 'London',
    postcode: 'N1 1AA',
    country: 'GB',
  });

  /** An order placed by a guest and marked paid by the owner (processing issues its license). */
  async function paidOrder(productId: number, currency: 'USD' | 'EUR', n: number) {
    const res = await fetch(`${server.url}/v1/checkout/submit${currency === 'EUR' ? '?currency=EUR' : ''}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        items: [{ product_id: productId, qty: 1 }],
        payment_method: 'bacs',
        billing: billing(n),
      }),
    });
    const body = (await res.json()) as { order_id: number };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect((await api('POST', `/orders/${body.order_id}/status`, { status: 'processing' })).status).toBe(200);
  }

  it('is the console\u2019s home and shows the store\u2019s figures, charts and their tables', async () => {
    const product = await api<{ id: number }>('POST', '/products', {
      name: 'Forms Pro',
      price: '49.00',
      activation_limit: 3,
    });
    expect(product.status).toBe(201);
    // Real sales: a live store paid by bank transfer (test orders are left out of the figures).
    await enableOfflineGateways();
    expect((await api('PATCH', '/settings', { store_mode: 'live' })).status).toBe(200);
    const settings = await api('PATCH', '/settings', {
      currencies: [
        { code: 'EUR', symbol: '€', decimals: 2, rate: '0.5', rate_updated_at: new Date().toISOString() },
      ],
    });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    await paidOrder(product.body.id, 'USD', 1);
    await paidOrder(product.body.id, 'USD', 2);
    await paidOrder(product.body.id, 'EUR', 3);
    const licenses = await api<{ licenses: { license_key: string }[] }>(
      'GET',
      `/licenses?product_id=${product.body.id}`,
    );
    expect(licenses.body.licenses).toHaveLength(3);
    const activated = await fetch(`${server.url}/v1/licenses/activate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        license_key: licenses.body.licenses[0]!.license_key,
        domain: 'shop.example.com',
        installation_id: randomUUID(),
      }),
    });
    expect(activated.status).toBe(200);
    const report = await api<{ sales: { currency: string; total: string }[] }>('GET', '/reports/dashboard');
    const eur = report.body.sales.find((s) => s.currency === 'EUR')!.total;

    await signInInBrowser('/admin/');
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' }).getByRole('link');
    expect(await nav.first().textContent()).toBe('Dashboard');
    expect(await nav.first().getAttribute('aria-current')).toBe('page');

    const figure = (label: string) =>
      page.locator('.figure').filter({ has: page.locator('.figure-label', { hasText: label }) });
    await figure('Sales').waitFor();
    expect(await figure('Sales').locator('.figure-value').textContent()).toBe(`${eur} EUR · 98.00 USD`);
    expect(await figure('New licenses').locator('.figure-value').textContent()).toBe('3');
    expect(await figure('Active activations').locator('.figure-value').textContent()).toBe('1');
    expect(await figure('Failing webhooks').locator('.figure-value').textContent()).toBe('0');
    expect(await figure('Releases waiting as drafts').locator('.figure-value').textContent()).toBe('0');
    // No renewal, upgrade or subscription yet (docs/selling.md, 'Reports'): hand-computed in
    // test/reports/selling.test.ts.
    expect(await figure('Renewal rate').locator('.figure-value').textContent()).toBe('–');
    expect(await figure('Upgrade revenue').locator('.figure-value').textContent()).toBe('0');
    expect(await figure('Monthly recurring revenue').locator('.figure-value').textContent()).toBe('0');
    expect(
      await figure('Failing webhooks').getByRole('link', { name: 'Webhooks' }).getAttribute('href'),
    ).toBe('/admin/webhooks');
    expect(await page.locator('.chart canvas').count()).toBe(3);

    // The text alternative: each chart's figures as a table, today first.
    const sales = page.getByRole('figure', { name: /Sales per day/ });
    await sales.getByText('Show the figures as a table').click();
    const today = sales.getByRole('table').getByRole('row').nth(1);
    expect(await today.getByRole('cell').nth(1).textContent()).toBe(`${eur} (1 order)`);
    expect(await today.getByRole('cell').nth(2).textContent()).toBe('98.00 (2 orders)');
    expect(await sales.getByRole('table').getByRole('row').count()).toBe(31);
    const activity = page.getByRole('figure', { name: /New licenses and activations/ });
    await activity.getByText('Show the figures as a table').click();
    const activityToday = activity.getByRole('table').getByRole('row').nth(1);
    expect(await activityToday.getByRole('cell').nth(1).textContent()).toBe('3');
    expect(await activityToday.getByRole('cell').nth(2).textContent()).toBe('1');

    // The period is kept in the address.
    await page.getByLabel('Period').selectOption('7');
    await waitFor(async () => new URL(page.url()).search === '?days=7', 'the period in the address');
    await waitFor(
      async () => (await sales.getByRole('table').getByRole('row').count()) === 8,
      'seven days in the table',
    );
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    expect(await page.getByLabel('Period').inputValue()).toBe('7');
    await page.goto(`${server.url}/admin/`);
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
  }, 120_000);

  it('at 1280 and 390 px: no serious or critical axe finding, nothing wider than the screen', async () => {
    for (const viewport of [WIDE, NARROW]) {
      await page.setViewportSize(viewport);
      await page.goto(`${server.url}/admin/`);
      await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
      await waitFor(async () => (await page.locator('.chart canvas').count()) === 3, 'the charts drawn');
      await page
        .getByRole('figure', { name: /Sales per day/ })
        .getByText('Show the figures as a table')
        .click();
      // The charts follow their container's width.
      const widths = (await page.evaluate(
        `[...document.querySelectorAll('.chart canvas')].map((c) => c.getBoundingClientRect().right)`,
      )) as number[];
      for (const right of widths) expect(right).toBeLessThanOrEqual(viewport.width);
      await expectAccessible(`the dashboard at ${viewport.width} px`);
      await expectNoSidewaysScroll(`the dashboard at ${viewport.width} px`);
      await shot(`dashboard-${viewport.width}`);
    }
    await page.setViewportSize(WIDE);
  }, 120_000);
});
