import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createTestApp, login, type TestApp } from '../helpers/app.js';

/**
 * The routes anyone may call: licensing and updates (the key is the credential), the cart and
 * checkout (guests buy), sign-in, and health. Every other route must say in the OpenAPI document
 * that it needs a caller, and must answer an anonymous request 401 before it looks at the input.
 */
const PUBLIC = new Set([
  'GET /v1/health',
  'POST /v1/auth/login',
  'POST /v1/auth/password/forgot',
  'POST /v1/auth/sign-in-link',
  'POST /v1/auth/sign-in-link/claim',
  'POST /v1/auth/password/reset',
  'GET /v1/auth/me',
  'POST /v1/licenses/activate',
  'POST /v1/licenses/validate',
  'POST /v1/licenses/deactivate',
  // A trial for an email (and a site): once each, the plugin calls it without credentials.
  'POST /v1/trials',
  // A license transfer's emailed link: its single-use token authorizes the accept.
  'POST /v1/transfers/accept',
  'GET /v1/software/check',
  'POST /v1/software/check',
  'POST /v1/software/package',
  'GET /v1/software/download',
  'GET /v1/software/changelog',
  'GET /v1/software/signing-keys',
  'GET /v1/software/products/{product_id}/versions/{version_id}/external-link',
  'GET /v1/cart',
  'POST /v1/cart/add',
  'POST /v1/cart/update',
  'POST /v1/cart/remove',
  'POST /v1/cart/clear',
  'POST /v1/cart/apply-coupon',
  'POST /v1/cart/remove-coupon',
  'GET /v1/checkout/bootstrap',
  'POST /v1/checkout/quote',
  'POST /v1/checkout/fields',
  'POST /v1/checkout/shipping-rates',
  'POST /v1/checkout/submit',
  'GET /v1/checkout/order/{id}',
  'POST /v1/checkout/pay-order/{id}',
  // Stripe signs its events (Stripe-Signature), it has no account here.
  'POST /v1/stripe/webhook',
  'GET /v1/countries',
  // License Manager for WooCommerce's routes (test/legacy/lmfwc-api.test.ts): no Tollgate caller,
  // the old store's REST key instead; kept out of the OpenAPI document like EDD's calls.
  'GET /wp-json/lmfwc/v2/licenses/activate/{license_key}',
  'GET /wp-json/lmfwc/v2/licenses/deactivate/{license_key}',
  'GET /wp-json/lmfwc/v2/licenses/validate/{license_key}',
  'GET /wp-json/lmfwc/v2/licenses/{license_key}',
  // The signed package link EDD's get_version answers (test/legacy/edd-api.test.ts): its HMAC
  // authorizes it, and opening it checks the license again before minting a download token.
  'GET /edd-sl/package',
]);

const PARAM_VALUES: Record<string, string> = {
  uuid: '00000000-0000-4000-8000-000000000000',
  op: '00000000-0000-4000-8000-000000000000',
};
const fill = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => PARAM_VALUES[name] ?? '1');

let t: TestApp;
let routes: { method: string; path: string; secured: boolean }[];
beforeAll(async () => {
  t = await createTestApp();
  const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as {
    paths: Record<string, Record<string, { security?: unknown[] }>>;
  };
  routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      secured: (op.security?.length ?? 0) > 0,
    })),
  );
});
afterAll(async () => t.close());

describe('authentication runs before validation on every non-public route', () => {
  it('every route of the OpenAPI document is either public or declares its security', () => {
    expect(routes.length).toBeGreaterThan(80);
    const undeclared = routes.filter((r) => !r.secured && !PUBLIC.has(`${r.method} ${r.path}`));
    expect(undeclared).toEqual([]);
    const securedPublic = routes.filter((r) => r.secured && PUBLIC.has(`${r.method} ${r.path}`));
    expect(securedPublic).toEqual([]);
  });

  it('anonymous with an empty body: 401 rest_not_logged_in, never a validation error', async () => {
    const answers: string[] = [];
    for (const r of routes.filter((x) => x.secured)) {
      const res = await t.app.inject({
        method: r.method as 'GET',
        url: fill(r.path),
        ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { payload: {} }),
      });
      answers.push(`${r.method} ${r.path} ${res.statusCode} ${(res.json() as { code?: string }).code}`);
    }
    expect(answers.filter((a) => !a.endsWith(' 401 rest_not_logged_in'))).toEqual([]);
    expect(answers).toContain('POST /v1/users 401 rest_not_logged_in');
  });

  it("the administrator's session cookie without its nonce is anonymous on every write", async () => {
    const { cookie } = await login(t.app, ADMIN.email, ADMIN.password);
    const answers: string[] = [];
    for (const r of routes.filter((x) => x.secured && x.method !== 'GET')) {
      const res = await t.app.inject({
        method: r.method as 'POST',
        url: fill(r.path),
        headers: { cookie },
        ...(r.method === 'DELETE' ? {} : { payload: {} }),
      });
      answers.push(`${r.method} ${r.path} ${res.statusCode} ${(res.json() as { code?: string }).code}`);
    }
    expect(answers.filter((a) => !a.endsWith(' 401 rest_not_logged_in'))).toEqual([]);
  });

  it('a guard placed after validation is refused when the route is registered', async () => {
    const { requireAdmin } = await import('../../src/http/auth.js');
    const { default: Fastify } = await import('fastify');
    const { installAuth } = await import('../../src/http/auth.js');
    const app = Fastify();
    installAuth(app, t.app.services.accounts);
    expect(() => app.post('/late', { preHandler: requireAdmin }, async () => ({}))).toThrow(/preValidation/);
    await app.close();
  });
});
