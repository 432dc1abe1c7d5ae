import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { configureSoftware, createProduct } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const config = (productId: number | string, payload: unknown) =>
  t.app.inject({
    method: 'POST',
    url: `/v1/software/products/${productId}/config`,
    headers: t.adminAuth,
    payload: payload as object,
  });
const read = async (productId: number) =>
  (
    await t.app.inject({
      method: 'GET',
      url: `/v1/software/products/${productId}/config`,
      headers: t.adminAuth,
    })
  ).json();

describe('software configuration', () => {
  it('starts from defaults: a slug from the name, default template, automatic storage, distribution off', async () => {
    const p = await createProduct(t, { name: 'Défaults Pro!', licensing_enabled: 'no' });
    expect(await read(p.id)).toEqual({
      product_id: p.id,
      // The storefront's address of the product (docs/storefront.md).
      slug: 'defaults-pro',
      filename_template: '{slug}-{version}.zip',
      storage_driver: '',
      licensing_enabled: 'no',
      software_enabled: 'no',
      icon: null,
      banner: null,
      // No trial unless one is configured (docs/selling.md, 'Trials').
      trial_days: null,
      trial_sites: 1,
      // The legacy updater API is opt-in (docs/migrating.md, 'Sites already in the field').
      legacy_api: false,
      upgrade_paths: [],
    });
  });

  it('changes only the fields sent', async () => {
    const p = await createProduct(t);
    await configureSoftware(t, p.id, { slug: 'only-fields', storage_driver: 'local' });
    const res = await config(p.id, { software_enabled: 'yes', licensing_enabled: 'maybe' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      slug: 'only-fields',
      storage_driver: 'local',
      software_enabled: 'yes',
      licensing_enabled: 'maybe',
    });
    const off = await config(p.id, { software_enabled: 'no', storage_driver: '', licensing_enabled: null });
    expect(off.json()).toMatchObject({ software_enabled: 'no', storage_driver: '', licensing_enabled: null });
  });

  it('a published product cannot take a slug another published product uses: 409 slug_taken', async () => {
    const first = await createProduct(t, {}, { software: { slug: 'shared-slug' } });
    const second = await createProduct(t);
    expectError(await config(second.id, { slug: 'shared-slug', software_enabled: 'yes' }), 409, 'slug_taken');
    expect(await read(second.id)).toMatchObject({ slug: second.slug, software_enabled: 'no' });
    // Re-sending one's own slug is fine.
    expect((await config(first.id, { slug: 'shared-slug' })).statusCode).toBe(200);
  });

  it('a draft may hold a taken slug, but cannot be published while it is taken', async () => {
    await createProduct(t, {}, { software: { slug: 'draft-clash' } });
    const draft = await createProduct(t, { status: 'draft' }, { software: { slug: 'draft-clash' } });
    expect(draft.slug).toBe('draft-clash');
    const publish = await t.app.inject({
      method: 'PATCH',
      url: `/v1/products/${draft.id}`,
      headers: t.adminAuth,
      payload: { status: 'publish', name: 'still draft' },
    });
    expectError(publish, 409, 'slug_taken');
    const after = await t.app.inject({
      method: 'GET',
      url: `/v1/products/${draft.id}`,
      headers: t.adminAuth,
    });
    expect(after.json()).toMatchObject({ status: 'draft', name: draft.name });
  });

  it('only one of several concurrent claims of a slug wins', async () => {
    const products = await Promise.all([1, 2, 3, 4, 5].map(() => createProduct(t)));
    const results = await Promise.all(products.map((p) => config(p.id, { slug: 'race-slug' })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409, 409]);
    expect(await t.app.services.catalogue.findPublishedBySlug('race-slug')).toHaveLength(1);
  });

  it('accepts filename templates that render a plain .zip name with {version}', async () => {
    const p = await createProduct(t);
    for (const template of [
      '{slug}-{version}.zip',
      '{version}.zip',
      'my_plugin-{slug}.{version}.zip',
      'Plugin-v{version}-{slug}.zip',
    ]) {
      const res = await config(p.id, { filename_template: template });
      expect(res.statusCode, template).toBe(200);
      expect(res.json().filename_template).toBe(template);
    }
  });

  it('refuses other filename templates with invalid_filename_template and keeps the old one', async () => {
    const p = await createProduct(t, {}, { software: { filename_template: 'good-{version}.zip' } });
    const bad = [
      '{slug}.zip',
      '{slug}-{version}.tar.gz',
      '{slug}-{version}.ZIP',
      '{slug}-{version}',
      '../{slug}-{version}.zip',
      '{slug}/{version}.zip',
      '{slug}\\{version}.zip',
      '{slug}..{version}.zip',
      '.{version}.zip',
      '{name}-{version}.zip',
      '{slug-{version}.zip',
      'a b-{version}.zip',
      "x';DROP TABLE products;--{version}.zip",
      '{version}\u0000.zip',
      `${'a'.repeat(10 * 1024)}{version}.zip`,
      '',
    ];
    for (const template of bad) {
      expectError(await config(p.id, { filename_template: template }), 400, 'invalid_filename_template');
    }
    expectError(await config(p.id, { filename_template: 5 }), 400, 'invalid_filename_template');
    expect((await read(p.id)).filename_template).toBe('good-{version}.zip');
  });

  it('refuses malformed slugs with invalid_slug', async () => {
    const p = await createProduct(t, {}, { software: { slug: 'kept-slug' } });
    const bad = [
      '',
      'Upper',
      'with space',
      'under_score',
      '../etc',
      "a'; DROP TABLE products; --",
      'a\u0000',
      'é',
      'a'.repeat(101),
      'x'.repeat(10240),
      7,
      null,
    ];
    for (const slug of bad) expectError(await config(p.id, { slug }), 400, 'invalid_slug');
    expect((await read(p.id)).slug).toBe('kept-slug');
    expect((await config(p.id, { slug: 'a'.repeat(100) })).statusCode).toBe(200);
  });

  it('other bad input is a specific 400 and changes nothing', async () => {
    const p = await createProduct(
      t,
      {},
      { software: { slug: 'steady', storage_driver: 'local', software_enabled: 'yes' } },
    );
    const before = await read(p.id);
    const raw = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${p.id}/config`,
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"slug": "x"',
    });
    expectError(raw, 400, 'rest_invalid_json');
    const cases: [unknown, string][] = [
      [{ software_enabled: true }, 'rest_invalid_param'],
      [{ software_enabled: 'YES' }, 'rest_invalid_param'],
      [{ storage_driver: 's3' }, 'rest_invalid_param'],
      [{ storage_driver: '../vault' }, 'rest_invalid_param'],
      [{ licensing_enabled: 'x'.repeat(10240) }, 'rest_invalid_param'],
      [{ licensing_enabled: 'no\n' }, 'rest_invalid_param'],
      [{ product_id: 2 }, 'invalid_parameters'],
      [{ storage_key: '/etc/passwd' }, 'invalid_parameters'],
      // A valid field does not slip through next to an invalid one.
      [{ slug: 'new-slug', filename_template: 'bad.zip' }, 'invalid_filename_template'],
      [{ slug: 'new-slug', storage_driver: 'ftp' }, 'rest_invalid_param'],
    ];
    for (const [payload, code] of cases) expectError(await config(p.id, payload), 400, code);
    expect(await read(p.id)).toEqual(before);
  });

  it('unknown or malformed product ids', async () => {
    expectError(await config(999999, { slug: 'x' }), 404, 'product_not_found');
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/software/products/999999/config', headers: t.adminAuth }),
      404,
      'product_not_found',
    );
    for (const id of [
      'abc',
      '0',
      encodeURIComponent("1'; DROP TABLE products; --"),
      encodeURIComponent('../1'),
    ]) {
      expectError(await config(id, { slug: 'x' }), 400, 'rest_invalid_param');
      expectError(
        await t.app.inject({
          method: 'GET',
          url: `/v1/software/products/${id}/config`,
          headers: t.adminAuth,
        }),
        400,
        'rest_invalid_param',
      );
    }
  });
});
