import { describe, expect, it } from 'vitest';
import { skipBrowserTests } from './chromium.js';
import { api, checkBothWidths, expectAccessible, page, server, setUpConsole } from './console.js';

/**
 * Starting a trial from a product's page (docs/selling.md, 'Trials') in a real browser: the form,
 * the key shown after it, and the refusal of a second trial for the same email; axe-core clean
 * and nothing wider than the screen at 1280 and 390 px. SAVE_SCREENSHOTS=1 writes
 * docs/screenshots/store-trial-*.png.
 */
describe.skipIf(skipBrowserTests)('a trial from the store', () => {
  setUpConsole();

  it('a visitor starts a trial with an email and is given the key; the same email again is refused', async () => {
    const product = await api<{ id: number; slug: string }>('POST', '/products', {
      name: 'Gallery Pro',
      price: '39.00',
      short_description: 'Image galleries for WordPress.',
      licensing_enabled: 'yes',
    });
    expect(product.status).toBe(201);
    const config = await api('POST', `/software/products/${product.body.id}/config`, {
      trial_days: 14,
      trial_sites: 1,
    });
    expect(config.status).toBe(200);

    await page.goto(`${server.url}/products/${product.body.slug}`);
    await page.getByRole('heading', { level: 2, name: 'Try it free for 14 days' }).waitFor();
    const button = page.getByRole('button', { name: 'Start a free trial' });
    await expect.poll(() => button.isEnabled()).toBe(true);
    await checkBothWidths('trial-form', 'store');

    await page.getByLabel('Email').fill('trial-visitor@example.com');
    await button.click();
    const result = page.getByRole('status');
    await result.getByText('Your trial has started.').waitFor();
    const key = (await result.locator('code.license-key').textContent())!;
    const stored = await api<{ licenses: { license_key: string; product_id: number }[] }>(
      'GET',
      `/licenses?product_id=${product.body.id}`,
    );
    expect(stored.body.licenses.map((l) => l.license_key)).toEqual([key]);
    await checkBothWidths('trial-started', 'store');

    // The same email again, from a fresh page: refused with the store's words and the code.
    await page.goto(`${server.url}/products/${product.body.slug}`);
    await expect.poll(() => button.isEnabled()).toBe(true);
    await page.getByLabel('Email').fill('Trial-Visitor@example.com');
    await button.click();
    const alert = page.locator('#store-alert');
    await alert.waitFor();
    expect(await alert.getAttribute('data-code')).toBe('trial_already_used');
    await expectAccessible('the refused trial at 1280 px');
  });
});
