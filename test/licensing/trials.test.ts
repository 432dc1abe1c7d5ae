import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, protectedFixture } from '../distribution/helpers.js';
import {
  adminOk,
  advanceClock,
  createTestApp,
  expectError,
  post,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import {
  BILLING,
  configureSoftware,
  createOrder,
  createProduct,
  identity,
  uniqueEmail,
} from '../helpers/factories.js';

// Trials (docs/selling.md, 'Trials'): POST /v1/trials gives a trial license once per email and per
// site; the purchase converts it in place; its end is the effective status `trial_ended`.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await setSettings(t, { rate_limit: 1000 });
});
afterAll(async () => t.close());

const DAY = 86_400;
const db = () => t.app.services.database.db;

async function trialProduct(days = 14, sites = 2) {
  const product = await createProduct(t, { activation_limit: 5 });
  await configureSoftware(t, product.id, { trial_days: days, trial_sites: sites } as never);
  return product;
}

describe('POST /v1/trials', () => {
  it('issues a trial license for the configured days and sites, shown in the software config', async () => {
    const product = await trialProduct(14, 2);
    const config = await adminOk(t, 'GET', `/software/products/${product.id}/config`);
    expect(config).toMatchObject({ trial_days: 14, trial_sites: 2 });
    const before = Date.now();
    const res = await post(t, '/trials', { product_id: product.id, email: uniqueEmail('trial') });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ product_id: product.id, activation_limit: 2 });
    const days = (Date.parse(body.usage_expires_at) - before) / (DAY * 1000);
    expect(days).toBeGreaterThan(13.9);
    expect(days).toBeLessThan(14.1);
    const row = await db()
      .selectFrom('licenses')
      .selectAll()
      .where('license_key', '=', body.license_key)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ trial: 1, order_id: null, activation_limit: 2 });
  });

  it('once per email: a second trial of the product for that email is 409 trial_already_used', async () => {
    const product = await trialProduct();
    const email = uniqueEmail('once');
    expect((await post(t, '/trials', { product_id: product.id, email })).statusCode).toBe(201);
    expectError(
      await post(t, '/trials', { product_id: product.id, email: email.toUpperCase() }),
      409,
      'trial_already_used',
    );
    // Another product's trial is its own.
    const other = await trialProduct();
    expect((await post(t, '/trials', { product_id: other.id, email })).statusCode).toBe(201);
  });

  it('once per site: another email on the same site is refused, and nothing is issued', async () => {
    const product = await trialProduct();
    const first = await post(t, '/trials', {
      product_id: product.id,
      email: uniqueEmail(),
      site: 'Shop.Example',
    });
    expect(first.statusCode, first.body).toBe(201);
    const count = async () =>
      (await db().selectFrom('licenses').select('id').where('product_id', '=', product.id).execute()).length;
    expectError(
      await post(t, '/trials', {
        product_id: product.id,
        email: uniqueEmail(),
        site: 'https://shop.example/',
      }),
      409,
      'trial_already_used',
    );
    expect(await count()).toBe(1);
  });

  it('a product without a trial is 400 trial_not_offered; an unknown product 404 product_not_found', async () => {
    const plain = await createProduct(t);
    expectError(
      await post(t, '/trials', { product_id: plain.id, email: uniqueEmail() }),
      400,
      'trial_not_offered',
    );
    expectError(
      await post(t, '/trials', { product_id: 999999, email: uniqueEmail() }),
      404,
      'product_not_found',
    );
  });

  it('refuses bad input with a 400 and issues nothing', async () => {
    const product = await trialProduct();
    const before = await db().selectFrom('licenses').select('id').execute();
    const cases: [Record<string, unknown>, string][] = [
      [{ product_id: product.id }, 'rest_missing_param'],
      [{ product_id: product.id, email: 'not-an-email' }, 'rest_invalid_param'],
      [{ product_id: 'x', email: uniqueEmail() }, 'rest_invalid_param'],
      [{ product_id: product.id, email: uniqueEmail(), extra: 1 }, 'invalid_parameters'],
      [{ product_id: product.id, email: uniqueEmail(), site: 'x'.repeat(300) }, 'rest_invalid_param'],
      [{ product_id: product.id, email: uniqueEmail(), site: '<script>' }, 'invalid_identity'],
    ];
    for (const [payload, code] of cases) expectError(await post(t, '/trials', payload), 400, code);
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/v1/trials',
      headers: { 'content-type': 'application/json' },
      payload: '{"product_id":',
    });
    expect(malformed.statusCode).toBe(400);
    expect((await db().selectFrom('licenses').select('id').execute()).length).toBe(before.length);
  });

  it('the software config refuses a trial of 0 days', async () => {
    const product = await createProduct(t);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/software/products/${product.id}/config`,
      headers: t.adminAuth,
      payload: { trial_days: 0 },
    });
    expect(res.statusCode).toBe(400);
  });
});

describe('the end of a trial and its purchase', () => {
  it('a trial past its days validates as trial_ended (test clock); a paid license as expired stays expired', async () => {
    const product = await trialProduct(3, 1);
    const trial = (await post(t, '/trials', { product_id: product.id, email: uniqueEmail() })).json();
    const site = identity('ending.example');
    expect(
      (await post(t, '/licenses/activate', { license_key: trial.license_key, ...site })).statusCode,
    ).toBe(200);
    const ok = await post(t, '/licenses/validate', { license_key: trial.license_key, ...site });
    expect(ok.json()).toMatchObject({ valid: true, effective_status: 'valid' });
    await advanceClock(t, 3 * DAY + 60);
    const ended = await post(t, '/licenses/validate', { license_key: trial.license_key, ...site });
    expect(ended.statusCode).toBe(403);
    expect(ended.json()).toMatchObject({
      valid: false,
      error: 'trial_ended',
      effective_status: 'trial_ended',
    });
  });

  it('the update check of an ended trial is 403 trial_ended', async () => {
    const f = await protectedFixture(t);
    await db()
      .updateTable('licenses')
      .set({ trial: 1, usage_expires_at: '2020-01-01T00:00:00Z' })
      .where('id', '=', f.licenseId)
      .execute();
    const res = await call(t, 'POST', '/software/check', { slug: f.slug, version: '0.9.0', ...f.creds });
    expectError(res, 403, 'trial_ended');
    expect(typeof res.json().message).toBe('string');
  });

  it('buying the product converts the trial in place: same key, activations kept, no longer a trial', async () => {
    const product = await trialProduct(7, 1);
    const email = uniqueEmail('convert');
    const trial = (await post(t, '/trials', { product_id: product.id, email })).json();
    const site = identity('convert.example');
    const activated = await post(t, '/licenses/activate', { license_key: trial.license_key, ...site });
    expect(activated.statusCode, activated.body).toBe(200);
    const placed = await createOrder(t, {
      items: [{ product_id: product.id, qty: 1 }],
      billing: { ...BILLING, email },
    });
    const paid = await t.app.inject({
      method: 'POST',
      url: `/v1/checkout/pay-order/${placed.order_id}`,
      payload: {
        key: placed.order_key,
        payment_method: 'test_card',
        payment_data: { card_number: '4242424242424242' },
      },
    });
    expect(paid.json(), paid.body).toMatchObject({ ok: true });
    const licenses = await db()
      .selectFrom('licenses')
      .selectAll()
      .where('product_id', '=', product.id)
      .execute();
    expect(licenses).toHaveLength(1);
    expect(licenses[0]).toMatchObject({ license_key: trial.license_key, trial: 0, activation_limit: 5 });
    expect(licenses[0]!.order_id).not.toBeNull();
    expect(licenses[0]!.usage_expires_at).toBeNull();
    const valid = await post(t, '/licenses/validate', { license_key: trial.license_key, ...site });
    expect(valid.json()).toMatchObject({ valid: true, effective_status: 'valid', activation_count: 1 });
    // Converted, the email's trial is still used.
    expectError(await post(t, '/trials', { product_id: product.id, email }), 409, 'trial_already_used');
  });
});
