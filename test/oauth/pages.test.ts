import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, post, setSettings, type TestApp } from '../helpers/app.js';
import { type Customer, createCustomer } from '../helpers/factories.js';
import { approvalFixture, exchange, formPost, requestApproval, validateLicense } from './helpers.js';

let t: TestApp;
let alice: Customer;
let bob: Customer;
beforeAll(async () => {
  t = await createTestApp();
  alice = await createCustomer(t, 'alice@example.com');
  bob = await createCustomer(t, 'bob@example.com');
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const get = (url: string, who?: Customer) =>
  t.app.inject({ method: 'GET', url, headers: who ? { cookie: who.headers.cookie } : {} });
const nonceOf = (who: Customer) => who.headers['x-rest-nonce'];
const tokenCount = async (licenseId: number) =>
  (
    await db()
      .selectFrom('oauth_activation_tokens')
      .select('id')
      .where('license_id', '=', licenseId)
      .execute()
  ).length;

function expectPageHeaders(res: LightMyRequestResponse) {
  expect(res.headers['content-security-policy']).toMatch(/^default-src 'self';/);
  expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['cache-control']).toBe('no-store');
}

/** The hidden field of that name in a rendered form. */
const hidden = (body: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(body)?.[1];

describe('sign-in page', () => {
  it('renders a plain form (no script) with a form token, under the page security headers', async () => {
    const res = await get('/account/sign-in?next=%2Faccount%2Fapprove%3Fstate%3Dabc');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expectPageHeaders(res);
    expect(res.body).not.toMatch(/<script/i);
    expect(res.body).toContain('<form method="post" action="/account/sign-in">');
    expect(hidden(res.body, 'next')).toBe('/account/approve?state=abc');
    const cookie = res.cookies.find((c) => c.name === 'tollgate_form')!;
    expect(hidden(res.body, '_csrf')).toBe(cookie.value);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  });

  it('signs in and goes back where the customer was going; a wrong password re-renders with 401', async () => {
    const page = await get('/account/sign-in');
    const form = page.cookies.find((c) => c.name === 'tollgate_form')!.value;
    const cookie = `tollgate_form=${form}`;
    const wrong = await formPost(t, '/account/sign-in', cookie, {
      _csrf: form,
      next: '/account/approve?state=abc',
      email: alice.email,
      password: 'nope',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('incorrect');
    expect(wrong.body).toContain(`value="${alice.email}"`); // kept, so only the password is typed again
    const hostile = await formPost(t, '/account/sign-in', cookie, {
      _csrf: form,
      email: '"><script>alert(1)</script>',
      password: 'nope',
    });
    expect(hostile.body).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(hostile.body).not.toContain('<script>');
    const ok = await formPost(t, '/account/sign-in', cookie, {
      _csrf: form,
      next: '/account/approve?state=abc',
      email: alice.email,
      password: alice.password,
    });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/account/approve?state=abc');
    const session = ok.cookies.find((c) => c.name === 'tollgate_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    const mine = await t.app.inject({
      method: 'GET',
      url: '/account/licenses',
      headers: { cookie: `tollgate_session=${session.value}` },
    });
    expect(mine.statusCode).toBe(200);
    expect(mine.body).toContain(`Signed in as ${alice.email}`);
  });

  it('refuses a post without the form token (login CSRF) with 403 and no session', async () => {
    const res = await formPost(t, '/account/sign-in', undefined, {
      email: alice.email,
      password: alice.password,
    });
    expect(res.statusCode).toBe(403);
    expect(res.cookies.find((c) => c.name === 'tollgate_session')).toBeUndefined();
  });

  it('never redirects to another site after sign-in', async () => {
    const page = await get('/account/sign-in');
    const form = page.cookies.find((c) => c.name === 'tollgate_form')!.value;
    for (const next of [
      'https://evil.example/account/x',
      '//evil.example/account/',
      '/\\evil.example',
      '/v1/licenses',
    ]) {
      const res = await formPost(t, '/account/sign-in', `tollgate_form=${form}`, {
        _csrf: form,
        next,
        email: alice.email,
        password: alice.password,
      });
      expect([next, res.headers.location]).toEqual([next, '/account/licenses']);
    }
  });

  it('an already signed-in customer goes straight on', async () => {
    const res = await get('/account/sign-in?next=%2Faccount%2Flicenses', alice);
    expect([res.statusCode, res.headers.location]).toEqual([303, '/account/licenses']);
  });
});

describe('approval page', () => {
  it('anonymous -> 303 to sign-in, which leads back to the same approval URL', async () => {
    const f = await approvalFixture(t, alice);
    const { url } = await requestApproval(t, f.key, f.site, f.returnUrl);
    const res = await get(url.pathname + url.search);
    expect(res.statusCode).toBe(303);
    const signIn = new URL(res.headers.location as string, 'http://x');
    expect(signIn.pathname).toBe('/account/sign-in');
    expect(signIn.searchParams.get('next')).toBe(url.pathname + url.search);
  });

  it('shows the owner which site (normalised) asks for which license, escaped, with Approve and Deny', async () => {
    const f = await approvalFixture(t, alice, { name: '<img src=x onerror=alert(1)> Pro' });
    const { url, state } = await requestApproval(t, f.key, f.site, f.returnUrl);
    const res = await get(url.pathname + url.search, alice);
    expect(res.statusCode).toBe(200);
    expectPageHeaders(res);
    expect(res.headers['content-security-policy']).toContain("form-action 'self' https://shop.example.com");
    expect(res.body).toContain('shop.example.com');
    expect(res.body).not.toContain('Shop.Example.com');
    expect(res.body).toContain('&lt;img src=x onerror=alert(1)&gt; Pro');
    expect(res.body).not.toContain('<img');
    expect(res.body).toContain(f.key);
    expect(res.body).toContain(f.site.installation_id);
    expect(res.body).toMatch(/<button type="submit" class="primary">Approve<\/button>/);
    expect(res.body).toMatch(/<button type="submit" class="danger">Deny<\/button>/);
    expect(hidden(res.body, 'state')).toBe(state);
    expect(hidden(res.body, '_nonce')).toBe(nonceOf(alice));
  });

  it("another customer's request -> 403 page without the license, offering to switch account or cancel", async () => {
    const f = await approvalFixture(t, alice);
    const { url } = await requestApproval(t, f.key, f.site, f.returnUrl);
    const res = await get(url.pathname + url.search, bob);
    expect(res.statusCode).toBe(403);
    expect(res.body).not.toContain(f.key);
    expect(res.body).not.toContain('>Approve<');
    expect(res.body).toContain('Sign in with another account');
  });

  it('a tampered or missing state -> 400 page, never a stack trace', async () => {
    const res = await get('/account/approve?state=abc.def', alice);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('invalid or has expired');
    expect((await get('/account/approve', alice)).statusCode).toBe(400);
  });

  it('Approve without the session nonce (a cross-site form) -> 403, nothing issued', async () => {
    const f = await approvalFixture(t, alice);
    const { state } = await requestApproval(t, f.key, f.site, f.returnUrl);
    const attempts: Record<string, string>[] = [
      { state, decision: 'approve' },
      { state, decision: 'approve', _nonce: 'f'.repeat(32) },
    ];
    for (const fields of attempts) {
      const res = await formPost(t, '/account/approve', alice.headers.cookie, fields);
      expect(res.statusCode).toBe(403);
    }
    expect(await tokenCount(f.license.id)).toBe(0);
  });

  it('Approve -> 303 to the callback with activation_token, license_key and state; the site exchanges it', async () => {
    const f = await approvalFixture(t, alice);
    const { state } = await requestApproval(t, f.key, f.site, f.returnUrl);
    const res = await formPost(t, '/account/approve', alice.headers.cookie, {
      _nonce: nonceOf(alice),
      state,
      decision: 'approve',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const cb = new URL(res.headers.location as string);
    expect(`${cb.origin}${cb.pathname}`).toBe('https://shop.example.com/wp-admin/cb');
    expect(cb.searchParams.get('page')).toBe('lic');
    expect(cb.searchParams.get('license_key')).toBe(f.key);
    expect(cb.searchParams.get('state')).toBe(state);
    expect(cb.searchParams.has('nonce')).toBe(false);
    const token = cb.searchParams.get('activation_token')!;
    expect((await exchange(t, f.key, f.site, token)).statusCode).toBe(200);
    expect((await validateLicense(t, f.key, f.site)).json().valid).toBe(true);
  });

  it('Deny -> 303 to the callback with error=access_denied and state; nothing issued', async () => {
    const f = await approvalFixture(t, alice);
    const { state } = await requestApproval(t, f.key, f.site, f.returnUrl);
    const res = await formPost(t, '/account/approve', alice.headers.cookie, {
      _nonce: nonceOf(alice),
      state,
      decision: 'deny',
    });
    expect(res.statusCode).toBe(303);
    const cb = new URL(res.headers.location as string);
    expect(cb.searchParams.get('error')).toBe('access_denied');
    expect(cb.searchParams.get('state')).toBe(state);
    expect(cb.searchParams.has('activation_token')).toBe(false);
    expect(await tokenCount(f.license.id)).toBe(0);
  });
});

describe('My licenses page', () => {
  async function activated(owner: Customer) {
    const f = await approvalFixture(t, owner, { mode: 'simple' });
    const act = (await post(t, '/licenses/activate', { license_key: f.key, ...f.site })).json();
    return { ...f, activationId: act.activation_id as number };
  }
  const status = async (id: number) =>
    (await db().selectFrom('activations').select('status').where('id', '=', id).executeTakeFirstOrThrow())
      .status;

  it('anonymous -> 303 to sign-in', async () => {
    const res = await get('/account/licenses');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account/sign-in?next=%2Faccount%2Flicenses');
  });

  it("lists only the customer's licenses with their activations and a Deactivate button", async () => {
    const mine = await activated(alice);
    const theirs = await activated(bob);
    const res = await get('/account/licenses', alice);
    expect(res.statusCode).toBe(200);
    expectPageHeaders(res);
    expect(res.body).toContain(mine.key);
    expect(res.body).not.toContain(theirs.key);
    expect(res.body).toContain('shop.example.com');
    expect(res.body).toContain(`action="/account/licenses/${mine.license.id}/deactivate"`);
    expect(res.body).toContain(`name="activation_id" value="${mine.activationId}"`);
  });

  it('Deactivate frees the slot and says so; validate then answers domain_not_activated', async () => {
    const f = await activated(alice);
    const res = await formPost(t, `/account/licenses/${f.license.id}/deactivate`, alice.headers.cookie, {
      _nonce: nonceOf(alice),
      activation_id: String(f.activationId),
    });
    expect([res.statusCode, res.headers.location]).toEqual([303, '/account/licenses?notice=deactivated']);
    expect(await status(f.activationId)).toBe('deactivated');
    expect((await validateLicense(t, f.key, f.site)).json().error).toBe('domain_not_activated');
    const page = await get('/account/licenses?notice=deactivated', alice);
    expect(page.body).toContain('was deactivated');
  });

  it('Deactivate without the session nonce -> 403, still active', async () => {
    const f = await activated(alice);
    const res = await formPost(t, `/account/licenses/${f.license.id}/deactivate`, alice.headers.cookie, {
      activation_id: String(f.activationId),
    });
    expect(res.statusCode).toBe(403);
    expect(await status(f.activationId)).toBe('active');
  });

  it("another customer's license -> not found, nothing changes", async () => {
    const f = await activated(alice);
    const res = await formPost(t, `/account/licenses/${f.license.id}/deactivate`, bob.headers.cookie, {
      _nonce: nonceOf(bob),
      activation_id: String(f.activationId),
    });
    expect(res.headers.location).toBe('/account/licenses?error=not_found');
    expect(await status(f.activationId)).toBe('active');
  });

  it('respects customer_deactivation_enabled: no buttons, and a post is refused', async () => {
    const f = await activated(alice);
    await setSettings(t, { customer_deactivation_enabled: false });
    try {
      const page = await get('/account/licenses', alice);
      expect(page.body).not.toContain('/deactivate"');
      expect(page.body).toContain('turned off by the store');
      const res = await formPost(t, `/account/licenses/${f.license.id}/deactivate`, alice.headers.cookie, {
        _nonce: nonceOf(alice),
        activation_id: String(f.activationId),
      });
      expect(res.headers.location).toBe('/account/licenses?error=deactivation_disabled');
      expect(await status(f.activationId)).toBe('active');
    } finally {
      await setSettings(t, { customer_deactivation_enabled: true });
    }
  });
});

describe('shared parts', () => {
  it('the stylesheet is served from our origin as text/css', async () => {
    const res = await get('/account/assets/style.css');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/css/);
  });

  it('sign-out needs the session nonce and ends the session', async () => {
    const carol = await createCustomer(t, 'carol@example.com');
    expect((await formPost(t, '/account/sign-out', carol.headers.cookie, {})).statusCode).toBe(403);
    const res = await formPost(t, '/account/sign-out', carol.headers.cookie, { _nonce: nonceOf(carol) });
    expect([res.statusCode, res.headers.location]).toEqual([303, '/account/sign-in']);
    expect((await get('/account/licenses', carol)).statusCode).toBe(303);
  });

  it('pages stay out of the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/account/') && !p.startsWith('/v1'))).toEqual(
      [],
    );
    expect(Object.keys(doc.paths)).toContain('/v1/licenses/oauth/confirm');
  });
});

describe('odd requests to the pages', () => {
  it('a JSON body with non-text fields is treated like an empty form, never a 500', async () => {
    const signIn = await t.app.inject({
      method: 'POST',
      url: '/account/sign-in',
      payload: { email: 5, password: ['x'], next: { a: 1 } },
    });
    expect(signIn.statusCode).toBe(403);
    const approve = await t.app.inject({
      method: 'POST',
      url: '/account/approve',
      headers: { cookie: alice.headers.cookie },
      payload: { _nonce: 1, state: 2 },
    });
    expect(approve.statusCode).toBe(403);
    expect(approve.headers['content-type']).toMatch(/^text\/html/);
  });

  it('a repeated or empty state parameter is a missing state', async () => {
    expect((await get('/account/approve?state=a&state=b', alice)).statusCode).toBe(400);
    expect((await get('/account/approve?state=', alice)).statusCode).toBe(400);
  });
});
