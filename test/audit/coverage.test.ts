import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/types.js';
import { ADMIN, admin, adminOk, basic, createTestApp, postForm, type TestApp } from '../helpers/app.js';
import {
  createCustomer,
  createLicense,
  createOrder,
  identity,
  makeZip,
  publish,
  softwareProduct,
  uniqueEmail,
} from '../helpers/factories.js';

/**
 * Every administrator change is in the audit trail (docs/admin.md, 'Audit trail'). This walks the
 * OpenAPI document, as test/hardening/authorization.test.ts does, and takes every write route
 * (POST, PUT, PATCH, DELETE) that a customer is refused (403): the administrator's routes. Each one
 * is either exempt below, with its reason, or has a fixture that builds what the route needs
 * through the API and then sends one request that must succeed and leave at least one new audit
 * event by the administrator. A new administrator write route without either fails this test.
 */
const EXEMPT: Record<string, string> = {
  'POST /v1/test-clock': 'moves the test clock (TEST_CLOCK=1 only): a testing aid, not a change to the store',
  'POST /v1/mail/test': 'sends one test message to the mail server; changes nothing in the store',
  'POST /v1/software/products/{product_id}/artifacts/validate':
    'compares a file name and version with the template; writes nothing',
  'POST /v1/software/products/{product_id}/artifact-deletions/preview':
    'computes the impact of a deletion and its fingerprint; writes nothing',
  'POST /v1/software/artifact-deletions/{op}/retry':
    "the server's work on a deletion recorded when it was accepted, not a new change (docs/admin.md)",
};

/**
 * The write routes a signed-in customer may call too: a user's own session, application passwords,
 * sites and subscriptions. They are not administrator changes. Listed so that every secured write
 * route is classified: a route that checked the administrator role after validating its input
 * would answer a customer's probe 400, not 403, and would otherwise slip past this test.
 */
const USER_ROUTES = new Set([
  'POST /v1/auth/logout',
  'POST /v1/users/me/application-passwords',
  'DELETE /v1/users/me/application-passwords/{uuid}',
  'POST /v1/account/licenses/{id}/deactivate',
  'POST /v1/licenses/oauth/confirm',
  'POST /v1/account/subscriptions/{id}/cancel',
  'POST /v1/account/licenses/{id}/renewal-order',
  'POST /v1/account/licenses/{id}/transfers',
  'DELETE /v1/account/transfers/{id}',
  'POST /v1/account/licenses/{id}/upgrade-order',
  'PUT /v1/account/subscriptions/{id}/card',
  'DELETE /v1/account/cards/{id}',
  'POST /v1/users/me/password',
]);

type Send = () => Promise<LightMyRequestResponse>;
/** Builds what the route needs (through the API), then answers the one request under test. */
type Fixture = () => Promise<Send>;

const keyA = randomBytes(32);
const keyB = randomBytes(32);
let t: TestApp;
const extraApps: App[] = [];

const req =
  (method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown): Send =>
  () =>
    admin(t, method, url, payload);

async function newProduct() {
  return adminOk<{ id: number }>(t, 'POST', '/products', {
    name: `Covered ${uniqueEmail('p')}`,
    type: 'simple',
    price: '49.00',
    licensing_enabled: 'yes',
  });
}
async function newLicense() {
  const product = await newProduct();
  const customer = await createCustomer(t);
  return createLicense(t, { product_id: product.id, user_id: customer.id });
}
async function newSubscription() {
  const product = await newProduct();
  const customer = await createCustomer(t);
  return adminOk<{ id: number }>(t, 'POST', '/subscriptions', {
    user_id: customer.id,
    product_id: product.id,
  });
}
/** A catalogue file uploaded to the public folder of a software product. */
async function legacyDownload(productId: number) {
  const res = await postForm(t, `/v1/products/${productId}/downloads`, [
    ['file', { filename: 'covered.zip', content: makeZip() }],
  ]);
  expect(res.statusCode).toBe(201);
  return res.json() as { download_id: string };
}
async function deletionPreview(productId: number, body: Record<string, unknown>) {
  const { acknowledgement, fingerprint } = await adminOk<{ acknowledgement: string; fingerprint: string }>(
    t,
    'POST',
    `/software/products/${productId}/artifact-deletions/preview`,
    body,
  );
  return { acknowledgement, fingerprint };
}

/** A small PNG for the storefront's image routes (docs/storefront.md). */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEklEQVQImWPgqjjBVXGCAUIBACEuBSmZwwQyAAAAAElFTkSuQmCC',
  'base64',
);
const pngFile = () => ({ filename: 'picture.png', content: PNG, type: 'image/png' });

const FIXTURES: Record<string, Fixture> = {
  'POST /v1/users': async () =>
    req('POST', '/users', { email: uniqueEmail('covered'), password: 'a-long-password-1', role: 'customer' }),
  'PATCH /v1/settings': async () => req('PATCH', '/settings', { default_activation_limit: 7 }),
  'DELETE /v1/test-data': async () => {
    await createOrder(t, { items: [{ product_id: (await softwareProduct(t)).id, qty: 1 }] });
    return req('DELETE', '/test-data');
  },
  'POST /v1/signing-keys/rotate': async () => req('POST', '/signing-keys/rotate', {}),
  'POST /v1/licenses': async () => {
    const product = await newProduct();
    const customer = await createCustomer(t);
    return req('POST', '/licenses', { product_id: product.id, user_id: customer.id });
  },
  'PATCH /v1/licenses/{id}': async () => {
    const license = await newLicense();
    return req('PATCH', `/licenses/${license.id}`, { activation_limit: 9 });
  },
  'POST /v1/licenses/{id}/upgrade-order': async () => {
    const license = await newLicense();
    // A dearer product: the order waits for payment (a free one would apply at once, by the order).
    const pro = await adminOk<{ id: number }>(t, 'POST', '/products', {
      name: `Covered ${uniqueEmail('p')}`,
      type: 'simple',
      price: '99.00',
      licensing_enabled: 'yes',
    });
    await adminOk(t, 'POST', `/software/products/${license.product_id}/config`, { upgrade_paths: [pro.id] });
    return req('POST', `/licenses/${license.id}/upgrade-order`, { product_id: pro.id });
  },
  'DELETE /v1/licenses/{id}': async () => {
    const license = await newLicense();
    return req('DELETE', `/licenses/${license.id}`);
  },
  'POST /v1/licenses/{id}/transfers': async () => {
    const license = await newLicense();
    return req('POST', `/licenses/${license.id}/transfers`, { email: 'coverage-receiver@example.com' });
  },
  'DELETE /v1/transfers/{id}': async () => {
    const license = await newLicense();
    const offered = await adminOk<{ id: number }>(t, 'POST', `/licenses/${license.id}/transfers`, {
      email: 'coverage-cancelled@example.com',
    });
    return req('DELETE', `/transfers/${offered.id}`);
  },
  'POST /v1/licenses/{id}/activations/{activation_id}/deactivate': async () => {
    const license = await newLicense();
    const activated = await t.app.inject({
      method: 'POST',
      url: '/v1/licenses/activate',
      payload: { license_key: license.license_key, ...identity() },
    });
    expect(activated.statusCode).toBe(200);
    const read = await adminOk<{ activations: { id: number }[] }>(t, 'GET', `/licenses/${license.id}`);
    return req('POST', `/licenses/${license.id}/activations/${read.activations[0]!.id}/deactivate`, {});
  },
  'POST /v1/products': async () =>
    req('POST', '/products', {
      name: 'Covered product',
      type: 'simple',
      price: '9.00',
      licensing_enabled: 'yes',
    }),
  'PATCH /v1/products/{id}': async () => {
    const product = await newProduct();
    return req('PATCH', `/products/${product.id}`, { name: 'Renamed' });
  },
  'POST /v1/software/products/{product_id}/config': async () => {
    const product = await newProduct();
    return req('POST', `/software/products/${product.id}/config`, {
      slug: `covered-${product.id}`,
      software_enabled: 'yes',
    });
  },
  'POST /v1/coupons': async () =>
    req('POST', '/coupons', { code: 'covered10', discount_type: 'percent', amount: '10' }),
  'PATCH /v1/coupons/{id}': async () => {
    const coupon = await adminOk<{ id: number }>(t, 'POST', '/coupons', {
      code: 'covered-patch',
      discount_type: 'percent',
      amount: '10',
    });
    return req('PATCH', `/coupons/${coupon.id}`, { amount: '15' });
  },
  'DELETE /v1/coupons/{id}': async () => {
    const coupon = await adminOk<{ id: number }>(t, 'POST', '/coupons', {
      code: 'covered-delete',
      discount_type: 'percent',
      amount: '10',
    });
    return req('DELETE', `/coupons/${coupon.id}`);
  },
  'POST /v1/tax-rates': async () => req('POST', '/tax-rates', { country: 'DE', rate: '19', name: 'MwSt' }),
  'PATCH /v1/tax-rates/{id}': async () => {
    const rate = await adminOk<{ id: number }>(t, 'POST', '/tax-rates', {
      country: 'FR',
      rate: '20',
      name: 'TVA',
    });
    return req('PATCH', `/tax-rates/${rate.id}`, { rate: '5.5' });
  },
  'DELETE /v1/tax-rates/{id}': async () => {
    const rate = await adminOk<{ id: number }>(t, 'POST', '/tax-rates', {
      country: 'IT',
      rate: '22',
      name: 'IVA',
    });
    return req('DELETE', `/tax-rates/${rate.id}`);
  },
  'POST /v1/shipping-zones': async () =>
    req('POST', '/shipping-zones', { name: 'Nordics', regions: [{ country: 'SE' }], methods: [] }),
  'PATCH /v1/shipping-zones/{id}': async () => {
    const zone = await adminOk<{ id: number }>(t, 'POST', '/shipping-zones', {
      name: 'Alps',
      regions: [{ country: 'AT' }],
      methods: [],
    });
    return req('PATCH', `/shipping-zones/${zone.id}`, { name: 'Alpine' });
  },
  'DELETE /v1/shipping-zones/{id}': async () => {
    const zone = await adminOk<{ id: number }>(t, 'POST', '/shipping-zones', {
      name: 'Mistake',
      regions: [{ country: 'US' }],
      methods: [],
    });
    return req('DELETE', `/shipping-zones/${zone.id}`);
  },
  'PATCH /v1/payment-gateways/{id}': async () => {
    // New instructions for bank transfer: the test card, which the orders here pay with, stays on.
    return req('PATCH', '/payment-gateways/bacs', {
      instructions: `Pay to Example Ltd ${randomBytes(4).toString('hex')}`,
    });
  },
  'POST /v1/webhooks/events/{event_id}/redeliver': async () => {
    // A revocation puts license.revoked in the outbox; the event's id is read where the outbox
    // keeps it, as the attempt log lists only events already attempted.
    const license = await newLicense();
    await adminOk(t, 'DELETE', `/licenses/${license.id}`);
    const row = await t.app.services.database.db
      .selectFrom('webhook_events')
      .select('event_id')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    return req('POST', `/webhooks/events/${row.event_id}/redeliver`, {});
  },
  'POST /v1/mail/messages/{id}/resend': async () => {
    // A forgot-password request puts a message in the mail outbox (it waits: smtp_url is empty).
    const customer = await createCustomer(t);
    await t.app.inject({
      method: 'POST',
      url: '/v1/auth/password/forgot',
      payload: { email: customer.email },
    });
    const row = await t.app.services.database.db
      .selectFrom('mail_messages')
      .select('id')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    return req('POST', `/mail/messages/${row.id}/resend`, {});
  },
  'POST /v1/imports': async () => {
    // A dry run of an empty CSV export: the start is what is audited.
    const dir = join(t.config.dataDir, 'imports', 'covered');
    mkdirSync(dir, { recursive: true });
    for (const [file, header] of [
      ['customers.csv', 'id,email'],
      ['products.csv', 'id,name,slug,price'],
      ['licenses.csv', 'id,key,product_id,customer_id,status'],
    ]) {
      writeFileSync(join(dir, file as string), `${header}\r\n`);
    }
    return req('POST', '/imports', { source: 'csv', dry_run: true, dir: 'covered' });
  },
  'POST /v1/software/products/{product_id}/versions': async () => {
    const product = await softwareProduct(t);
    return () =>
      postForm(t, `/v1/software/products/${product.id}/versions`, [
        ['version', '1.0.0'],
        ['file', { filename: 'upload.zip', content: makeZip() }],
      ]);
  },
  'POST /v1/products/{id}/image': async () => {
    const product = await newProduct();
    return () => postForm(t, `/v1/products/${product.id}/image`, [['file', pngFile()]]);
  },
  'DELETE /v1/products/{id}/image': async () => {
    const product = await newProduct();
    expect((await postForm(t, `/v1/products/${product.id}/image`, [['file', pngFile()]])).statusCode).toBe(
      200,
    );
    return req('DELETE', `/products/${product.id}/image`);
  },
  'POST /v1/software/products/{product_id}/icon': async () => {
    const product = await softwareProduct(t);
    return () => postForm(t, `/v1/software/products/${product.id}/icon`, [['file', pngFile()]]);
  },
  'DELETE /v1/software/products/{product_id}/icon': async () => {
    const product = await softwareProduct(t);
    expect(
      (await postForm(t, `/v1/software/products/${product.id}/icon`, [['file', pngFile()]])).statusCode,
    ).toBe(200);
    return req('DELETE', `/software/products/${product.id}/icon`);
  },
  'POST /v1/software/products/{product_id}/banner': async () => {
    const product = await softwareProduct(t);
    return () => postForm(t, `/v1/software/products/${product.id}/banner`, [['file', pngFile()]]);
  },
  'DELETE /v1/software/products/{product_id}/banner': async () => {
    const product = await softwareProduct(t);
    expect(
      (await postForm(t, `/v1/software/products/${product.id}/banner`, [['file', pngFile()]])).statusCode,
    ).toBe(200);
    return req('DELETE', `/software/products/${product.id}/banner`);
  },
  'POST /v1/settings/logo': async () => {
    // Another picture than the last one: the setting must change to be recorded.
    await adminOk(t, 'DELETE', '/settings/logo');
    return () => postForm(t, '/v1/settings/logo', [['file', pngFile()]]);
  },
  'DELETE /v1/settings/logo': async () => {
    expect((await postForm(t, '/v1/settings/logo', [['file', pngFile()]])).statusCode).toBe(200);
    return req('DELETE', '/settings/logo');
  },
  'POST /v1/products/{id}/downloads': async () => {
    const product = await softwareProduct(t);
    return () =>
      postForm(t, `/v1/products/${product.id}/downloads`, [
        ['file', { filename: 'x.zip', content: makeZip() }],
      ]);
  },
  'PUT /v1/software/products/{product_id}/versions/{version_id}': async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    return req('PUT', `/software/products/${product.id}/versions/${r.version_id}`, { changelog: 'Fixes.' });
  },
  'PATCH /v1/software/products/{product_id}/versions/{version_id}/rollout': async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    return req('PATCH', `/software/products/${product.id}/versions/${r.version_id}/rollout`, {
      rollout_percent: 10,
    });
  },
  'POST /v1/software/products/{product_id}/versions/{version_id}/withdraw': async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    return req('POST', `/software/products/${product.id}/versions/${r.version_id}/withdraw`, {});
  },
  'POST /v1/software/products/{product_id}/versions/{version_id}/republish': async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0', [['status', 'draft']]);
    return req('POST', `/software/products/${product.id}/versions/${r.version_id}/republish`, {});
  },
  'POST /v1/software/products/{product_id}/artifacts/protect': async () => {
    const product = await softwareProduct(t);
    const download = await legacyDownload(product.id);
    return req('POST', `/software/products/${product.id}/artifacts/protect`, {
      download_id: download.download_id,
    });
  },
  'POST /v1/software/products/{product_id}/versions/{version_id}/delete-public-source': async () => {
    const product = await softwareProduct(t);
    const download = await legacyDownload(product.id);
    await adminOk(t, 'POST', `/software/products/${product.id}/artifacts/protect`, {
      download_id: download.download_id,
    });
    const draft = await adminOk<{ version_id: number }>(
      t,
      'POST',
      `/software/products/${product.id}/versions`,
      {
        version: '1.0.0',
        legacy_download_id: download.download_id,
        status: 'draft',
      },
    );
    return req(
      'POST',
      `/software/products/${product.id}/versions/${draft.version_id}/delete-public-source`,
      {},
    );
  },
  'POST /v1/software/storage/rotate-key': async () => {
    // An encrypted release sealed with key A, then a server started with key B and A as previous.
    const product = await softwareProduct(t, { storage_driver: 'local_encrypted' });
    await publish(t, product.id, '1.0.0');
    const rotating = await buildApp(
      { ...t.config, vaultKey: keyB, vaultPreviousKeys: [keyA] },
      t.db.database,
    );
    extraApps.push(rotating);
    return () =>
      rotating.inject({
        method: 'POST',
        url: '/v1/software/storage/rotate-key',
        headers: t.adminAuth,
        payload: {},
      });
  },
  'POST /v1/software/products/{product_id}/artifact-deletions': async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    const body = { release_ids: [r.version_id] };
    const preview = await deletionPreview(product.id, body);
    return req('POST', `/software/products/${product.id}/artifact-deletions`, { ...body, ...preview });
  },
  'DELETE /v1/software/products/{product_id}/artifacts/{artifact_id}': async () => {
    const product = await softwareProduct(t);
    const r = await publish(t, product.id, '1.0.0');
    const preview = await deletionPreview(product.id, { artifact_ids: [r.artifact_id] });
    return req('DELETE', `/software/products/${product.id}/artifacts/${r.artifact_id}`, preview);
  },
  'POST /v1/orders/{id}/status': async () => {
    const product = await newProduct();
    const order = await createOrder(t, { items: [{ product_id: product.id, qty: 1 }] });
    return req('POST', `/orders/${order.order_id}/status`, { status: 'completed' });
  },
  'POST /v1/orders/{id}/refunds': async () => {
    const product = await newProduct();
    const order = await createOrder(t, { items: [{ product_id: product.id, qty: 1 }] });
    await adminOk(t, 'POST', `/orders/${order.order_id}/status`, { status: 'processing' });
    return req('POST', `/orders/${order.order_id}/refunds`, { amount: '1.00' });
  },
  'POST /v1/orders/{id}/notes': async () => {
    const product = await newProduct();
    const order = await createOrder(t, { items: [{ product_id: product.id, qty: 1 }] });
    return req('POST', `/orders/${order.order_id}/notes`, { body: 'Called the customer.' });
  },
  'POST /v1/subscriptions': async () => {
    const product = await newProduct();
    const customer = await createCustomer(t);
    return req('POST', '/subscriptions', { user_id: customer.id, product_id: product.id });
  },
  'POST /v1/subscriptions/{id}/status': async () => {
    const subscription = await newSubscription();
    return req('POST', `/subscriptions/${subscription.id}/status`, { status: 'on-hold' });
  },
  'POST /v1/subscriptions/{id}/renewal-orders': async () => {
    const subscription = await newSubscription();
    return req('POST', `/subscriptions/${subscription.id}/renewal-orders`, {});
  },
};

const WRITES = new Set(['post', 'put', 'patch', 'delete']);
const fill = (path: string) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === 'op' || name === 'uuid' ? '00000000-0000-4000-8000-000000000000' : '1',
  );

let adminWrites: string[];
let otherWrites: string[];

beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1', VAULT_KEY: keyA.toString('base64') } });
  const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as {
    paths: Record<string, Record<string, { security?: unknown[] }>>;
  };
  // A customer with an application password: Basic authentication, so that no probe can end a
  // session (sign-out) and the nonce rule does not apply.
  const customer = await createCustomer(t);
  const created = await t.app.inject({
    method: 'POST',
    url: '/v1/users/me/application-passwords',
    headers: customer.headers,
    payload: { name: 'probe' },
  });
  expect(created.statusCode).toBe(201);
  const customerAuth = {
    authorization: basic(customer.email, (created.json() as { password: string }).password),
  };
  adminWrites = [];
  otherWrites = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!WRITES.has(method) || (op.security?.length ?? 0) === 0) continue;
      const res = await t.app.inject({
        method: method.toUpperCase() as 'POST',
        url: fill(path),
        headers: customerAuth,
        ...(method === 'delete' ? {} : { payload: {} }),
      });
      const route = `${method.toUpperCase()} ${path}`;
      if (res.statusCode === 403 && (res.json() as { code: string }).code === 'rest_forbidden')
        adminWrites.push(route);
      else otherWrites.push(route);
    }
  }
});
afterAll(async () => {
  for (const app of extraApps) await app.close();
  await t?.close();
});

const total = async () => Number((await admin(t, 'GET', '/audit-events?per_page=1')).headers['x-wp-total']);

describe('every administrator write route is recorded in the audit trail or exempt', () => {
  it('finds the administrator routes, and each has a fixture or a documented exemption, not both', () => {
    expect(adminWrites.length).toBeGreaterThan(30);
    expect(adminWrites).toContain('POST /v1/users');
    expect(adminWrites).toContain('POST /v1/test-clock');
    const uncovered = adminWrites.filter((r) => !(r in FIXTURES) && !(r in EXEMPT));
    expect(uncovered).toEqual([]);
    // A fixture or an exemption for a route that is gone (or not an administrator's) is stale.
    const stale = [...Object.keys(FIXTURES), ...Object.keys(EXEMPT)].filter((r) => !adminWrites.includes(r));
    expect(stale).toEqual([]);
    expect(Object.keys(FIXTURES).filter((r) => r in EXEMPT)).toEqual([]);
  });

  it("every other secured write route is a customer's own, listed", () => {
    expect(otherWrites.filter((r) => !USER_ROUTES.has(r))).toEqual([]);
    expect([...USER_ROUTES].filter((r) => !otherWrites.includes(r))).toEqual([]);
  });

  it.each(Object.keys(FIXTURES))('%s succeeds and leaves a new audit event', async (route) => {
    const send = await FIXTURES[route]!();
    const before = await total();
    const res = await send();
    expect(res.statusCode, res.body).toBeGreaterThanOrEqual(200);
    expect(res.statusCode, res.body).toBeLessThan(300);
    const after = await total();
    expect(after, route).toBeGreaterThan(before);
    const events = (
      await adminOk<{ actor: { email: string } }[]>(t, 'GET', `/audit-events?per_page=${after - before}`)
    ).map((e) => e.actor.email);
    expect(new Set(events)).toEqual(new Set([ADMIN.email]));
  });
});
