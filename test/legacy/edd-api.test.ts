import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { configureSoftware, softwareProduct } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('legacy_api software configuration', () => {
  it('is off by default and turns on and off per product', async () => {
    const product = await softwareProduct(t);
    const other = await softwareProduct(t);
    const read = async (id: number) =>
      (
        await t.app.inject({ method: 'GET', url: `/v1/software/products/${id}/config`, headers: t.adminAuth })
      ).json() as { legacy_api: boolean };
    expect((await read(product.id)).legacy_api).toBe(false);

    expect((await configureSoftware(t, product.id, { legacy_api: true })).legacy_api).toBe(true);
    expect((await read(product.id)).legacy_api).toBe(true);
    expect((await read(other.id)).legacy_api).toBe(false);

    expect((await configureSoftware(t, product.id, { legacy_api: false })).legacy_api).toBe(false);
    expect((await read(product.id)).legacy_api).toBe(false);
  });

  it('refuses a value that is not a boolean and changes nothing', async () => {
    const product = await softwareProduct(t);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${product.id}/config`,
      headers: t.adminAuth,
      payload: { legacy_api: 'yes please' },
    });
    expectError(res, 400, 'rest_invalid_param');
    const after = await t.app.inject({
      method: 'GET',
      url: `/v1/software/products/${product.id}/config`,
      headers: t.adminAuth,
    });
    expect((after.json() as { legacy_api: boolean }).legacy_api).toBe(false);
  });
});
