import { describe, expect, it } from 'vitest';
import { identity } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { skipBrowserTests } from './chromium.js';
import {
  alertCode,
  api,
  checkBothWidths,
  context,
  page,
  server,
  setUpConsole,
  signInInBrowser,
} from './console.js';

const CUSTOMER = { email: 'ada.stale@example.com', password: 'ada-password-1' };
const HOUR = 3600;

/**
 * Last seen and stale activations in a real browser (docs/admin.md; docs/licensing.md, 'Last seen
 * and stale activations'): the setting on the Settings screen (empty = off, a refused value shown),
 * the Last seen column and a released site on the license page, Tollgate itself as the actor on
 * the Audit screen, and the customer's My licenses.
 */
describe.skipIf(skipBrowserTests)('last seen and stale activations in a real browser', () => {
  setUpConsole({ env: { TEST_CLOCK: '1' } });

  it('edits stale_activation_days: a refused value is shown and changes nothing; empty turns it off', async () => {
    await signInInBrowser('/admin/settings');
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const days = page.getByLabel('Release sites not seen for (days)');
    expect(await days.inputValue()).toBe('');
    await days.fill('0');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('[role=alert][data-code]').first().waitFor();
    expect(await alertCode()).toBe('rest_invalid_param');
    expect(
      (await api<{ stale_activation_days: number | null }>('GET', '/settings')).body.stale_activation_days,
    ).toBeNull();
    await days.fill('30');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('The settings are saved.').waitFor();
    expect(
      (await api<{ stale_activation_days: number | null }>('GET', '/settings')).body.stale_activation_days,
    ).toBe(30);
    await days.fill('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('The settings are saved.').waitFor();
    expect(
      (await api<{ stale_activation_days: number | null }>('GET', '/settings')).body.stale_activation_days,
    ).toBeNull();
  });

  it('shows Last seen and a released site on the license page, Tollgate on the Audit screen and My licenses', async () => {
    const customer = await api<{ id: number }>('POST', '/users', { ...CUSTOMER, role: 'customer' });
    expect(customer.status).toBe(201);
    const product = await api<{ id: number }>('POST', '/products', {
      name: 'Forms Pro',
      price: '10.00',
      activation_limit: 2,
    });
    const license = await api<{ id: number; license_key: string }>('POST', '/licenses', {
      product_id: product.body.id,
      user_id: customer.body.id,
    });
    expect(license.status).toBe(201);
    const kept = identity('shop.example.com');
    const gone = identity('old-shop.example.com');
    const call = (path: string, site: object) =>
      fetch(`${server.url}/v1${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ license_key: license.body.license_key, ...site }),
      });
    for (const site of [kept, gone]) expect((await call('/licenses/activate', site)).status).toBe(200);
    expect((await api('PATCH', '/settings', { stale_activation_days: 1 })).status).toBe(200);
    // One site keeps validating; the other is not heard from again.
    expect((await api('POST', '/test-clock', { advance_seconds: 20 * HOUR })).status).toBe(200);
    expect((await call('/licenses/validate', kept)).status).toBe(200);
    expect((await api('POST', '/test-clock', { advance_seconds: 10 * HOUR })).status).toBe(200);
    await waitFor(async () => {
      const view = await api<{ activations: { domain_normalized: string; status: string }[] }>(
        'GET',
        `/licenses/${license.body.id}`,
      );
      return (
        view.body.activations.find((a) => a.domain_normalized === 'old-shop.example.com')?.status ===
        'deactivated'
      );
    }, 'the unseen site released');

    await page.goto(`${server.url}/admin/licenses/${license.body.id}`);
    const rows = page.getByRole('region', { name: 'Activations' }).locator('tbody tr');
    await waitFor(async () => (await rows.count()) === 2, 'both activations are listed');
    await page
      .getByRole('columnheader', { name: /Last seen/ })
      .first()
      .waitFor();
    expect(
      await rows.filter({ hasText: 'old-shop.example.com' }).getByText('released: not seen').count(),
    ).toBe(1);
    await checkBothWidths('license-last-seen');

    await page.goto(`${server.url}/admin/audit`);
    await page.getByText('Tollgate (stale activation)').first().waitFor();
    await checkBothWidths('audit-stale-activation');

    await context.clearCookies();
    await page.goto(`${server.url}/account/licenses`);
    await page.locator('#email').waitFor();
    await page.fill('#email', CUSTOMER.email);
    await page.fill('#password', CUSTOMER.password);
    await page.locator('#password').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'My licenses' }).waitFor();
    const released = page.locator('tr', { hasText: 'old-shop.example.com' });
    expect(await released.locator('.last-seen').textContent()).toMatch(
      /^Last seen \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
    );
    expect(await released.locator('.badge', { hasText: 'Released: not seen' }).count()).toBe(1);
    await checkBothWidths('account-licenses-last-seen', 'store');
  });
});
