import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { skipBrowserTests } from './chromium.js';
import { alertCode, api, checkBothWidths, page, server, setUpConsole, signInInBrowser } from './console.js';

/**
 * The product screen's WordPress icon and banner (docs/admin.md; the same form as the product's
 * image, console/src/ui/image-upload.tsx): refused with the server's code when not an image,
 * uploaded and shown at WordPress's size, removed.
 */
describe.skipIf(skipBrowserTests)("the console's icon and banner uploads in a real browser", () => {
  setUpConsole();
  const png = (width: number, height: number) =>
    sharp({ create: { width, height, channels: 3, background: { r: 220, g: 90, b: 30 } } })
      .png()
      .toBuffer();
  type Config = { icon: string | null; banner: string | null };

  it('icon and banner: refused when not an image, uploaded, shown, removed', async () => {
    const created = await api<{ id: number }>('POST', '/products', { name: 'Iconic Plugin', price: '10.00' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const config = async () => (await api<Config>('GET', `/software/products/${id}/config`)).body;
    await signInInBrowser(`/admin/products/${id}`);
    await page.getByRole('heading', { name: 'Icon', level: 2 }).waitFor();

    const icon = page.locator('section[aria-labelledby=icon-form]');
    await icon
      .locator('input[type=file]')
      .setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('no picture') });
    await icon.getByRole('button', { name: 'Upload icon' }).click();
    await icon.locator('[role=alert][data-code]').waitFor();
    expect(await alertCode()).toBe('image_not_supported');
    expect((await config()).icon).toBeNull();

    await icon
      .locator('input[type=file]')
      .setInputFiles({ name: 'icon.png', mimeType: 'image/png', buffer: await png(512, 512) });
    await icon.getByRole('button', { name: 'Upload icon' }).click();
    await icon.locator('img').waitFor();
    const banner = page.locator('section[aria-labelledby=banner-form]');
    await banner
      .locator('input[type=file]')
      .setInputFiles({ name: 'banner.png', mimeType: 'image/png', buffer: await png(1600, 520) });
    await banner.getByRole('button', { name: 'Upload banner' }).click();
    await banner.locator('img').waitFor();

    const stored = await config();
    expect(stored.icon).toMatch(/^[0-9a-f]{32}$/);
    expect(stored.banner).toMatch(/^[0-9a-f]{32}$/);
    expect(await icon.locator('img').getAttribute('src')).toBe(`/media/${stored.icon}-icon-128.webp`);
    expect(await banner.locator('img').getAttribute('src')).toBe(
      `/media/${stored.banner}-banner-772x250.webp`,
    );
    expect((await fetch(`${server.url}/media/${stored.banner}-banner-772x250.webp`)).status).toBe(200);
    await checkBothWidths('product-software-images');

    await icon.getByRole('button', { name: 'Remove icon' }).click();
    await waitFor(async () => (await icon.locator('img').count()) === 0, 'the icon gone from the form');
    expect(await config()).toMatchObject({ icon: null, banner: stored.banner });
  });
});
