import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { type ApiProduct, createProduct } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const POLICY = {
  usage: { mode: 'lifetime' },
  updates: { mode: 'days', days: 365 },
  support: { mode: 'days', days: 180 },
  historical_downloads: true,
};

const post = (payload: unknown) =>
  t.app.inject({ method: 'POST', url: '/v1/products', headers: t.adminAuth, payload: payload as object });
const patch = (id: number | string, payload: unknown) =>
  t.app.inject({
    method: 'PATCH',
    url: `/v1/products/${id}`,
    headers: t.adminAuth,
    payload: payload as object,
  });
const get = async (id: number) =>
  (
    await t.app.inject({ method: 'GET', url: `/v1/products/${id}`, headers: t.adminAuth })
  ).json() as ApiProduct;
const total = async () =>
  Number(
    (await t.app.inject({ method: 'GET', url: '/v1/products?per_page=1', headers: t.adminAuth })).headers[
      'x-wp-total'
    ],
  );

describe('acceptance: an administrator sets up a product for sale and distribution', () => {
  it('creates a variable product with variations and its software configuration through Basic auth', async () => {
    const created = await post({
      name: 'Site Kit Pro',
      type: 'variable',
      price: '49.00',
      licensing_enabled: 'yes',
      activation_limit: 2,
      activation_mode: 'oauth',
      entitlement_policy: POLICY,
      variations: [
        { name: 'Single site', price: '49.00', attributes: { Sites: '1' }, activation_limit: '' },
        {
          name: 'Five sites',
          price: '99.5',
          attributes: { Sites: '5' },
          activation_limit: 5,
          stock_quantity: 10,
        },
        { name: 'Agency', price: '249', attributes: { Sites: 'Unlimited' }, activation_limit: 0 },
      ],
    });
    expect(created.statusCode).toBe(201);
    const product = created.json() as ApiProduct;
    expect(product).toMatchObject({
      name: 'Site Kit Pro',
      status: 'publish',
      type: 'variable',
      price: '49.00',
      virtual: true,
      stock_quantity: null,
      licensing_enabled: 'yes',
      activation_limit: 2,
      activation_mode: 'oauth',
      subscription: null,
      entitlement_policy: POLICY,
      slug: 'site-kit-pro',
      filename_template: '{slug}-{version}.zip',
      storage_driver: '',
      software_enabled: 'no',
    });
    expect(product.id).toBeGreaterThan(0);
    expect(product.variations.map((v) => [v.name, v.price, v.activation_limit])).toEqual([
      ['Single site', '49.00', null],
      ['Five sites', '99.50', 5],
      ['Agency', '249.00', 0],
    ]);
    for (const v of product.variations) expect(v.id).toBeGreaterThan(0);

    const config = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${product.id}/config`,
      headers: t.adminAuth,
      payload: {
        slug: 'site-kit-pro',
        filename_template: '{slug}-v{version}.zip',
        storage_driver: 'local_encrypted',
        software_enabled: 'yes',
      },
    });
    expect(config.statusCode).toBe(200);
    expect(config.json()).toEqual({
      product_id: product.id,
      slug: 'site-kit-pro',
      filename_template: '{slug}-v{version}.zip',
      storage_driver: 'local_encrypted',
      licensing_enabled: 'yes',
      software_enabled: 'yes',
      icon: null,
      banner: null,
      // No trial unless one is configured (docs/selling.md, 'Trials').
      trial_days: null,
      trial_sites: 1,
      // The legacy updater API is opt-in (docs/migrating.md, 'Sites already in the field').
      legacy_api: false,
      upgrade_paths: [],
    });
    const read = await get(product.id);
    expect(read).toMatchObject({
      slug: 'site-kit-pro',
      software_enabled: 'yes',
      storage_driver: 'local_encrypted',
    });
    expect(read.variations).toEqual(product.variations);
  });
});

describe('product fields', () => {
  it('defaults a minimal product to a published, virtual simple product', async () => {
    const res = await post({ name: 'Minimal', price: '5' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      status: 'publish',
      type: 'simple',
      price: '5.00',
      virtual: true,
      licensing_enabled: null,
      activation_limit: null,
      activation_mode: null,
      entitlement_policy: null,
      variations: [],
    });
  });

  it('stores licensing_enabled exactly as given, whatever the string', async () => {
    for (const value of ['no', 'No', 'false', '']) {
      const p = await createProduct(t, { licensing_enabled: value });
      expect((await get(p.id)).licensing_enabled).toBe(value);
    }
  });

  it('keeps money exact: no float rounding on the way in or out', async () => {
    const p = await createProduct(t, { price: '0.10' });
    expect(p.price).toBe('0.10');
    const q = await createProduct(t, { price: '999999999.99' });
    expect(q.price).toBe('999999999.99');
    const r = await createProduct(t, { price: '19.900' });
    expect(r.price).toBe('19.90');
  });

  it('refuses more decimals than the base currency has with invalid_amount', async () => {
    const before = await total();
    expectError(await post({ name: 'x', price: '1.005' }), 400, 'invalid_amount');
    expectError(
      await post({ name: 'x', type: 'variable', variations: [{ name: 'v', price: '0.001' }] }),
      400,
      'invalid_amount',
    );
    expect(await total()).toBe(before);
  });

  it('requires a price on a simple product but not on a variable parent', async () => {
    expectError(await post({ name: 'No price' }), 400, 'rest_missing_param');
    const res = await post({ name: 'Variable', type: 'variable', variations: [{ name: 'v', price: '3' }] });
    expect(res.statusCode).toBe(201);
    expect(res.json().price).toBe('0.00');
  });

  it('matches variations and subscriptions to the product type', async () => {
    const before = await total();
    expectError(await post({ name: 'x', type: 'variable', price: '1' }), 400, 'variations_required');
    expectError(
      await post({ name: 'x', type: 'variable', price: '1', variations: [] }),
      400,
      'variations_required',
    );
    expectError(
      await post({ name: 'x', price: '1', variations: [{ name: 'v', price: '1' }] }),
      400,
      'variations_not_allowed',
    );
    expectError(await post({ name: 'x', type: 'subscription', price: '1' }), 400, 'subscription_required');
    expectError(
      await post({ name: 'x', price: '1', subscription: { period: 'month', interval: 1 } }),
      400,
      'subscription_not_allowed',
    );
    expect(await total()).toBe(before);
    const sub = await post({
      name: 'Yearly',
      type: 'variable-subscription',
      subscription: { period: 'year', interval: 1 },
      variations: [{ name: 'v', price: '99' }],
      entitlement_policy: { usage: { mode: 'subscription' }, updates: { mode: 'license' } },
    });
    expect(sub.statusCode).toBe(201);
    expect(sub.json()).toMatchObject({
      subscription: { period: 'year', interval: 1 },
      entitlement_policy: {
        usage: { mode: 'subscription' },
        updates: { mode: 'license' },
        support: { mode: 'unspecified' },
        historical_downloads: false,
      },
    });
  });

  it('requires positive days exactly when a policy mode is days', async () => {
    const before = await total();
    const bad = [
      { usage: { mode: 'days' }, updates: { mode: 'license' } },
      { usage: { mode: 'days', days: 0 }, updates: { mode: 'license' } },
      { usage: { mode: 'days', days: -5 }, updates: { mode: 'license' } },
      { usage: { mode: 'lifetime' }, updates: { mode: 'days' } },
      { usage: { mode: 'lifetime' }, updates: { mode: 'license' }, support: { mode: 'days', days: 0 } },
      { usage: { mode: 'lifetime', days: 30 }, updates: { mode: 'license' } },
    ];
    for (const policy of bad) {
      expectError(
        await post({ name: 'x', price: '1', entitlement_policy: policy }),
        400,
        'invalid_entitlement_policy',
      );
      expectError(
        await post({
          name: 'x',
          type: 'variable',
          variations: [{ name: 'v', price: '1', entitlement_policy: policy }],
        }),
        400,
        'invalid_entitlement_policy',
      );
    }
    expectError(
      await post({
        name: 'x',
        price: '1',
        entitlement_policy: { usage: { mode: 'forever' }, updates: { mode: 'license' } },
      }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await post({ name: 'x', price: '1', entitlement_policy: { usage: { mode: 'lifetime' } } }),
      400,
      'rest_missing_param',
    );
    expect(await total()).toBe(before);
  });

  it('answers 404 product_not_found for an unknown id', async () => {
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/products/999999', headers: t.adminAuth }),
      404,
      'product_not_found',
    );
    expectError(await patch(999999, { name: 'x' }), 404, 'product_not_found');
  });
});

describe('PATCH /products/{id}', () => {
  it('changes only the fields sent and can clear nullable ones with null', async () => {
    const p = await createProduct(t, { activation_limit: 3, stock_quantity: 7, activation_mode: 'simple' });
    const res = await patch(p.id, {
      name: 'Renamed',
      activation_limit: null,
      activation_mode: null,
      virtual: false,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'Renamed',
      price: '49.00',
      stock_quantity: 7,
      activation_limit: null,
      activation_mode: null,
      virtual: false,
    });
  });

  it('treats variations as the complete new list: id updates, no id adds, omitted removes', async () => {
    const p = await createProduct(t, {
      type: 'variable',
      variations: [
        { name: 'A', price: '1', activation_limit: 1 },
        { name: 'B', price: '2' },
        { name: 'C', price: '3' },
      ],
    });
    const [a, b, c] = p.variations;
    const res = await patch(p.id, {
      variations: [
        { id: c!.id, name: 'C2', price: '30', activation_limit: 0 },
        { name: 'D', price: '4', activation_limit: '' },
        { id: a!.id, name: 'A', price: '1' },
      ],
    });
    expect(res.statusCode).toBe(200);
    const vs = (res.json() as ApiProduct).variations;
    expect(vs.map((v) => v.name)).toEqual(['C2', 'D', 'A']);
    expect(vs[0]).toMatchObject({ id: c!.id, price: '30.00', activation_limit: 0 });
    expect(vs[1]!.id).not.toBe(b!.id);
    expect(vs[1]!.activation_limit).toBeNull();
    // An entry with an id is a full replacement: an omitted activation_limit goes back to inherit.
    expect(vs[2]).toMatchObject({ id: a!.id, activation_limit: null });
    expect(await t.app.services.catalogue.getVariation(b!.id)).toBeNull();
  });

  it('leaves variations alone when the field is absent', async () => {
    const p = await createProduct(t, { type: 'variable', variations: [{ name: 'A', price: '1' }] });
    const res = await patch(p.id, { price: '2' });
    expect((res.json() as ApiProduct).variations).toEqual(p.variations);
  });

  it('refuses a variation id of another product and changes nothing', async () => {
    const other = await createProduct(t, { type: 'variable', variations: [{ name: 'X', price: '1' }] });
    const p = await createProduct(t, { type: 'variable', variations: [{ name: 'A', price: '1' }] });
    const res = await patch(p.id, {
      name: 'Should not stick',
      variations: [{ id: other.variations[0]!.id, name: 'stolen', price: '1' }],
    });
    expectError(res, 404, 'variation_not_found');
    expect(await get(p.id)).toEqual(p);
    expect(await get(other.id)).toEqual(other);
    const dup = p.variations[0]!.id;
    expectError(
      await patch(p.id, {
        variations: [
          { id: dup, name: 'a', price: '1' },
          { id: dup, name: 'b', price: '1' },
        ],
      }),
      400,
      'invalid_parameters',
    );
    expect(await get(p.id)).toEqual(p);
  });

  it('keeps the type rules on change of type', async () => {
    const p = await createProduct(t, { type: 'variable', variations: [{ name: 'A', price: '1' }] });
    expectError(await patch(p.id, { type: 'simple' }), 400, 'variations_not_allowed');
    expectError(await patch(p.id, { variations: [] }), 400, 'variations_required');
    expectError(await patch(p.id, { type: 'variable-subscription' }), 400, 'subscription_required');
    const ok = await patch(p.id, { type: 'simple', variations: [] });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ type: 'simple', variations: [] });
  });

  it('an empty patch changes nothing but the answer is the product', async () => {
    const p = await createProduct(t);
    const res = await patch(p.id, {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: p.id, name: p.name, price: p.price });
  });
});

describe('GET /products', () => {
  it('paginates and filters by status, type and search', async () => {
    const tag = `Needle${Date.now()}`;
    await createProduct(t, { name: `${tag} one`, status: 'draft' });
    await createProduct(t, { name: `${tag} two` });
    await createProduct(t, {
      name: `${tag} three`,
      type: 'variable',
      variations: [{ name: 'v', price: '1' }],
    });
    const list = async (qs: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/products?${qs}`, headers: t.adminAuth });
      expect(res.statusCode).toBe(200);
      return {
        items: res.json() as ApiProduct[],
        total: Number(res.headers['x-wp-total']),
        pages: res.headers['x-wp-totalpages'],
      };
    };
    const all = await list(`search=${tag.toLowerCase()}`);
    expect(all.total).toBe(3);
    expect(all.items.map((p) => p.name)).toEqual([`${tag} three`, `${tag} two`, `${tag} one`]);
    expect((await list(`search=${tag}&status=draft`)).items.map((p) => p.name)).toEqual([`${tag} one`]);
    expect((await list(`search=${tag}&type=variable`)).items[0]!.variations).toHaveLength(1);
    const page2 = await list(`search=${tag}&per_page=2&page=2`);
    expect(page2.items.map((p) => p.name)).toEqual([`${tag} one`]);
    expect(page2.pages).toBe('2');
  });

  it('treats LIKE wildcards in search as plain characters', async () => {
    await createProduct(t, { name: '100% Pure_Plugin' });
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/products?search=0%25%20pure_',
      headers: t.adminAuth,
    });
    expect((res.json() as ApiProduct[]).map((p) => p.name)).toEqual(['100% Pure_Plugin']);
    const none = await t.app.inject({ method: 'GET', url: '/v1/products?search=%25', headers: t.adminAuth });
    expect((none.json() as ApiProduct[]).map((p) => p.name)).toEqual(['100% Pure_Plugin']);
    // Unescaped, `_` would match the `%` of "100%".
    const underscore = await t.app.inject({
      method: 'GET',
      url: '/v1/products?search=100_',
      headers: t.adminAuth,
    });
    expect(underscore.json()).toEqual([]);
  });
});

describe('bad input on product routes is a specific 4xx and changes nothing', () => {
  const TEN_KB = 'x'.repeat(10 * 1024);
  const SQL = "'; DROP TABLE products; --";

  it('POST /products', async () => {
    const before = await total();
    const raw = await t.app.inject({
      method: 'POST',
      url: '/v1/products',
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"name": "x", "price": ',
    });
    expectError(raw, 400, 'rest_invalid_json');
    const scalar = await t.app.inject({
      method: 'POST',
      url: '/v1/products',
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '"just a string"',
    });
    expectError(scalar, 400, 'rest_invalid_param');
    const form = await t.app.inject({
      method: 'POST',
      url: '/v1/products',
      headers: { ...t.adminAuth, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=x&price=1',
    });
    expectError(form, 415, 'rest_unsupported_media_type');
    const cases: [unknown, number, string][] = [
      [{}, 400, 'rest_missing_param'],
      [{ price: '1' }, 400, 'rest_missing_param'],
      [{ name: 5, price: '1' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: 49 }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '-1' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1e3' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '../1' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: `1${SQL}` }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', admin: true }, 400, 'invalid_parameters'],
      [{ name: 'x', price: '1', id: 1 }, 400, 'invalid_parameters'],
      [{ name: TEN_KB, price: '1' }, 400, 'rest_invalid_param'],
      [{ name: 'a\u0000b', price: '1' }, 400, 'rest_invalid_param'],
      [{ name: 'a\r\nb', price: '1' }, 400, 'rest_invalid_param'],
      [{ name: '', price: '1' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', status: SQL }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', status: 'private' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', type: 'bundle' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', virtual: 'yes' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', stock_quantity: -1 }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', stock_quantity: 1.5 }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', activation_limit: -1 }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', activation_limit: '5' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', activation_limit: '' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', activation_mode: 'magic' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', licensing_enabled: TEN_KB }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', licensing_enabled: 'no\u0007' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', licensing_enabled: false }, 400, 'rest_invalid_param'],
      [{ name: 'x', type: 'variable', variations: {} }, 400, 'rest_invalid_param'],
      [{ name: 'x', type: 'variable', variations: [{ name: 'v' }] }, 400, 'rest_missing_param'],
      [
        { name: 'x', type: 'variable', variations: [{ name: 'v', price: '1', id: 3 }] },
        400,
        'invalid_parameters',
      ],
      [
        { name: 'x', type: 'variable', variations: [{ name: 'v', price: '1', activation_limit: 'none' }] },
        400,
        'rest_invalid_param',
      ],
      [
        {
          name: 'x',
          type: 'variable',
          variations: [{ name: 'v', price: '1', attributes: { 'a\u0000': 'b' } }],
        },
        400,
        'rest_invalid_param',
      ],
      [
        { name: 'x', type: 'variable', variations: [{ name: 'v', price: '1', attributes: { a: TEN_KB } }] },
        400,
        'rest_invalid_param',
      ],
      [
        { name: 'x', type: 'variable', variations: [{ name: 'v', price: '1', attributes: { a: 1 } }] },
        400,
        'rest_invalid_param',
      ],
      [
        { name: 'x', price: '1', subscription: { period: 'fortnight', interval: 1 } },
        400,
        'rest_invalid_param',
      ],
      [{ name: 'x', price: '1', entitlement_policy: 'lifetime' }, 400, 'rest_invalid_param'],
      [{ name: 'x', price: '1', entitlement_policy: { ...POLICY, extra: 1 } }, 400, 'invalid_parameters'],
      [[{ name: 'x', price: '1' }], 400, 'rest_invalid_param'],
    ];
    for (const [payload, status, code] of cases) {
      const res = await post(payload);
      try {
        expectError(res, status, code);
      } catch (e) {
        throw new Error(`${JSON.stringify(payload).slice(0, 200)}: ${(e as Error).message}`);
      }
    }
    expect(await total()).toBe(before);
  });

  it('names with quotes and SQL metacharacters are data: stored verbatim, nothing executed', async () => {
    const p = await createProduct(t, { name: SQL, licensing_enabled: '../../etc/passwd' });
    expect(await get(p.id)).toMatchObject({ name: SQL, licensing_enabled: '../../etc/passwd' });
    expect(await total()).toBeGreaterThan(0);
  });

  it('PATCH /products/{id}', async () => {
    const p = await createProduct(t);
    const raw = await t.app.inject({
      method: 'PATCH',
      url: `/v1/products/${p.id}`,
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expectError(raw, 400, 'rest_invalid_json');
    const cases: [unknown, number, string][] = [
      [{ name: 7 }, 400, 'rest_invalid_param'],
      [{ name: null }, 400, 'rest_invalid_param'],
      [{ price: null }, 400, 'rest_invalid_param'],
      [{ price: '1.999' }, 400, 'invalid_amount'],
      [{ name: TEN_KB }, 400, 'rest_invalid_param'],
      [{ name: 'bad\u001b[31m' }, 400, 'rest_invalid_param'],
      [{ status: SQL }, 400, 'rest_invalid_param'],
      [{ slug: 'not-here' }, 400, 'invalid_parameters'],
      [{ created_at: '2020-01-01' }, 400, 'invalid_parameters'],
      [{ variations: [{ id: 'one', name: 'v', price: '1' }] }, 400, 'rest_invalid_param'],
      [
        { entitlement_policy: { usage: { mode: 'days', days: 0 }, updates: { mode: 'license' } } },
        400,
        'invalid_entitlement_policy',
      ],
    ];
    for (const [payload, status, code] of cases) expectError(await patch(p.id, payload), status, code);
    expect(await get(p.id)).toEqual(p);
  });

  it('path and query parameters', async () => {
    const bad = [
      'abc',
      '0',
      '-1',
      '1.5',
      '99999999999',
      encodeURIComponent(`1${SQL}`),
      encodeURIComponent('../settings'),
      encodeURIComponent('1\u0000'),
    ];
    for (const id of bad) {
      expectError(
        await t.app.inject({ method: 'GET', url: `/v1/products/${id}`, headers: t.adminAuth }),
        400,
        'rest_invalid_param',
      );
      expectError(await patch(id, { name: 'x' }), 400, 'rest_invalid_param');
    }
    const query = [
      ['page=0', 'rest_invalid_param'],
      ['per_page=1000', 'rest_invalid_param'],
      ['per_page=abc', 'rest_invalid_param'],
      ['status=trash', 'rest_invalid_param'],
      [`type=${encodeURIComponent(SQL)}`, 'rest_invalid_param'],
      [`search=${TEN_KB}`, 'rest_invalid_param'],
      [`search=${encodeURIComponent('a\u0000')}`, 'rest_invalid_param'],
      ['orderby=name', 'invalid_parameters'],
    ];
    for (const [qs, code] of query) {
      expectError(
        await t.app.inject({ method: 'GET', url: `/v1/products?${qs}`, headers: t.adminAuth }),
        400,
        code!,
      );
    }
    const sqlSearch = await t.app.inject({
      method: 'GET',
      url: `/v1/products?search=${encodeURIComponent(SQL)}`,
      headers: t.adminAuth,
    });
    expect(sqlSearch.statusCode).toBe(200);
  });
});
