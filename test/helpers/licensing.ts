import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.js';
import { generateLicenseKey } from '../../src/modules/licensing/license-key.js';
import type { TestApp } from './app.js';

/**
 * Licensing factories. Products and variations are inserted directly (the catalogue routes are
 * another module's); licenses go through the administrator API unless a test needs a stored
 * value the API would refuse (an unreadable expiry or snapshot).
 */

export interface ProductOptions {
  name?: string;
  activation_limit?: number | null;
  activation_mode?: 'simple' | 'oauth' | null;
  type?: string;
  slug?: string | null;
  variations?: { name: string; activation_limit?: number | null }[];
}

export async function createProduct(db: Kysely<DB>, opts: ProductOptions = {}) {
  const now = new Date().toISOString();
  const product = await db
    .insertInto('products')
    .values({
      name: opts.name ?? 'Pro Plugin',
      status: 'publish',
      type: opts.type ?? (opts.variations ? 'variable' : 'simple'),
      price_minor: 4900,
      virtual: 1,
      activation_limit: opts.activation_limit ?? null,
      activation_mode: opts.activation_mode ?? null,
      slug: opts.slug ?? null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const variationIds: number[] = [];
  for (const [i, v] of (opts.variations ?? []).entries()) {
    const row = await db
      .insertInto('product_variations')
      .values({
        product_id: product.id,
        name: v.name,
        price_minor: 4900,
        attributes: '{}',
        activation_limit: v.activation_limit ?? null,
        position: i,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    variationIds.push(row.id);
  }
  return { id: product.id, variationIds };
}

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

/** The administrator's own user id (owner of licenses in tests that need no customer). */
export async function adminId(t: TestApp): Promise<number> {
  const row = await t.app.services.database.db
    .selectFrom('users')
    .select('id')
    .where('role', '=', 'administrator')
    .executeTakeFirstOrThrow();
  return row.id;
}

export const installationId = (): string => randomUUID();

export function identity(domain = 'example.com') {
  return { domain, installation_id: installationId() };
}

export async function post(t: TestApp, url: string, payload: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'POST', url: `/v1${url}`, payload: payload as object, headers });
}

/** A product and a license on it, owned by the administrator; returns what tests need most. */
export async function licenseFixture(
  t: TestApp,
  product: ProductOptions = {},
  license: Partial<LicenseBody> = {},
) {
  const db = t.app.services.database.db;
  const p = await createProduct(db, product);
  const lic = await createLicense(t, { product_id: p.id, user_id: await adminId(t), ...license });
  return { product: p, license: lic, key: lic.license_key };
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
  const email = `owner-${Math.random().toString(36).slice(2)}@example.com`;
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
  const product = await createProduct(db, {
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
