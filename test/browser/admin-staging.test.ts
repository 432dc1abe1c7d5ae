import { describe, expect, it } from 'vitest';
import { identity } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { skipBrowserTests } from './chromium.js';
import { api, expectAccessible, page, server, setUpConsole, signInInBrowser } from './console.js';

/**
 * Staging sites in the console (docs/admin.md; docs/licensing.md, '2.3 Staging and development
 * sites'): the staging patterns edited on the Settings screen one a line, and a staging site's
 * badge on the license page, where it is counted apart from the slots.
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
  });
});
