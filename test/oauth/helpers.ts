import { post, type TestApp } from '../helpers/app.js';
import { type Customer, createLicense, createProduct, identity } from '../helpers/factories.js';

/** A customer's license on a product that requires approval (product override), and a site to activate. */
export async function approvalFixture(
  t: TestApp,
  owner: Customer,
  opts: { name?: string; limit?: number; mode?: 'oauth' | 'simple' | null; domain?: string } = {},
) {
  const product = await createProduct(
    t,
    {
      name: opts.name ?? 'Forms Pro',
      activation_mode: opts.mode === undefined ? 'oauth' : opts.mode,
      activation_limit: opts.limit ?? 3,
    },
    { via: 'database' },
  );
  const license = await createLicense(t, { product_id: product.id, user_id: owner.id });
  const site = identity(opts.domain ?? 'https://Shop.Example.com/wp-admin/');
  return {
    product,
    license,
    key: license.license_key,
    site,
    returnUrl: 'https://shop.example.com/wp-admin/cb?page=lic',
  };
}

/** Activate with return_url; answers the oauth_required body with the state and nonce of its redirect_url. */
export async function requestApproval(
  t: TestApp,
  key: string,
  site: { domain: string; installation_id: string },
  returnUrl: string,
) {
  const res = await post(t, '/licenses/activate', { license_key: key, ...site, return_url: returnUrl });
  if (res.statusCode !== 200 || res.json().code !== 'oauth_required') {
    throw new Error(`expected oauth_required, got ${res.statusCode} ${res.body}`);
  }
  const body = res.json() as { redirect_url: string };
  const url = new URL(body.redirect_url);
  return { body, url, state: url.searchParams.get('state')!, nonce: url.searchParams.get('nonce')! };
}

export function validateApproval(t: TestApp, headers: Record<string, string>, query: Record<string, string>) {
  return t.app.inject({
    method: 'GET',
    url: `/v1/licenses/oauth/validate?${new URLSearchParams(query)}`,
    headers,
  });
}

export function confirm(t: TestApp, headers: Record<string, string>, payload: unknown) {
  return post(t, '/licenses/oauth/confirm', payload, headers);
}

/** Runs the single-page flow to the end: request, confirm; answers the token and callback URL. */
export async function approvedToken(
  t: TestApp,
  owner: Customer,
  key: string,
  site: { domain: string; installation_id: string },
  returnUrl: string,
) {
  const { state, nonce } = await requestApproval(t, key, site, returnUrl);
  const res = await confirm(t, owner.headers, { license_key: key, state, nonce });
  if (res.statusCode !== 200) throw new Error(`confirm failed: ${res.statusCode} ${res.body}`);
  const body = res.json() as { redirect_url: string; activation_token: string };
  return { token: body.activation_token, redirect: new URL(body.redirect_url), state, nonce };
}

export const exchange = (
  t: TestApp,
  key: string,
  site: { domain: string; installation_id: string },
  token: string,
) => post(t, '/licenses/activate', { license_key: key, ...site, activation_token: token });

export const validateLicense = (t: TestApp, key: string, site: { domain: string; installation_id: string }) =>
  post(t, '/licenses/validate', { license_key: key, ...site });

/** Form posts of the customer pages: the session cookie only, fields url-encoded. */
export function formPost(
  t: TestApp,
  url: string,
  cookie: string | undefined,
  fields: Record<string, string>,
) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(cookie ? { cookie } : {}),
    },
    payload: new URLSearchParams(fields).toString(),
  });
}
