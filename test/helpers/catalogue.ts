import type { TestApp } from './app.js';

/**
 * The product as the API answers it (docs/catalogue.md), typed loosely enough for any module's
 * tests.
 */
export interface ApiProduct {
  id: number;
  name: string;
  status: string;
  type: string;
  price: string;
  licensing_enabled: string | null;
  activation_limit: number | null;
  slug: string | null;
  filename_template: string;
  storage_driver: string;
  software_enabled: string;
  variations: { id: number; name: string; price: string; activation_limit: number | null }[];
  [field: string]: unknown;
}

export interface SoftwareConfigInput {
  slug?: string;
  filename_template?: string;
  storage_driver?: '' | 'local' | 'local_encrypted' | 'external';
  licensing_enabled?: string | null;
  software_enabled?: 'yes' | 'no';
}

let sequence = 0;

/**
 * Creates a product through the administrator API: a published, licensed simple product at
 * "49.00" unless `overrides` says otherwise. With `software`, also posts its software
 * configuration (e.g. `{slug: 'my-plugin', software_enabled: 'yes'}`) and answers the product as
 * it then reads.
 */
export async function createProduct(
  t: TestApp,
  overrides: Record<string, unknown> = {},
  software?: SoftwareConfigInput,
): Promise<ApiProduct> {
  sequence += 1;
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/products',
    headers: t.adminAuth,
    payload: {
      name: `Test product ${sequence}`,
      type: 'simple',
      price: '49.00',
      licensing_enabled: 'yes',
      ...overrides,
    },
  });
  if (res.statusCode !== 201) throw new Error(`create product failed: ${res.statusCode} ${res.body}`);
  const product = res.json() as ApiProduct;
  if (!software) return product;
  await configureSoftware(t, product.id, software);
  const read = await t.app.inject({ method: 'GET', url: `/v1/products/${product.id}`, headers: t.adminAuth });
  return read.json() as ApiProduct;
}

/** Posts a product's software configuration and answers the config object. */
export async function configureSoftware(t: TestApp, productId: number, config: SoftwareConfigInput) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/v1/software/products/${productId}/config`,
    headers: t.adminAuth,
    payload: config,
  });
  if (res.statusCode !== 200) throw new Error(`software config failed: ${res.statusCode} ${res.body}`);
  return res.json() as Required<SoftwareConfigInput> & { product_id: number };
}
