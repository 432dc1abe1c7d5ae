import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { skipPageBrowserTests } from './chromium.js';
import {
  api,
  expectAccessible,
  expectNoSidewaysScroll,
  NARROW,
  page,
  server,
  session,
  setUpConsole,
  WIDE,
} from './console.js';

/**
 * The storefront's pages (docs/storefront.md) in a real browser, on the console's harness
 * (test/browser/console.ts: one server, one chromium): the catalogue and a product page, branded
 * with a logo, an accent colour and a terms link; axe-core at 1280 and 390 px, nothing wider than
 * the screen, reachable by keyboard. SAVE_SCREENSHOTS=1 writes docs/screenshots/store-*.png.
 */
const DOCS_SHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
const shotsDir =
  process.env.SAVE_SCREENSHOTS === '1' ? DOCS_SHOTS : mkdtempSync(join(tmpdir(), 'tollgate-store-shots-'));
const shot = (name: string) => page.screenshot({ path: join(shotsDir, `store-${name}.png`), fullPage: true });

/** A picture to upload: a coloured gradient-ish card (a real PNG, as a store owner's screenshot). */
async function picture(width: number, height: number, rgb: [number, number, number], label: string) {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="100%" height="100%" fill="rgb(${rgb.join(',')})"/>
    <rect x="8%" y="12%" width="84%" height="76%" rx="24" fill="#ffffff" fill-opacity="0.88"/>
    <text x="50%" y="56%" font-family="sans-serif" font-size="${Math.round(height / 7)}" text-anchor="middle"
      fill="rgb(${rgb.join(',')})">${label}</text></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

async function upload(path: string, bytes: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'image/png' }), 'picture.png');
  const res = await fetch(`${server.url}/v1${path}`, {
    method: 'POST',
    headers: { cookie: session.cookie, 'x-rest-nonce': session.nonce },
    body: form,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** Both widths: axe-core clean, nothing wider than the screen at 390 px, a screenshot of each. */
async function checkBothWidths(name: string) {
  await page.setViewportSize(WIDE);
  await expectAccessible(`${name} at 1280 px`);
  await shot(`${name}-1280`);
  await page.setViewportSize(NARROW);
  await expectAccessible(`${name} at 390 px`);
  await expectNoSidewaysScroll(`${name} at 390 px`);
  await shot(`${name}-390`);
  await page.setViewportSize(WIDE);
}

describe.skipIf(skipPageBrowserTests)('the storefront in a real browser', () => {
  setUpConsole();

  it('a visitor browses the branded catalogue and opens a product page by keyboard', async () => {
    const settings = await api('PATCH', '/settings', {
      store_name: 'Northwind Plugins',
      store_accent_color: '#0f766e',
      store_terms_url: 'https://example.com/terms',
      currencies: [
        { code: 'EUR', symbol: '€', decimals: 2, rate: '0.92', rate_updated_at: new Date().toISOString() },
      ],
    });
    expect(settings.status).toBe(200);
    await upload('/settings/logo', await picture(480, 120, [15, 118, 110], 'Northwind'));

    const forms = await api<{ id: number; slug: string }>('POST', '/products', {
      name: 'Forms Pro',
      type: 'variable',
      short_description: 'Drag-and-drop forms for WordPress sites, with spam protection built in.',
      description:
        'Build contact forms, surveys and payment forms in minutes.\n\nEvery licence includes a year of updates and support.',
      licensing_enabled: 'yes',
      variations: [
        { name: 'Single site', price: '49.00', attributes: { Sites: '1' } },
        { name: 'Five sites', price: '99.00', attributes: { Sites: '5' } },
        { name: 'Agency', price: '249.00', attributes: { Sites: 'Unlimited' } },
      ],
    });
    expect(forms.status).toBe(201);
    await upload(`/products/${forms.body.id}/image`, await picture(1600, 1200, [37, 99, 235], 'Forms Pro'));
    const seo = await api<{ id: number }>('POST', '/products', {
      name: 'SEO Toolkit',
      price: '29.00',
      short_description: 'Sitemaps, meta tags and redirects.',
      subscription: { period: 'year', interval: 1 },
      type: 'subscription',
    });
    expect(seo.status).toBe(201);
    await upload(`/products/${seo.body.id}/image`, await picture(1600, 1200, [190, 24, 93], 'SEO'));
    await api('POST', '/products', {
      name: 'Backup Buddy with a rather long name that must wrap',
      price: '19.00',
    });

    await page.goto(`${server.url}/`);
    await page.getByRole('heading', { level: 1, name: 'Products' }).waitFor();
    expect(await page.locator('.store-brand').textContent()).toContain('Northwind Plugins');
    expect(await page.getByRole('link', { name: 'Terms and conditions' }).getAttribute('href')).toBe(
      'https://example.com/terms',
    );
    await checkBothWidths('catalogue');

    // Keyboard: Tab from the top of the page reaches the product's link; Enter opens its page.
    await page.goto(`${server.url}/`);
    let focused = '';
    for (let i = 0; i < 12 && focused !== 'Forms Pro'; i++) {
      await page.keyboard.press('Tab');
      focused = (await page.evaluate(
        'document.activeElement && document.activeElement.textContent',
      )) as string;
    }
    expect(focused).toBe('Forms Pro');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${server.url}/products/${forms.body.slug}`);
    await page.getByRole('heading', { level: 1, name: 'Forms Pro' }).waitFor();
    expect(await page.locator('.choices').textContent()).toContain('Five sites');
    expect(await page.locator('.choices').textContent()).toContain('EUR €91.08');
    await checkBothWidths('product');

    await page.goto(`${server.url}/products/no-such-product`);
    await page.getByRole('heading', { level: 1, name: 'Product not found' }).waitFor();
    await expectAccessible('product not found');

    // The account pages share the store's header (logo, name, Products, My licenses).
    await page.getByRole('link', { name: 'My licenses' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await page.locator('.store-brand').textContent()).toContain('Northwind Plugins');
    await checkBothWidths('sign-in');
  }, 120_000);
});
