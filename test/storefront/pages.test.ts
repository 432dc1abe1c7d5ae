import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  adminOk,
  createTestApp,
  expectError,
  postForm,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import { createProduct, publish, softwareProduct } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const page = (url: string) => t.app.inject({ method: 'GET', url });
const png = (width = 1600, height = 1200) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .png()
    .toBuffer();
const uploadImage = (productId: number, content: Buffer, type = 'image/png', filename = 'shot.png') =>
  postForm(t, `/v1/products/${productId}/image`, [['file', { filename, content, type }]]);

describe('catalogue page (/)', () => {
  it('lists published products with name, short description, base price and a link; drafts stay out', async () => {
    const p = await createProduct(t, {
      name: 'Catalogue Kit <b>',
      price: '19.50',
      short_description: 'Builds "sites" & more',
    } as never);
    const draft = await createProduct(t, { name: 'Hidden Draft Kit', status: 'draft' });
    const res = await page('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    // Same page for every visitor: a short public cache, and no cookie.
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.body).toContain(`href="/products/${p.slug}"`);
    expect(res.body).toContain('Catalogue Kit &lt;b&gt;');
    expect(res.body).toContain('Builds &quot;sites&quot; &amp; more');
    expect(res.body).toContain('$19.50');
    expect(res.body).not.toContain(draft.name);
    expect(res.body).not.toContain('<script');
  });

  it('is paginated: ?page beyond the last is 404, a malformed page is 400', async () => {
    expect((await page('/?page=999')).statusCode).toBe(404);
    for (const bad of ['0', '-1', 'abc', '1e3', '%00', '1;drop', '9999999']) {
      const res = await page(`/?page=${bad}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  it('shows the store identity: name, accent colour stylesheet, terms link', async () => {
    await setSettings(t, {
      store_name: 'Acme <Plugins>',
      store_accent_color: '#FFDD00',
      store_terms_url: 'https://example.com/terms',
    });
    const res = await page('/');
    expect(res.body).toContain('Acme &lt;Plugins&gt;');
    expect(res.body).toContain('href="/store/theme-ffdd00.css"');
    expect(res.body).toContain('href="https://example.com/terms"');
    const css = await page('/store/theme-ffdd00.css');
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    // A light accent gets dark button text and a darkened link colour.
    expect(css.body).toContain('--accent: #ffdd00');
    expect(css.body).toContain('--accent-ink: #111827');
    expect(css.body).not.toContain('--link: #ffdd00');
    for (const bad of ['theme-zzzzzz.css', 'theme-fff.css', 'theme-ffdd00.css.map', '..%2f..%2fetc']) {
      expect((await page(`/store/${bad}`)).statusCode, bad).toBe(404);
    }
    await setSettings(t, {
      store_name: 'Tollgate store',
      store_accent_color: '#1d4ed8',
      store_terms_url: '',
    });
  });
});

describe('product page (/products/<slug>)', () => {
  it('shows description paragraphs, price per currency and the variations', async () => {
    await setSettings(t, {
      currencies: [
        { code: 'EUR', symbol: '€', decimals: 2, rate: '0.5', rate_updated_at: new Date().toISOString() },
      ],
    });
    const p = await createProduct(t, {
      name: 'Variation Kit',
      type: 'variable',
      description: 'First paragraph.\n\nSecond <i>paragraph</i>.',
      variations: [
        { name: 'One site', price: '10.00', attributes: { Sites: '1' } },
        { name: 'Five sites', price: '30.00', attributes: { Sites: '5' } },
      ],
    } as never);
    expect(p.slug).toBe('variation-kit');
    const res = await page('/products/variation-kit');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    expect(res.body).toContain('<p>First paragraph.</p>');
    expect(res.body).toContain('Second &lt;i&gt;paragraph&lt;/i&gt;.');
    expect(res.body).toContain('From $10.00');
    expect(res.body).toContain('One site');
    expect(res.body).toContain('Sites: 5');
    expect(res.body).toContain('EUR €5.00');
    expect(res.body).toContain('EUR €15.00');
    expect(res.body).toContain(
      `<link rel="canonical" href="${t.app.services.urls.origin}/products/variation-kit">`,
    );
    await setSettings(t, { currencies: [] });
  });

  it('a software product shows its latest version and changelog', async () => {
    const p = await softwareProduct(t, {}, { name: 'Release Kit' });
    await publish(t, p.id, '1.0.0');
    await publish(t, p.id, '1.2.0', [['changelog', 'Faster <updates>.']]);
    const res = await page(`/products/${p.slug}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Latest version: 1.2.0');
    expect(res.body).toContain('Faster &lt;updates&gt;.');
  });

  it('is 404 for an unknown, a draft or a hostile slug, with nothing cached', async () => {
    const draft = await createProduct(t, { name: 'Draft Page Kit', status: 'draft' });
    const slugs = [
      'no-such-product',
      draft.slug,
      '..%2F..%2Fetc%2Fpasswd',
      '%3Cscript%3Ealert(1)%3C%2Fscript%3E',
      'UPPER',
      "x'%20OR%201=1--",
      'a'.repeat(150),
    ];
    for (const slug of slugs) {
      const res = await page(`/products/${slug}`);
      expect(res.statusCode, String(slug)).toBe(404);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).not.toContain('<script>');
    }
    // A NUL never gets past the input edge (docs/development.md): 400, as on every route.
    expect((await page('/products/%00')).statusCode).toBe(400);
  });
});

describe('cart items link to the product page and image', () => {
  it('permalink and image are absolute URLs that answer 200', async () => {
    const p = await createProduct(t, { name: 'Linked Kit', price: '5.00' });
    await uploadImage(p.id, await png());
    const withImage = await t.app.inject({
      method: 'POST',
      url: '/v1/cart/add',
      payload: { product_id: p.id },
    });
    const plain = await createProduct(t, { name: 'Plain Kit', price: '5.00' });
    const cookie = withImage.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const added = await t.app.inject({
      method: 'POST',
      url: '/v1/cart/add',
      headers: { cookie },
      payload: { product_id: plain.id },
    });
    expect(added.statusCode).toBe(200);
    const items = added.json().cart.items as { permalink: string; image: string }[];
    const origin = t.app.services.urls.origin;
    expect(items.map((i) => i.permalink)).toEqual([
      `${origin}/products/linked-kit`,
      `${origin}/products/plain-kit`,
    ]);
    expect(items[0]!.image).toMatch(new RegExp(`^${origin}/media/[0-9a-f]{32}-400\\.webp$`));
    expect(items[1]!.image).toBe(`${origin}/media/placeholder.svg`);
    for (const item of items) {
      for (const url of [item.permalink, item.image]) {
        const res = await page(new URL(url).pathname);
        expect(res.statusCode, url).toBe(200);
      }
    }
  });
});

describe('product images', () => {
  it('an upload is resized to 400 and 1200 px WebP without metadata, served immutable under /media', async () => {
    const p = await createProduct(t, { name: 'Image Kit' });
    const withExif = await sharp(await png(2400, 1800))
      .withMetadata({ exif: { IFD0: { Copyright: 'secret-location' } } })
      .jpeg()
      .toBuffer();
    const res = await uploadImage(p.id, withExif, 'image/jpeg', 'photo.jpg');
    expect(res.statusCode).toBe(200);
    const image = res.json().image as string;
    expect(image).toMatch(/^[0-9a-f]{32}$/);
    for (const width of [400, 1200]) {
      const file = await page(`/media/${image}-${width}.webp`);
      expect(file.statusCode).toBe(200);
      expect(file.headers['content-type']).toBe('image/webp');
      expect(file.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(file.headers['x-content-type-options']).toBe('nosniff');
      const meta = await sharp(file.rawPayload).metadata();
      expect(meta.format).toBe('webp');
      expect(meta.width).toBe(width);
      expect(meta.exif).toBeUndefined();
      expect(file.rawPayload.includes(Buffer.from('secret-location'))).toBe(false);
    }
    const product = await page(`/products/${p.slug}`);
    expect(product.body).toContain(`/media/${image}-1200.webp`);
    // A small picture is not enlarged.
    const small = await uploadImage(p.id, await png(300, 200));
    const meta = await sharp((await page(`/media/${small.json().image}-1200.webp`)).rawPayload).metadata();
    expect(meta.width).toBe(300);
    // Removed: the product page falls back to the placeholder.
    const removed = await admin(t, 'DELETE', `/products/${p.id}/image`);
    expect(removed.statusCode).toBe(200);
    expect(removed.json().image).toBeNull();
  });

  it('refuses non-images, SVG, oversize files and malformed forms with specific codes, changing nothing', async () => {
    const p = await createProduct(t, { name: 'Refusal Kit' });
    const cases: [[string, { filename: string; content: Buffer; type: string }][], number, string][] = [
      [
        [['file', { filename: 'a.png', content: Buffer.from('not an image at all'), type: 'image/png' }]],
        415,
        'image_not_supported',
      ],
      [
        [
          [
            'file',
            { filename: 'a.zip', content: Buffer.from('PK\u0003\u0004rest'), type: 'application/zip' },
          ],
        ],
        415,
        'image_not_supported',
      ],
      [
        [
          [
            'file',
            {
              filename: 'a.svg',
              content: Buffer.from(
                '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
              ),
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
        [['file', { filename: 'empty.png', content: Buffer.alloc(0), type: 'image/png' }]],
        400,
        'image_required',
      ],
      [
        [['picture', { filename: 'a.png', content: Buffer.from('x'), type: 'image/png' }]],
        400,
        'invalid_parameters',
      ],
    ];
    for (const [fields, status, code] of cases) {
      expectError(await postForm(t, `/v1/products/${p.id}/image`, fields), status, code);
    }
    // A header that reads as a huge picture (decompression bomb) is refused before decoding.
    const bomb = await sharp({
      create: { width: 10000, height: 10000, channels: 3, background: { r: 0, g: 0, b: 0 } },
    })
      .png({ compressionLevel: 9 })
      .toBuffer();
    expectError(await uploadImage(p.id, bomb), 413, 'image_too_large');
    // A field without a file, JSON and no body at all.
    expectError(
      await postForm(t, `/v1/products/${p.id}/image`, [['file', 'text']]),
      400,
      'invalid_parameters',
    );
    expectError(
      await admin(t, 'POST', `/products/${p.id}/image`, { file: 'x' }),
      415,
      'rest_unsupported_media_type',
    );
    expectError(
      await postForm(t, '/v1/products/999999/image', [
        ['file', { filename: 'a.png', content: await png(10, 10), type: 'image/png' }],
      ]),
      404,
      'product_not_found',
    );
    expectError(
      await postForm(t, '/v1/products/abc/image', [
        ['file', { filename: 'a.png', content: await png(10, 10), type: 'image/png' }],
      ]),
      400,
      'rest_invalid_param',
    );
    const after = await adminOk<{ image: string | null }>(t, 'GET', `/products/${p.id}`);
    expect(after.image).toBeNull();
  });

  it('/media answers 404 for names it did not make', async () => {
    for (const name of [
      'x.webp',
      `${'0'.repeat(32)}-400.webp`,
      `${'0'.repeat(32)}-800.webp`,
      '..%2F..%2Fpackage.json',
    ]) {
      expect((await page(`/media/${name}`)).statusCode, name).toBe(404);
    }
    const svg = await page('/media/placeholder.svg');
    expect(svg.statusCode).toBe(200);
    expect(svg.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(svg.headers['x-content-type-options']).toBe('nosniff');
  });

  it('the logo: uploaded, shown in the header of the store pages, removed', async () => {
    const res = await postForm(t, '/v1/settings/logo', [
      ['file', { filename: 'logo.png', content: await png(800, 200), type: 'image/png' }],
    ]);
    expect(res.statusCode).toBe(200);
    const logo = res.json().store_logo as string;
    expect(logo).toMatch(/^[0-9a-f]{32}$/);
    expect((await adminOk<{ store_logo: string }>(t, 'GET', '/settings')).store_logo).toBe(logo);
    expect((await page('/')).body).toContain(`src="/media/${logo}-400.webp"`);
    expect((await page(`/media/${logo}-400.webp`)).statusCode).toBe(200);
    expectError(
      await postForm(t, '/v1/settings/logo', [
        ['file', { filename: 'a.txt', content: Buffer.from('hello'), type: 'text/plain' }],
      ]),
      415,
      'image_not_supported',
    );
    expect((await admin(t, 'DELETE', '/settings/logo')).json()).toEqual({ store_logo: '' });
    expect((await page('/')).body).not.toContain(`/media/${logo}`);
  });

  it('anonymous callers get 401 and customers 403 on the image routes', async () => {
    const p = await createProduct(t);
    const file: [string, { filename: string; content: Buffer; type: string }][] = [
      ['file', { filename: 'a.png', content: await png(10, 10), type: 'image/png' }],
    ];
    expectError(await postForm(t, `/v1/products/${p.id}/image`, file, {}), 401, 'rest_not_logged_in');
    expectError(await postForm(t, '/v1/settings/logo', file, {}), 401, 'rest_not_logged_in');
    expectError(
      await t.app.inject({ method: 'DELETE', url: `/v1/products/${p.id}/image` }),
      401,
      'rest_not_logged_in',
    );
    expectError(
      await t.app.inject({ method: 'DELETE', url: '/v1/settings/logo' }),
      401,
      'rest_not_logged_in',
    );
  });
});

describe('the account pages wear the store header', () => {
  it('sign-in shows the store name and logo, links to the catalogue and to forgot-password', async () => {
    await setSettings(t, { store_name: 'Header Test Store' });
    const res = await page('/account/sign-in');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<header class="store-top">');
    expect(res.body).toContain('Header Test Store');
    expect(res.body).toContain('<title>Sign in · Header Test Store</title>');
    expect(res.body).toContain('href="/account/forgot-password"');
    expect(res.body).toMatch(/href="\/store\/theme-[0-9a-f]{6}\.css"/);
    expect(res.headers['cache-control']).toBe('no-store');
    await setSettings(t, { store_name: 'Tollgate store' });
  });
});
