import { randomBytes, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.js';
import { generateLicenseKey } from '../../src/modules/licensing/license-key.js';
import { adminOk, login, postForm, type TestApp } from './app.js';
import { zipParts } from './zip.js';

/**
 * The test data of every module: users, products, licenses, releases and orders. Each factory
 * writes through the administrator API of a test app unless its doc says otherwise, fills in what a
 * test does not care about with the common case, and throws (with the response) when the API
 * refuses: a test that wants to see a refusal calls the route itself.
 */

let sequence = 0;
const next = () => ++sequence;

// ─── Users ──────────────────────────────────────────────────────────────────────────────────────

/** An email address no other call of this process answers (rate-limit buckets and accounts stay apart). */
export const uniqueEmail = (tag = 'buyer') => `${tag}-${Date.now().toString(36)}-${next()}@example.com`;

/** A customer made by `createCustomer`: id, credentials and headers of a signed-in session. */
export type Customer = Awaited<ReturnType<typeof createCustomer>>;

/**
 * Creates a customer through the admin API (POST /users) and signs them in; `headers` (session
 * cookie and X-REST-Nonce) authenticate their state-changing requests. A unique email unless given.
 */
export async function createCustomer(
  t: TestApp,
  email = uniqueEmail('customer'),
  password = 'customer-password-1',
) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/users',
    headers: t.adminAuth,
    payload: { email, password, role: 'customer' },
  });
  if (res.statusCode !== 201) throw new Error(`create customer failed: ${res.body}`);
  const user = res.json() as { id: number };
  return { id: user.id, email, password, headers: await login(t.app, email, password) };
}

/** The administrator's own user id (owner of licenses in tests that need no customer). */
export async function adminId(t: TestApp): Promise<number> {
  const row = await t.app.services.database.db
    .selectFrom('users')
    .select('id')
    .where('role', '=', 'administrator')
    .executeTakeFirstOrThrow();
  return row.id;
}

// ─── Products ───────────────────────────────────────────────────────────────────────────────────

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

/** A product's software configuration (POST /software/products/{id}/config). */
export interface SoftwareConfigInput {
  slug?: string;
  filename_template?: string;
  storage_driver?: string;
  licensing_enabled?: string | null;
  software_enabled?: 'yes' | 'no';
  legacy_api?: boolean;
}

/** Fields of POST /products; the ones named here are the ones `via: 'database'` can write too. */
export interface ProductFields {
  name?: string;
  type?: string;
  price?: string;
  status?: string;
  licensing_enabled?: string | null;
  activation_limit?: number | null;
  activation_mode?: 'simple' | 'oauth' | null;
  variations?: {
    name: string;
    price?: string;
    activation_limit?: number | '' | null;
    [field: string]: unknown;
  }[];
  [field: string]: unknown;
}

export interface ProductOptions {
  /** Also configures the product's software (e.g. `{slug: 'my-plugin', software_enabled: 'yes'}`). */
  software?: SoftwareConfigInput;
  /**
   * How the product is written: `'api'` (the default) through POST /products and the software
   * config route, so the catalogue's own rules apply and the answer is the product as the API
   * reads it; `'database'`, rows inserted straight into the tables, for a module's tests that must
   * not depend on the catalogue routes (licensing): only the fields of `ProductFields` and
   * `SoftwareConfigInput` are written, and the answer is the ids.
   */
  via?: 'api' | 'database';
}

/** What `via: 'database'` answers: the ids, in the shape the API product has them. */
export interface InsertedProduct {
  id: number;
  variations: { id: number; name: string }[];
}

/**
 * Creates a product: a published, licensed ("licensing_enabled": "yes") product at "49.00" named
 * "Test product N", simple, or variable when `fields.variations` are given (each at the product's
 * price unless it says otherwise), unless `fields` says otherwise. `opts.software` also configures
 * its software; `opts.via` says whether it goes through the API (the default) or straight into the
 * database (see `ProductOptions.via`).
 *
 *     const product = await createProduct(t, { activation_limit: 3 });
 */
export async function createProduct(
  t: TestApp,
  fields?: ProductFields,
  opts?: ProductOptions & { via?: 'api' },
): Promise<ApiProduct>;
export async function createProduct(
  t: TestApp,
  fields: ProductFields,
  opts: ProductOptions & { via: 'database' },
): Promise<InsertedProduct>;
export async function createProduct(
  t: TestApp,
  fields: ProductFields = {},
  opts: ProductOptions = {},
): Promise<ApiProduct | InsertedProduct> {
  const n = next();
  const payload: ProductFields = {
    name: `Test product ${n}`,
    type: fields.variations ? 'variable' : 'simple',
    price: '49.00',
    licensing_enabled: 'yes',
    ...fields,
  };
  if (opts.via === 'database') return insertProduct(t.app.services.database.db, payload, opts.software);
  const res = await t.app.inject({ method: 'POST', url: '/v1/products', headers: t.adminAuth, payload });
  if (res.statusCode !== 201) throw new Error(`create product failed: ${res.statusCode} ${res.body}`);
  const product = res.json() as ApiProduct;
  if (!opts.software) return product;
  await configureSoftware(t, product.id, opts.software);
  const read = await t.app.inject({ method: 'GET', url: `/v1/products/${product.id}`, headers: t.adminAuth });
  return read.json() as ApiProduct;
}

/**
 * A distributable product: `createProduct` with software enabled under a slug of its own
 * (`plugin-<pid>-<n>`), plus any other software configuration and product fields.
 */
export function softwareProduct(
  t: TestApp,
  software: SoftwareConfigInput = {},
  fields: ProductFields = {},
): Promise<ApiProduct> {
  return createProduct(t, fields, {
    software: { slug: `plugin-${process.pid}-${next()}`, software_enabled: 'yes', ...software },
  });
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

const PRODUCT_COLUMNS = new Set([
  'name',
  'type',
  'price',
  'status',
  'licensing_enabled',
  'activation_limit',
  'activation_mode',
  'variations',
]);
const minor = (price: string) => Math.round(Number(price) * 100);

/** The rows of a product and its variations, inserted without the catalogue (see `ProductOptions.via`). */
async function insertProduct(
  db: Kysely<DB>,
  fields: ProductFields,
  software: SoftwareConfigInput = {},
): Promise<InsertedProduct> {
  const unknown = Object.keys(fields).filter((k) => !PRODUCT_COLUMNS.has(k));
  if (unknown.length > 0) throw new Error(`createProduct via database cannot write ${unknown.join(', ')}`);
  const now = new Date().toISOString();
  const price = fields.price ?? '49.00';
  const product = await db
    .insertInto('products')
    .values({
      name: fields.name ?? `Test product ${next()}`,
      status: fields.status ?? 'publish',
      type: fields.type ?? (fields.variations ? 'variable' : 'simple'),
      price_minor: minor(price),
      virtual: 1,
      licensing_enabled: software.licensing_enabled ?? fields.licensing_enabled ?? 'yes',
      activation_limit: fields.activation_limit ?? null,
      activation_mode: fields.activation_mode ?? null,
      slug: software.slug ?? null,
      filename_template: software.filename_template ?? null,
      storage_driver: software.storage_driver ?? null,
      software_enabled: software.software_enabled ?? null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const variations: InsertedProduct['variations'] = [];
  for (const [i, v] of (fields.variations ?? []).entries()) {
    const row = await db
      .insertInto('product_variations')
      .values({
        product_id: product.id,
        name: v.name,
        price_minor: minor(v.price ?? price),
        attributes: '{}',
        activation_limit: v.activation_limit === '' ? null : (v.activation_limit ?? null),
        position: i,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    variations.push({ id: row.id, name: v.name });
  }
  return { id: product.id, variations };
}

// ─── Licenses ───────────────────────────────────────────────────────────────────────────────────

export const installationId = (): string => randomUUID();

/** A site as activation requests name it: a domain and a fresh installation id. */
export function identity(domain = 'example.com') {
  return { domain, installation_id: installationId() };
}

export interface LicenseBody {
  product_id: number;
  user_id: number;
  variation_id?: number;
  license_key?: string;
  activation_limit?: number | null;
  usage_expires_at?: string | null;
  entitlement_policy?: unknown;
  order_id?: number;
  subscription_id?: number;
}

export interface LicenseJson {
  id: number;
  license_key: string;
  product_id: number;
  variation_id: number;
  activation_limit: number;
  activation_count: number;
  activations_remaining: number;
  [field: string]: unknown;
}

/** Issues a license through POST /licenses. */
export async function createLicense(t: TestApp, body: LicenseBody): Promise<LicenseJson> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/licenses',
    headers: t.adminAuth,
    payload: body,
  });
  if (res.statusCode !== 201) throw new Error(`create license failed: ${res.statusCode} ${res.body}`);
  return res.json() as LicenseJson;
}

/**
 * A product written straight into the database (`via: 'database'`) and a license on it, owned by
 * the administrator unless `license.user_id` says otherwise; answers what tests need most.
 */
export async function licenseFixture(
  t: TestApp,
  product: ProductFields = {},
  license: Partial<LicenseBody> = {},
) {
  const p = await createProduct(t, product, { via: 'database' });
  const lic = await createLicense(t, { product_id: p.id, user_id: await adminId(t), ...license });
  return { product: p, license: lic, key: lic.license_key };
}

/** Writes stored columns directly, for values the API would never write (legacy data). */
export async function setLicenseColumns(
  db: Kysely<DB>,
  id: number,
  values: {
    usage_expires_at?: string | null;
    entitlement_policy?: string | null;
    status?: 'active' | 'revoked';
  },
) {
  await db.updateTable('licenses').set(values).where('id', '=', id).execute();
}

/** A subscription row (no order, no schedule): what a license's entitlements look at. */
export async function createSubscription(
  db: Kysely<DB>,
  userId: number,
  productId: number,
  status = 'active',
) {
  const now = new Date().toISOString();
  const row = await db
    .insertInto('subscriptions')
    .values({ user_id: userId, product_id: productId, status, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function setSubscriptionStatus(db: Kysely<DB>, id: number, status: string) {
  await db.updateTable('subscriptions').set({ status }).where('id', '=', id).execute();
}

/**
 * A customer and an active license of a new product, inserted straight into a database that
 * server processes share (multi-process tests have no in-process app to call the API on).
 */
export async function seedOwnedLicense(
  db: Kysely<DB>,
  opts: { limit: number; activation_mode?: 'simple' | 'oauth'; password_hash?: string },
): Promise<{ userId: number; email: string; licenseId: number; key: string }> {
  const now = new Date().toISOString();
  const email = uniqueEmail('owner');
  const user = await db
    .insertInto('users')
    .values({
      email,
      password_hash: opts.password_hash ?? 'x',
      role: 'customer',
      first_name: '',
      last_name: '',
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const product = await insertProduct(db, {
    activation_limit: opts.limit,
    activation_mode: opts.activation_mode,
  });
  const key = generateLicenseKey();
  const license = await db
    .insertInto('licenses')
    .values({
      license_key: key,
      product_id: product.id,
      variation_id: 0,
      order_id: null,
      order_item_id: null,
      user_id: user.id,
      subscription_id: null,
      status: 'active',
      activation_limit: null,
      usage_expires_at: null,
      entitlement_policy: null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { userId: user.id, email, licenseId: license.id, key };
}

// ─── Releases ───────────────────────────────────────────────────────────────────────────────────

/** A valid zip archive (stored entries) with `payload` bytes of random content per entry. */
export function makeZip(payload = 1000, entries = 1, comment = ''): Buffer {
  const files = Array.from({ length: entries }, (_, i) => ({
    name: `plugin/file-${i}.php`,
    data: randomBytes(payload),
  }));
  return Buffer.concat([...zipParts(files, comment)]);
}

/** Uploads a release: version and a zip (made when not given), plus any other fields; answers the response. */
export function uploadRelease(
  t: TestApp,
  productId: number,
  version: string,
  extra: [string, string][] = [],
  zip: Buffer = makeZip(),
): Promise<LightMyRequestResponse> {
  return postForm(t, `/v1/software/products/${productId}/versions`, [
    ['version', version],
    ...extra,
    ['file', { filename: 'upload.zip', content: zip }],
  ]);
}

/** A release of a product: `uploadRelease`, expecting 201; answers the release body. */
export async function publish(
  t: TestApp,
  productId: number,
  version: string,
  extra: [string, string][] = [],
  zip?: Buffer,
): Promise<Record<string, unknown> & { version_id: number; artifact_id: number; file_sha256: string }> {
  const res = await uploadRelease(t, productId, version, extra, zip);
  if (res.statusCode !== 201) throw new Error(`upload failed: ${res.statusCode} ${res.body}`);
  return res.json();
}

// ─── Payment gateways ───────────────────────────────────────────────────────────────────────────

/** The payment instructions enableOfflineGateways gives bank transfer and cheque. */
export const OFFLINE_INSTRUCTIONS: Record<'bacs' | 'cheque', string> = {
  bacs: 'Pay to Example Ltd, IBAN GB33 BUKB 2020 1555 5555 55',
  cheque: 'Cheques payable to Example Ltd, 1 Analytical Row, London',
};

/**
 * Enables bank transfer and cheque (or those named) with OFFLINE_INSTRUCTIONS: a new store starts
 * in test mode with only the test card enabled, and an offline gateway is enabled only with its
 * instructions (docs/payments.md, 'Test mode and live mode').
 */
export async function enableOfflineGateways(
  t: TestApp,
  ids: readonly ('bacs' | 'cheque')[] = ['bacs', 'cheque'],
): Promise<void> {
  for (const id of ids) {
    await adminOk(t, 'PATCH', `/payment-gateways/${id}`, {
      enabled: true,
      instructions: OFFLINE_INSTRUCTIONS[id],
    });
  }
}

// ─── Orders ─────────────────────────────────────────────────────────────────────────────────────

/** The billing address of test orders (a unique email is added per order). */
export const BILLING = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@example.com',
  phone: '+44 20 7946 0000',
  address_1: '1 Analytical Row',
  city: 'London',
  state: '',
  postcode: 'N1 1AA',
  country: 'GB',
};

/** What POST /checkout/submit answers. */
export interface SubmitResult {
  ok: boolean;
  order_id: number;
  order_key: string;
  status: string;
  pay_url: string;
  thankyou_url: string;
  user_logged_in: boolean;
  nonce?: string;
  error?: string;
  error_code?: string;
}

/** Whoever places an order: anything that sends storefront requests (the cart tests' Browser). */
export interface Shopper {
  send(
    method: 'POST',
    url: string,
    payload: unknown,
    opts?: { headers?: Record<string, string> },
  ): Promise<LightMyRequestResponse>;
}

/**
 * Places an order through checkout (POST /checkout/submit) and expects it accepted: `body.items`,
 * paid by test_card with BILLING under a unique email unless `body` says otherwise. A guest with no
 * cookies places it unless `shopper` (a signed-in browser, or one with a cart) is given.
 *
 *     const order = await createOrder(t, { items: [{ product_id: product.id, qty: 1 }] });
 */
export async function createOrder(
  t: TestApp,
  body: { items: unknown[]; [field: string]: unknown },
  shopper?: Shopper,
): Promise<SubmitResult> {
  const payload = {
    payment_method: 'test_card',
    billing: { ...BILLING, email: uniqueEmail() },
    ...body,
  };
  const res = shopper
    ? await shopper.send('POST', '/checkout/submit', payload)
    : await t.app.inject({ method: 'POST', url: '/v1/checkout/submit', payload });
  const out = res.json() as SubmitResult;
  if (res.statusCode !== 200 || !out.ok) throw new Error(`order failed: ${res.statusCode} ${res.body}`);
  return out;
}
