import { describe, expect, it } from 'vitest';
import { identity } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { skipBrowserTests } from './chromium.js';
import {
  api,
  checkBothWidths,
  context,
  expectAccessible,
  page,
  server,
  setUpConsole,
  signInInBrowser,
} from './console.js';

const CUSTOMER = { email: 'grace.staging@example.com', password: 'grace-password-1' };

/**
 * Staging sites in the console (docs/admin.md; docs/licensing.md, '2.3 Staging and development
 * sites'): the staging patterns edited on the Settings screen one a line, and a staging site's
 * badge on the license page, where it is counted apart from the slots, and on the customer's My
 * licenses, where "Move to another site" (by keyboard here) frees the seat in one step.
 */
describe.skipIf(skipBrowserTests)("the console's staging sites in a real browser", () => {
  setUpConsole();

  it('edits the staging patterns one a line; a refused pattern is shown and changes nothing', async () => {
    await signInInBrowser('/admin/settings');
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const patterns = page.getByLabel('Staging site patterns');
    expect((await patterns.inputValue()).split('\n')).toContain('*.wpengine.com');
    await patterns.fill('localhost\n*.test\nStaging.*\n*.QA.example.com');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('The settings are saved.').waitFor();
    expect((await api<{ staging_patterns: string[] }>('GET', '/settings')).body.staging_patterns).toEqual([
      'localhost',
      '*.test',
      'staging.*',
      '*.qa.example.com',
    ]);

    await patterns.fill('localhost\nfoo.*.com');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('[role=alert][data-code]').first().waitFor();
    expect((await api<{ staging_patterns: string[] }>('GET', '/settings')).body.staging_patterns).toEqual([
      'localhost',
      '*.test',
      'staging.*',
      '*.qa.example.com',
    ]);
  });

  it('shows a staging badge on the license page, and counts staging sites apart', async () => {
    const product = await api<{ id: number }>('POST', '/products', {
      name: 'Staging Pro',
      price: '10.00',
      activation_limit: 1,
    });
    expect(product.status).toBe(201);
    const users = await api<{ id: number }[]>('GET', '/users?role=administrator');
    const license = await api<{ id: number; license_key: string }>('POST', '/licenses', {
      product_id: product.body.id,
      user_id: users.body[0]!.id,
    });
    expect(license.status).toBe(201);
    for (const domain of ['shop.example.com', 'staging.shop.example.com']) {
      const res = await fetch(`${server.url}/v1/licenses/activate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ license_key: license.body.license_key, ...identity(domain) }),
      });
      expect(res.status).toBe(200);
    }
    await page.goto(`${server.url}/admin/licenses/${license.body.id}`);
    const rows = page.getByRole('region', { name: 'Activations' }).locator('tbody tr');
    await waitFor(async () => (await rows.count()) === 2, 'both activations are listed');
    const stagingRow = rows.filter({ hasText: 'staging.shop.example.com' });
    expect(await stagingRow.locator('.badge-staging').count()).toBe(1);
    const productionRow = rows.filter({ hasText: /^(?!.*staging\.).*shop\.example\.com/ });
    expect(await productionRow.locator('.badge-staging').count()).toBe(0);
    await page.getByText('1 active of 1, and 1 staging (not counted)').waitFor();
    await expectAccessible('a license with a staging site');
    await checkBothWidths('license-staging');
  });

  it("My licenses: the staging badge, and 'Move to another site' by keyboard frees the seat", async () => {
    const customer = await api<{ id: number }>('POST', '/users', {
      ...CUSTOMER,
      role: 'customer',
      first_name: 'Grace',
      last_name: 'Hopper',
    });
    expect(customer.status).toBe(201);
    const product = await api<{ id: number }>('POST', '/products', {
      name: 'Forms Pro',
      price: '10.00',
      activation_limit: 1,
    });
    const license = await api<{ id: number; license_key: string }>('POST', '/licenses', {
      product_id: product.body.id,
      user_id: customer.body.id,
    });
    expect(license.status).toBe(201);
    const activate = (domain: string) =>
      fetch(`${server.url}/v1/licenses/activate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ license_key: license.body.license_key, ...identity(domain) }),
      });
    for (const domain of ['shop.example.com', 'shop.test']) expect((await activate(domain)).status).toBe(200);
    // The one seat is taken: a second production site is refused until one moves.
    expect((await activate('new-shop.example.com')).status).toBe(403);

    await context.clearCookies();
    await page.goto(`${server.url}/account/licenses`);
    await page.locator('#email').waitFor();
    await page.fill('#email', CUSTOMER.email);
    await page.fill('#password', CUSTOMER.password);
    await page.locator('#password').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'My licenses' }).waitFor();
    const staging = page.locator('tr', { hasText: 'shop.test' });
    expect(await staging.locator('.badge', { hasText: 'Staging' }).count()).toBe(1);
    expect(
      await page
        .locator('tr', { hasText: 'shop.example.com' })
        .locator('.badge', { hasText: 'Staging' })
        .count(),
    ).toBe(0);
    await checkBothWidths('account-licenses-staging', 'store');

    // By keyboard: Tab from Deactivate reaches Move, and Enter submits it.
    await page.getByRole('button', { name: 'Deactivate shop.example.com' }).focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.getAttribute("aria-label")')).toBe(
      'Move to another site: shop.example.com',
    );
    await page.keyboard.press('Enter');
    await page.getByRole('status').waitFor();
    expect(new URL(page.url()).searchParams.get('notice')).toBe('moved');
    // The seat is free: the new site activates, and the staging site stays as it was.
    expect((await activate('new-shop.example.com')).status).toBe(200);
    const view = await api<{ activations: { domain_normalized: string; status: string }[] }>(
      'GET',
      `/licenses/${license.body.id}`,
    );
    expect(Object.fromEntries(view.body.activations.map((a) => [a.domain_normalized, a.status]))).toEqual({
      'shop.example.com': 'deactivated',
      'shop.test': 'active',
      'new-shop.example.com': 'active',
    });
  });
});
