import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, advanceClock, createTestApp, postForm, type TestApp } from '../helpers/app.js';
import { createProduct } from '../helpers/factories.js';

/**
 * Image files nothing uses any more are deleted (docs/storefront.md, 'Images'): after a product's
 * image or the logo changes, files older than the grace period (an hour) that no product and not
 * the logo points at are removed; what is in use, or younger, stays.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
});
afterAll(async () => t.close());

const colour = (r: number) =>
  sharp({ create: { width: 64, height: 48, channels: 3, background: { r, g: 40, b: 90 } } })
    .png()
    .toBuffer();
const served = async (hash: string) =>
  (await t.app.inject({ method: 'GET', url: `/media/${hash}-400.webp` })).statusCode;
async function upload(url: string, r: number) {
  const res = await postForm(t, url, [
    ['file', { filename: 'a.png', content: await colour(r), type: 'image/png' }],
  ]);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { image?: string; store_logo?: string };
}

describe('unused image files', () => {
  it('a replaced image is deleted after the grace period; the current one, the logo and other products’ stay', async () => {
    const a = await createProduct(t, { name: 'Prune A' });
    const b = await createProduct(t, { name: 'Prune B' });
    const first = (await upload(`/v1/products/${a.id}/image`, 10)).image!;
    const other = (await upload(`/v1/products/${b.id}/image`, 20)).image!;
    const logo = (await upload('/v1/settings/logo', 30)).store_logo!;

    // Replaced at once: the old file is younger than the grace period and stays for now.
    const second = (await upload(`/v1/products/${a.id}/image`, 40)).image!;
    expect(await served(first)).toBe(200);

    await advanceClock(t, 3601);
    const third = (await upload(`/v1/products/${a.id}/image`, 50)).image!;
    expect(await served(first)).toBe(404);
    for (const hash of [other, logo, third]) expect(await served(hash), hash).toBe(200);
    // `second` was replaced in this same change but is past the grace period too.
    expect(await served(second)).toBe(404);
  });

  it('removing an image or the logo deletes its files once they are old enough; the same picture re-uploaded comes back', async () => {
    const p = await createProduct(t, { name: 'Prune C' });
    const image = (await upload(`/v1/products/${p.id}/image`, 60)).image!;
    const logo = (await upload('/v1/settings/logo', 70)).store_logo!;
    await advanceClock(t, 3601);
    expect((await admin(t, 'DELETE', `/products/${p.id}/image`)).statusCode).toBe(200);
    expect(await served(image)).toBe(404);
    expect(await served(logo)).toBe(200);
    expect((await admin(t, 'DELETE', '/settings/logo')).statusCode).toBe(200);
    expect(await served(logo)).toBe(404);
    // Names are content hashes: the same upload again is stored again under the same name.
    expect((await upload(`/v1/products/${p.id}/image`, 60)).image).toBe(image);
    expect(await served(image)).toBe(200);
  });
});
