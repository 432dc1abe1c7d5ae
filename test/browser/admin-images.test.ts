import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { skipBrowserTests } from './chromium.js';
import {
  alertCode,
  api,
  expectAccessible,
  expectNoSidewaysScroll,
  NARROW,
  page,
  server,
  setUpConsole,
  signInInBrowser,
  WIDE,
} from './console.js';

/**
 * The console's two picture forms, one component (console/src/ui/image-upload.tsx): a product's
 * image and the store's logo, uploaded from the file field, refused with the server's code when the
 * file is not an image, removed; the stored picture is what the store then serves under /media/.
 */
describe.skipIf(skipBrowserTests)("the console's image and logo uploads in a real browser", () => {
  setUpConsole();
  const png = () =>
    sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 37, g: 99, b: 235 } } })
      .png()
      .toBuffer();

  /** Chooses a file in the section's file field and presses its Upload button. */
  async function uploadIn(section: string, name: string, mimeType: string, buffer: Buffer) {
    const card = page.locator(`section[aria-labelledby=${section}]`);
    await card.locator('input[type=file]').setInputFiles({ name, mimeType, buffer });
    await card.getByRole('button', { name: /^Upload / }).click();
    return card;
  }

  it("a product's image: refused when not an image, then uploaded, served, and removed", async () => {
    const created = await api<{ id: number }>('POST', '/products', {
      name: 'Pictured Plugin',
      price: '10.00',
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await signInInBrowser(`/admin/products/${id}`);
    await page.getByRole('heading', { name: 'Image', level: 2 }).waitFor();

    const card = await uploadIn('image-form', 'notes.txt', 'text/plain', Buffer.from('not a picture'));
    await card.locator('[role=alert][data-code]').waitFor();
    expect(await alertCode()).toBe('image_not_supported');
    expect((await api<{ image: string | null }>('GET', `/products/${id}`)).body.image ?? '').toBe('');

    await uploadIn('image-form', 'picture.png', 'image/png', await png());
    const img = card.locator('img.product-image');
    await img.waitFor();
    const stored = (await api<{ image: string }>('GET', `/products/${id}`)).body.image;
    expect(stored).toMatch(/\S/);
    expect(await img.getAttribute('src')).toBe(`/media/${stored}-400.webp`);
    expect((await fetch(`${server.url}/media/${stored}-400.webp`)).status).toBe(200);
    await expectAccessible('the product screen with its image');
    await page.setViewportSize(NARROW);
    await expectNoSidewaysScroll('the product screen with its image at 390 px');
    await page.setViewportSize(WIDE);

    const remove = card.getByRole('button', { name: 'Remove image' });
    await remove.focus();
    await page.keyboard.press('Enter');
    await waitFor(async () => (await img.count()) === 0, 'the image gone from the form');
    expect((await api<{ image: string | null }>('GET', `/products/${id}`)).body.image ?? '').toBe('');
  });

  it("the store's logo: uploaded from Settings, shown in the store's header, removed", async () => {
    await page.goto(`${server.url}/admin/settings`);
    await page.getByRole('heading', { name: 'Logo', level: 2 }).waitFor();
    const card = await uploadIn('logo-form', 'logo.png', 'image/png', await png());
    await card.locator('img.store-logo').waitFor();
    const logo = (await api<{ store_logo: string }>('GET', '/settings')).body.store_logo;
    expect(logo).toMatch(/\S/);
    const store = await (await fetch(`${server.url}/`)).text();
    expect(store).toContain(`/media/${logo}-`);

    await card.getByRole('button', { name: 'Remove logo' }).click();
    await waitFor(
      async () => (await card.locator('img.store-logo').count()) === 0,
      'the logo gone from the form',
    );
    expect((await api<{ store_logo: string }>('GET', '/settings')).body.store_logo).toBe('');
  });
});
