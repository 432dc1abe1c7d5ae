import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/random.js';
import { Browser } from '../cart/helpers.js';
import { submit } from '../checkout/helpers.js';
import {
  admin,
  adminOk,
  advanceClock,
  createTestApp,
  expectError,
  login,
  type TestApp,
} from '../helpers/app.js';
import { BILLING, createCustomer, createProduct, uniqueEmail } from '../helpers/factories.js';

/**
 * A buyer is never locked out (docs/storefront.md, 'Set a password' and 'Sign-in link'): the
 * account checkout makes sets its first password without a current one (and only then), and a
 * one-time sign-in link signs a customer in once, within 15 minutes on the test clock, limited per
 * address and per email, with the same answer for any address. On both databases.
 */
let t: TestApp;
let productId: number;
let url: string;
beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await adminOk(t, 'PATCH', '/settings', { checkout_rate_limit: 1000 });
  productId = (await createProduct(t)).id;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t.close();
});

/** A guest buys with the test card: checkout makes the account and signs the browser in. */
async function newBuyer(): Promise<{ b: Browser; email: string; userId: number }> {
  const b = new Browser(t);
  const email = uniqueEmail('buyer');
  const { res, body } = await submit(b, {
    items: [{ product_id: productId, qty: 1 }],
    billing: { ...BILLING, email },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(body.user_logged_in).toBe(true);
  const me = await b.get('/auth/me');
  expect(me.statusCode).toBe(200);
  b.nonce = (me.json() as { nonce: string }).nonce;
  return { b, email, userId: (me.json() as { user: { id: number } }).user.id };
}

const passwordSet = async (userId: number) =>
  (
    await t.app.services.database.db
      .selectFrom('users')
      .select('password_set')
      .where('id', '=', userId)
      .executeTakeFirstOrThrow()
  ).password_set;

const signInLink = (email: unknown, ip = '10.0.0.1') =>
  t.app.inject({ method: 'POST', url: '/v1/auth/sign-in-link', payload: { email }, remoteAddress: ip });

const claim = (token: unknown) =>
  t.app.inject({ method: 'POST', url: '/v1/auth/sign-in-link/claim', payload: { token } });

describe('set a password', () => {
  it('an account made at checkout sets its first password without a current one, then needs it', async () => {
    const { b, email, userId } = await newBuyer();
    expect(Number(await passwordSet(userId))).toBe(0);
    // Nothing opens the account before: its hash is checkout's unusable one.
    const before = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { email, password: 'first password 1' },
    });
    expectError(before, 401, 'invalid_credentials');

    const set = await b.post('/users/me/password', { password: 'first password 1' });
    expect(set.statusCode, set.body).toBe(200);
    expect(Number(await passwordSet(userId))).toBe(1);
    await login(t.app, email, 'first password 1');

    // Now that it has one, the current password is required, and must be right.
    expectError(
      await b.post('/users/me/password', { password: 'second password 2' }),
      400,
      'current_password_required',
    );
    expectError(
      await b.post('/users/me/password', { password: 'second password 2', current_password: 'wrong one' }),
      400,
      'incorrect_current_password',
    );
    const changed = await b.post('/users/me/password', {
      password: 'second password 2',
      current_password: 'first password 1',
    });
    expect(changed.statusCode, changed.body).toBe(200);
    await login(t.app, email, 'second password 2');
    // The session that set it stays signed in.
    expect((await b.get('/auth/me')).statusCode).toBe(200);
  });

  it('an account with a password is refused without the current one, whatever it sends', async () => {
    const email = uniqueEmail('has-password');
    await createCustomer(t, email, 'customer-password-1');
    const headers = await login(t.app, email, 'customer-password-1');
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/users/me/password',
      headers,
      payload: { password: 'taken over password' },
    });
    expectError(res, 400, 'current_password_required');
    await login(t.app, email, 'customer-password-1');
  });

  it('parallel first passwords: exactly one is set, the others need it', async () => {
    const { b, email } = await newBuyer();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        b.post('/users/me/password', { password: `parallel password ${i}` }),
      ),
    );
    const ok = results.map((r, i) => [r, i] as const).filter(([r]) => r.statusCode === 200);
    expect(ok).toHaveLength(1);
    for (const r of results) if (r.statusCode !== 200) expectError(r, 400, 'current_password_required');
    await login(t.app, email, `parallel password ${ok[0]![1]}`);
  });

  it('refuses the anonymous, bad input and a cross-site form, changing nothing', async () => {
    const { b, userId } = await newBuyer();
    const anonymous = await t.app.inject({
      method: 'POST',
      url: '/v1/users/me/password',
      payload: { password: 'anonymous password' },
    });
    expectError(anonymous, 401, 'rest_not_logged_in');
    expectError(await b.post('/users/me/password', { password: 'short' }), 400, 'invalid_password');
    expectError(await b.post('/users/me/password', { password: 'x'.repeat(1025) }), 400, 'invalid_password');
    expectError(await b.post('/users/me/password', { password: 12345678 }), 400, 'invalid_password');
    expectError(
      await b.post('/users/me/password', { password: 'good password 1', role: 'administrator' }),
      400,
      'invalid_parameters',
    );
    expectError(await b.post('/users/me/password', '{"password":'), 400, 'rest_invalid_json');
    expectError(
      await b.post('/users/me/password', { password: 'good password\u0000' }),
      400,
      'invalid_password',
    );
    expectError(
      await b.send('POST', '/users/me/password', { password: 'x'.repeat(2_000_000) }),
      413,
      'rest_body_too_large',
    );
    // The session cookie without its nonce is anonymous: a cross-site request sets nothing.
    expectError(
      await b.post('/users/me/password', { password: 'cross site password' }, { nonce: false }),
      401,
      'rest_not_logged_in',
    );
    expect(Number(await passwordSet(userId))).toBe(0);
  });

  it('the receipt offers "Set a password" to its signed-in buyer without one, and Profile sets it', async () => {
    const b = new Browser(t);
    const email = uniqueEmail('receipt');
    const { body } = await submit(b, {
      items: [{ product_id: productId, qty: 1 }],
      billing: { ...BILLING, email },
    });
    const receiptUrl = `/checkout/order-received/${body.order_id}?key=${body.order_key}`;
    const page = (headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'GET', url: receiptUrl, headers });
    const signedIn = await page({ cookie: b.cookieHeader() });
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.body).toContain('data-form="set-password"');
    expect(signedIn.body).toContain('action="/account/profile/password"');
    // Without the session (the key alone), nobody is offered the account's password.
    expect((await page()).body).not.toContain('data-form="set-password"');
    const nonce = /name="_nonce" value="([0-9a-f]+)"/.exec(signedIn.body)![1]!;
    const posted = await t.app.inject({
      method: 'POST',
      url: '/account/profile/password',
      headers: { cookie: b.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _nonce: nonce, new_password: 'from the receipt 1' }).toString(),
    });
    expect(posted.statusCode).toBe(303);
    expect(posted.headers.location).toBe('/account/profile?notice=password_set');
    await login(t.app, email, 'from the receipt 1');
    // Set: the receipt offers it no more, and Profile asks for the current password.
    expect((await page({ cookie: b.cookieHeader() })).body).not.toContain('data-form="set-password"');
    const profile = await t.app.inject({
      method: 'GET',
      url: '/account/profile',
      headers: { cookie: b.cookieHeader() },
    });
    expect(profile.body).toContain('data-form="change-password"');
    expect(profile.body).toContain('id="current_password"');
  });
});

describe('sign-in link', () => {
  it('answers the same for any address, and writes a message only for an existing customer', async () => {
    const email = uniqueEmail('link-known');
    await createCustomer(t, email);
    const unknown = uniqueEmail('link-unknown');
    const a = await signInLink(email, '10.1.0.1');
    const b = await signInLink(unknown, '10.1.0.1');
    const c = await signInLink('admin@example.com', '10.1.0.1');
    for (const r of [a, b, c]) {
      expect(r.statusCode).toBe(202);
      expect(r.body).toBe(a.body);
    }
    const messages = await adminOk<{ kind: string; recipient: string }[]>(
      t,
      'GET',
      '/mail/messages?per_page=100',
    );
    const links = messages.filter((m) => m.kind === 'sign_in_link');
    expect(links.map((m) => m.recipient)).toEqual([email]);
  });

  it('a link signs in exactly once under 20 parallel claims over HTTP', async () => {
    const email = uniqueEmail('link-race');
    const { id } = await createCustomer(t, email);
    const token = (await t.app.services.accounts.issuePasswordToken(id, 'signin'))!;
    // Only the SHA-256 is stored.
    const rows = await t.app.services.database.db
      .selectFrom('password_tokens')
      .select(['token_hash', 'purpose'])
      .where('user_id', '=', id)
      .execute();
    expect(rows).toEqual([{ token_hash: sha256(token), purpose: 'signin' }]);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${url}/v1/auth/sign-in-link/claim`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token }),
        }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { code?: string; user: { email: string } },
          cookie: r.headers.get('set-cookie'),
        })),
      ),
    );
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    expect(won[0]!.body.user.email).toBe(email);
    expect(won[0]!.cookie).toMatch(/tollgate_session=[0-9a-f]{64}/);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('invalid_sign_in_token');
    }
    // The session it started is a signed-in session.
    const session = /tollgate_session=([0-9a-f]{64})/.exec(won[0]!.cookie!)![1];
    const me = await t.app.inject({
      method: 'GET',
      url: '/v1/auth/me',
      headers: { cookie: `tollgate_session=${session}` },
    });
    expect(me.statusCode).toBe(200);
  });

  it('expires 15 minutes after it is minted, on the test clock', async () => {
    const email = uniqueEmail('link-expiry');
    const { id } = await createCustomer(t, email);
    const early = (await t.app.services.accounts.issuePasswordToken(id, 'signin'))!;
    const late = (await t.app.services.accounts.issuePasswordToken(id, 'signin'))!;
    await advanceClock(t, 14 * 60);
    expect((await claim(early)).statusCode).toBe(200);
    await advanceClock(t, 2 * 60);
    expectError(await claim(late), 400, 'invalid_sign_in_token');
  });

  it('is a sign-in link only: it sets no password, and a password link signs nobody in', async () => {
    const email = uniqueEmail('link-purpose');
    const { id } = await createCustomer(t, email);
    const signin = (await t.app.services.accounts.issuePasswordToken(id, 'signin'))!;
    const reset = (await t.app.services.accounts.issuePasswordToken(id, 'reset'))!;
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/auth/password/reset',
        payload: { token: signin, password: 'taken over password' },
      }),
      400,
      'invalid_password_token',
    );
    const page = await t.app.inject({ method: 'GET', url: `/account/reset-password?token=${signin}` });
    expect(page.statusCode).toBe(400);
    expectError(await claim(reset), 400, 'invalid_sign_in_token');
    // Both still work for what they are.
    expect((await claim(signin)).statusCode).toBe(200);
  });

  it('the emailed link page signs in with the session cookie and lands on the account', async () => {
    const email = uniqueEmail('link-page');
    const { id } = await createCustomer(t, email);
    const token = (await t.app.services.accounts.issuePasswordToken(id, 'signin'))!;
    const res = await t.app.inject({ method: 'GET', url: `/account/sign-in-link/claim?token=${token}` });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account/licenses');
    const cookie = res.cookies.find((c) => c.name === 'tollgate_session')!;
    expect(cookie.httpOnly).toBe(true);
    const account = await t.app.inject({
      method: 'GET',
      url: '/account/licenses',
      headers: { cookie: `tollgate_session=${cookie.value}` },
    });
    expect(account.statusCode).toBe(200);
    expect(account.body).toContain(email);
    const again = await t.app.inject({ method: 'GET', url: `/account/sign-in-link/claim?token=${token}` });
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('data-code="invalid_sign_in_token"');
    expect(again.cookies.find((c) => c.name === 'tollgate_session')).toBeUndefined();
  });

  it('is limited per email address, whether or not it has an account', async () => {
    for (const [email, exists] of [
      [uniqueEmail('limit-customer'), true],
      [uniqueEmail('limit-nobody'), false],
    ] as const) {
      if (exists) await createCustomer(t, email);
      for (let i = 0; i < 3; i++) expect((await signInLink(email, `10.2.0.${i + 1}`)).statusCode).toBe(202);
      const refused = await signInLink(email, '10.2.0.9');
      expectError(refused, 429, 'too_many_sign_in_links');
      expect(refused.json().data.retry_after).toBeGreaterThan(0);
    }
  });

  it('is limited per client address, and the window ends on the test clock', async () => {
    for (let i = 0; i < 10; i++)
      expect((await signInLink(uniqueEmail('ip'), '10.3.0.1')).statusCode).toBe(202);
    expectError(await signInLink(uniqueEmail('ip'), '10.3.0.1'), 429, 'too_many_sign_in_links');
    // Another address is not held back.
    expect((await signInLink(uniqueEmail('ip'), '10.3.0.2')).statusCode).toBe(202);
    await advanceClock(t, 15 * 60);
    expect((await signInLink(uniqueEmail('ip'), '10.3.0.1')).statusCode).toBe(202);
  });

  it('refuses bad input with a specific 4xx, never a 500', async () => {
    expectError(await signInLink(''), 400, 'rest_invalid_param');
    expectError(await signInLink(42), 400, 'rest_invalid_param');
    expectError(await signInLink('x'.repeat(255)), 400, 'rest_invalid_param');
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/auth/sign-in-link',
        payload: { email: 'a@b.c', next: '/x' },
      }),
      400,
      'invalid_parameters',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/auth/sign-in-link',
        headers: { 'content-type': 'application/json' },
        payload: '{"email":',
      }),
      400,
      'rest_invalid_json',
    );
    expectError(await claim('abc'), 400, 'invalid_sign_in_token');
    expectError(await claim('0'.repeat(64)), 400, 'invalid_sign_in_token');
    expectError(await claim("' OR 1=1 --"), 400, 'invalid_sign_in_token');
    expectError(await claim(''), 400, 'rest_invalid_param');
    expectError(await claim('x'.repeat(201)), 400, 'rest_invalid_param');
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in-link/claim', payload: {} }),
      400,
      'rest_missing_param',
    );
    const page = await t.app.inject({ method: 'GET', url: '/account/sign-in-link/claim?token[]=x' });
    expect(page.statusCode).toBe(400);
  });
});

describe('when the store cannot email', () => {
  it('forgot password and sign-in link say so, ask nothing, and send a signed-in new buyer to set a password', async () => {
    // No smtp_url is set in this store.
    for (const path of ['/account/forgot-password', '/account/sign-in-link']) {
      const res = await t.app.inject({ method: 'GET', url: path });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('data-mail="unavailable"');
      expect(res.body).not.toMatch(/check your email/i);
      expect(res.body).not.toContain('<form method="post" action="/account/');
    }
    const signIn = await t.app.inject({ method: 'GET', url: '/account/sign-in' });
    expect(signIn.body).not.toContain('href="/account/sign-in-link"');
    const { b } = await newBuyer();
    const res = await t.app.inject({
      method: 'GET',
      url: '/account/forgot-password',
      headers: { cookie: b.cookieHeader() },
    });
    expect(res.body).toContain('href="/account/profile"');
    // A posted form asks for nothing while no email can leave.
    const form = await t.app.inject({ method: 'GET', url: '/account/sign-in' });
    const csrf = form.cookies.find((c) => c.name === 'tollgate_form')!.value;
    const email = uniqueEmail('no-mail');
    await createCustomer(t, email);
    for (const path of ['/account/forgot-password', '/account/sign-in-link']) {
      const posted = await t.app.inject({
        method: 'POST',
        url: path,
        headers: { cookie: `tollgate_form=${csrf}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: csrf, email }).toString(),
      });
      expect(posted.statusCode).toBe(503);
      expect(posted.body).toContain('data-mail="unavailable"');
      expect(posted.body).not.toMatch(/check your email/i);
    }
    const messages = await adminOk<{ recipient: string }[]>(t, 'GET', '/mail/messages?per_page=100');
    expect(messages.filter((m) => m.recipient === email)).toEqual([]);
    expect((await admin(t, 'GET', '/settings')).json().smtp_url).toBe('');
  });
});
