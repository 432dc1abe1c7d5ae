import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, pkg, protectedFixture } from '../distribution/helpers.js';
import {
  admin,
  adminOk,
  advanceClock,
  createTestApp,
  expectError,
  type FormValue,
  postForm,
  type TestApp,
} from '../helpers/app.js';
import { createCustomer, createProduct, softwareProduct } from '../helpers/factories.js';

// A product's icon and banner, as WordPress shows them (docs/catalogue.md, 'Icons and banners';
// docs/distribution.md, section 10): uploaded once, cut to WordPress's sizes, named in the
// update check, the package answer and the changelog, served with immutable cache headers.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
});
afterAll(async () => t.close());

/** A picture of one colour (each `r` a different upload, hence a different hash). */
const picture = (r: number, width = 300, height = 200) =>
  sharp({ create: { width, height, channels: 3, background: { r, g: 80, b: 120 } } })
    .png()
    .toBuffer();
const filePart = async (r: number): Promise<[string, FormValue][]> => [
  ['file', { filename: 'a.png', content: await picture(r), type: 'image/png' }],
];
const url = (productId: number, kind: 'icon' | 'banner') => `/v1/software/products/${productId}/${kind}`;

async function upload(productId: number, kind: 'icon' | 'banner', r: number) {
  const res = await postForm(t, url(productId, kind), await filePart(r));
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { product_id: number; icon: string | null; banner: string | null };
}

/** The path of an absolute URL on the store's origin (the app is asked in-process). */
function pathOf(absolute: string): string {
  expect(absolute.startsWith(`${t.app.services.urls.origin}/media/`), absolute).toBe(true);
  return new URL(absolute).pathname;
}
const get = (absolute: string) => t.app.inject({ method: 'GET', url: pathOf(absolute) });

async function dimensions(absolute: string) {
  const res = await get(absolute);
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('image/webp');
  expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  const meta = await sharp(res.rawPayload).metadata();
  return { format: meta.format, width: meta.width, height: meta.height };
}

/** The software configuration as stored, and the product's audit events of `update_software`. */
const config = (productId: number) => adminOk(t, 'GET', `/software/products/${productId}/config`);
async function softwareEvents(productId: number) {
  return t.app.services.database.db
    .selectFrom('audit_events')
    .select(['action', 'changes'])
    .where('entity_type', '=', 'product')
    .where('entity_id', '=', productId)
    .where('action', '=', 'update_software')
    .orderBy('id')
    .execute();
}

/** The product cache of the update check lasts a second (src/modules/distribution/preflight.ts). */
const slugCacheExpiry = () => new Promise((resolve) => setTimeout(resolve, 1100));

describe('icons and banners', () => {
  it('an upload is cut to WordPress’s sizes, named in check, package and changelog, and served for a year', async () => {
    const f = await protectedFixture(t);
    const origin = t.app.services.urls.origin;

    // None yet: empty maps.
    const before = await call(t, 'POST', '/software/check', { slug: f.slug, version: '0.9.0', ...f.creds });
    expect(before.json()).toMatchObject({ icons: {}, banners: {} });

    const afterIcon = await upload(f.product.id, 'icon', 10);
    expect(afterIcon.icon).toMatch(/^[0-9a-f]{32}$/);
    expect(afterIcon.banner).toBeNull();
    const { icon, banner } = await upload(f.product.id, 'banner', 20);
    expect(icon).toBe(afterIcon.icon);
    expect(await config(f.product.id)).toMatchObject({ icon, banner });

    const icons = {
      '1x': `${origin}/media/${icon}-icon-128.webp`,
      '2x': `${origin}/media/${icon}-icon-256.webp`,
    };
    const banners = {
      low: `${origin}/media/${banner}-banner-772x250.webp`,
      high: `${origin}/media/${banner}-banner-1544x500.webp`,
    };
    await slugCacheExpiry();
    const check = await call(t, 'POST', '/software/check', { slug: f.slug, version: '0.9.0', ...f.creds });
    expect(check.statusCode).toBe(200);
    expect(check.json()).toMatchObject({ update_available: true, icons, banners });
    const update = await pkg(t, { slug: f.slug, purpose: 'update', current_version: '0.9.0', ...f.creds });
    expect(update.statusCode).toBe(200);
    expect(update.json()).toMatchObject({ icons, banners });
    const log = await call(t, 'GET', `/software/changelog?slug=${f.slug}`);
    expect(log.json().versions).toMatchObject([{ version: '1.0.0', icons, banners }]);
    // Nothing offered (up to date): the product's pictures all the same, as its name is.
    const current = await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.0.0', ...f.creds });
    expect(current.json()).toMatchObject({ update_available: false, icons, banners });

    // A 300×200 picture becomes exactly each box (cover), enlarged where the box is bigger.
    expect(await dimensions(icons['1x'])).toEqual({ format: 'webp', width: 128, height: 128 });
    expect(await dimensions(icons['2x'])).toEqual({ format: 'webp', width: 256, height: 256 });
    expect(await dimensions(banners.low)).toEqual({ format: 'webp', width: 772, height: 250 });
    expect(await dimensions(banners.high)).toEqual({ format: 'webp', width: 1544, height: 500 });

    // Each change is recorded on the product as a change of its software configuration.
    const events = await softwareEvents(f.product.id);
    // (The first events are the fixture's own configuration: slug and software_enabled.)
    expect(events.slice(-2).map((e) => JSON.parse(e.changes))).toEqual([
      { icon: { before: null, after: icon } },
      { banner: { before: null, after: banner } },
    ]);
  });

  it('replace and remove: the answers follow, old files go once past the grace period, the current stay', async () => {
    const f = await protectedFixture(t);
    const first = (await upload(f.product.id, 'icon', 30)).icon!;
    const banner = (await upload(f.product.id, 'banner', 40)).banner!;
    const second = (await upload(f.product.id, 'icon', 50)).icon!;
    expect(second).not.toBe(first);

    await slugCacheExpiry();
    const check = await call(t, 'POST', '/software/check', { slug: f.slug, version: '0.9.0', ...f.creds });
    expect(check.json().icons['1x']).toContain(`/media/${second}-icon-128.webp`);

    // Past the grace period, the next change prunes: the replaced icon goes, what is used stays.
    await advanceClock(t, 3601);
    const other = await softwareProduct(t);
    const third = (await upload(other.id, 'icon', 60)).icon!;
    const status = async (hash: string, suffix: string) =>
      (await t.app.inject({ method: 'GET', url: `/media/${hash}-${suffix}.webp` })).statusCode;
    expect(await status(first, 'icon-128')).toBe(404);
    expect(await status(first, 'icon-256')).toBe(404);
    for (const suffix of ['icon-128', 'icon-256']) expect(await status(second, suffix)).toBe(200);
    for (const suffix of ['banner-772x250', 'banner-1544x500'])
      expect(await status(banner, suffix)).toBe(200);
    expect(await status(third, 'icon-128')).toBe(200);

    // Removed: the answers say {} and, past the grace period, the files go.
    const removed = await adminOk(t, 'DELETE', `/software/products/${f.product.id}/icon`);
    expect(removed).toMatchObject({ icon: null, banner });
    await slugCacheExpiry();
    const after = await call(t, 'POST', '/software/check', { slug: f.slug, version: '0.9.0', ...f.creds });
    expect(after.json()).toMatchObject({ icons: {}, banners: { low: expect.stringContaining(banner) } });
    await advanceClock(t, 3601);
    expect((await admin(t, 'DELETE', `/software/products/${other.id}/banner`)).statusCode).toBe(200);
    expect(await status(second, 'icon-128')).toBe(404);
    expect(await status(banner, 'banner-772x250')).toBe(200);
    expect(await status(third, 'icon-256')).toBe(200);

    const events = (await softwareEvents(f.product.id)).map((e) => JSON.parse(e.changes));
    expect(events.at(-1)).toEqual({ icon: { before: second, after: null } });
  });

  it('bad input answers its code and changes nothing', async () => {
    const p = await softwareProduct(t);
    const { icon } = await upload(p.id, 'icon', 70);
    const eventsBefore = (await softwareEvents(p.id)).length;
    const cases: [[string, FormValue][], number, string][] = [
      [
        [['file', { filename: 'a.png', content: Buffer.from('not an image'), type: 'image/png' }]],
        415,
        'image_not_supported',
      ],
      [
        [
          [
            'file',
            {
              filename: 'a.svg',
              content: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"></svg>'),
              type: 'image/svg+xml',
            },
          ],
        ],
        415,
        'image_not_supported',
      ],
      [
        [
          [
            'file',
            { filename: 'big.png', content: Buffer.alloc(10 * 1024 * 1024 + 1, 1), type: 'image/png' },
          ],
        ],
        413,
        'image_too_large',
      ],
      [
        [['picture', { filename: 'a.png', content: await picture(71), type: 'image/png' }]],
        400,
        'invalid_parameters',
      ],
      [[['file', { filename: 'a.png', content: Buffer.alloc(0), type: 'image/png' }]], 400, 'image_required'],
    ];
    for (const kind of ['icon', 'banner'] as const) {
      for (const [fields, status, code] of cases)
        expectError(await postForm(t, url(p.id, kind), fields), status, code);
      // Not multipart at all.
      expectError(
        await admin(t, 'POST', `/software/products/${p.id}/${kind}`, { file: 'x' }),
        415,
        'rest_unsupported_media_type',
      );
      // A product that does not exist, for an upload and a removal.
      expectError(await postForm(t, url(2147483000, kind), await filePart(72)), 404, 'product_not_found');
      expectError(
        await admin(t, 'DELETE', `/software/products/2147483000/${kind}`),
        404,
        'product_not_found',
      );
      expectError(await admin(t, 'DELETE', `/software/products/0/${kind}`), 400, 'rest_invalid_param');
    }
    expect(await config(p.id)).toMatchObject({ icon, banner: null });
    expect((await softwareEvents(p.id)).length).toBe(eventsBefore);
  });

  it('anonymous callers get 401 and customers 403; nothing changes', async () => {
    const p = await createProduct(t);
    const customer = await createCustomer(t);
    for (const kind of ['icon', 'banner'] as const) {
      expectError(await postForm(t, url(p.id, kind), await filePart(80), {}), 401, 'rest_not_logged_in');
      expectError(await t.app.inject({ method: 'DELETE', url: url(p.id, kind) }), 401, 'rest_not_logged_in');
      expectError(
        await postForm(t, url(p.id, kind), await filePart(80), customer.headers),
        403,
        'rest_forbidden',
      );
      expectError(
        await t.app.inject({ method: 'DELETE', url: url(p.id, kind), headers: customer.headers }),
        403,
        'rest_forbidden',
      );
    }
    expect(await config(p.id)).toMatchObject({ icon: null, banner: null });
  });

  it('a file name outside the sizes is not served', async () => {
    const p = await softwareProduct(t);
    const { icon } = await upload(p.id, 'icon', 90);
    expect((await t.app.inject({ method: 'GET', url: `/media/${icon}-icon-128.webp` })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: `/media/${icon}-icon-64.webp` })).statusCode).toBe(404);
  });
});
