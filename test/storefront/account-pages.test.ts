import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, adminOk, createTestApp, type TestApp } from '../helpers/app.js';
import { createCustomer, createProduct, uniqueEmail } from '../helpers/factories.js';

/**
 * The rest of the customer's account (docs/storefront.md, 'Your account'): Subscriptions
 * and Profile, server-rendered, for the signed-in customer only, never cached.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

type Customer = Awaited<ReturnType<typeof createCustomer>>;

const get = (cookie: string | undefined, url: string) =>
  t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });

/** Posts a page form as the customer, with their session nonce unless `_nonce` is given. */
const postForm = (c: Customer, url: string, fields: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { cookie: c.headers.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _nonce: c.headers['x-rest-nonce'], ...fields }).toString(),
  });

interface Sub {
  id: number;
  status: string;
  next_payment_at: string | null;
}

async function subscriptionOf(c: Customer, name: string, nextPayment: string | null) {
  const product = await createProduct(t, {
    name,
    type: 'subscription',
    subscription: { period: 'month', interval: 1 },
  });
  const res = await admin(t, 'POST', '/subscriptions', {
    user_id: c.id,
    product_id: product.id,
    next_payment_at: nextPayment,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as Sub;
}

const future = () => new Date(Date.now() + 20 * 86_400_000).toISOString();

describe('account pages: signed out, headers', () => {
  it('sends a signed-out visitor to sign in, and a form without a session too', async () => {
    for (const url of ['/account/subscriptions', '/account/profile']) {
      const res = await get(undefined, url);
      expect(res.statusCode, url).toBe(303);
      expect(res.headers.location, url).toBe(`/account/sign-in?next=${encodeURIComponent(url)}`);
    }
    const res = await t.app.inject({
      method: 'POST',
      url: '/account/subscriptions/1/cancel',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '_nonce=x',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toMatch(/^\/account\/sign-in\?/);
  });

  it('answers the signed-in customer with no-store and the account menu', async () => {
    const me = await createCustomer(t);
    for (const url of [
      '/account/subscriptions',
      '/account/profile',
      '/account/licenses',
      '/account/orders',
    ]) {
      const res = await get(me.headers.cookie, url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-store');
      expect(res.body, url).toContain('aria-label="Your account"');
      for (const href of ['/account/orders', '/account/subscriptions', '/account/profile']) {
        expect(res.body, url).toContain(`href="${href}"`);
      }
      expect(res.body, url).toContain(`href="${url}" aria-current="page"`);
    }
  });
});

describe('/account/subscriptions', () => {
  it('lists the customer’s own subscriptions with the renewal order to pay', async () => {
    const me = await createCustomer(t);
    const other = await createCustomer(t);
    const due = future();
    const sub = await subscriptionOf(me, 'Monthly Kit', due);
    const theirs = await subscriptionOf(other, 'Their Kit', null);
    const before = await get(me.headers.cookie, '/account/subscriptions');
    expect(before.body).toContain('Monthly Kit');
    expect(before.body).not.toContain('Their Kit');
    expect(before.body).not.toContain(`data-subscription="${theirs.id}"`);
    expect(before.body).toContain(due.slice(0, 10));
    expect(before.body).not.toContain('/checkout/pay/');

    const renewal = await adminOk<{ id: number; order_key: string }>(
      t,
      'POST',
      `/subscriptions/${sub.id}/renewal-orders`,
    );
    const after = await get(me.headers.cookie, '/account/subscriptions');
    expect(after.body).toContain(`href="/checkout/pay/${renewal.id}?key=${renewal.order_key}"`);
  });

  it('cancels with the API’s rule: pending-cancel while a paid period remains, else cancelled', async () => {
    const me = await createCustomer(t);
    const paid = await subscriptionOf(me, 'Paid Kit', future());
    const unpaid = await subscriptionOf(me, 'Unpaid Kit', null);
    const res = await postForm(me, `/account/subscriptions/${paid.id}/cancel`);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account/subscriptions?notice=pending-cancel');
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${paid.id}`)).status).toBe('pending-cancel');
    const page = await get(me.headers.cookie, res.headers.location as string);
    expect(page.body).toContain('role="status"');
    // No Cancel button for an already cancelled subscription.
    expect(page.body).not.toContain(`action="/account/subscriptions/${paid.id}/cancel"`);
    expect(page.body).toContain(`action="/account/subscriptions/${unpaid.id}/cancel"`);

    const second = await postForm(me, `/account/subscriptions/${unpaid.id}/cancel`);
    expect(second.headers.location).toBe('/account/subscriptions?notice=cancelled');
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${unpaid.id}`)).status).toBe('cancelled');
  });

  it('refuses another customer’s subscription, an unknown and a malformed id: 404 not_found, nothing changed', async () => {
    const me = await createCustomer(t);
    const other = await createCustomer(t, uniqueEmail('other'));
    const theirs = await subscriptionOf(other, 'Not Mine', future());
    for (const id of [String(theirs.id), '999999999', 'abc', '0']) {
      const res = await postForm(me, `/account/subscriptions/${id}/cancel`);
      expect(res.statusCode, id).toBe(404);
      expect(res.headers['cache-control'], id).toBe('no-store');
      expect(res.body, id).toMatch(/role="alert" data-code="not_found"/);
      expect(res.body, id).not.toContain('Not Mine');
    }
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${theirs.id}`)).status).toBe('active');
  });

  it('refuses a form without the session nonce (403), nothing changed', async () => {
    const me = await createCustomer(t);
    const sub = await subscriptionOf(me, 'Nonce Kit', future());
    const res = await postForm(me, `/account/subscriptions/${sub.id}/cancel`, { _nonce: 'wrong' });
    expect(res.statusCode).toBe(403);
    expect((await adminOk<Sub>(t, 'GET', `/subscriptions/${sub.id}`)).status).toBe('active');
  });
});

describe('/account/profile', () => {
  const signIn = (email: string, password: string) =>
    t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });

  it('saves the name; the email is shown read-only', async () => {
    const me = await createCustomer(t);
    const res = await postForm(me, '/account/profile', { first_name: ' Ada ', last_name: 'Lovelace' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account/profile?notice=name');
    const page = await get(me.headers.cookie, '/account/profile');
    expect(page.body).toContain('name="first_name" maxlength="100" autocomplete="given-name" value="Ada"');
    expect(page.body).toContain('value="Lovelace"');
    expect(page.body).toMatch(new RegExp(`id="email" value="${me.email}" readonly`));
    const long = await postForm(me, '/account/profile', { first_name: 'x'.repeat(101), last_name: '' });
    expect(long.statusCode).toBe(400);
    expect(long.body).toContain('data-code="invalid_name"');
  });

  it('refuses a wrong current password (400 incorrect_current_password) and a short new one (invalid_password)', async () => {
    const me = await createCustomer(t);
    const wrong = await postForm(me, '/account/profile/password', {
      current_password: 'not-my-password',
      new_password: 'a-new-password-1',
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.headers['cache-control']).toBe('no-store');
    expect(wrong.body).toMatch(/role="alert" id="password-error" data-code="incorrect_current_password"/);
    const short = await postForm(me, '/account/profile/password', {
      current_password: me.password,
      new_password: 'short',
    });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('data-code="invalid_password"');
    // Neither changed the password.
    expect((await signIn(me.email, me.password)).statusCode).toBe(200);
  });

  it('changes the password: this session stays, the others end, the old password no longer signs in', async () => {
    const me = await createCustomer(t);
    const elsewhere = await signIn(me.email, me.password);
    const otherCookie = `tollgate_session=${elsewhere.cookies.find((c) => c.name === 'tollgate_session')!.value}`;
    const res = await postForm(me, '/account/profile/password', {
      current_password: me.password,
      new_password: 'a-new-password-1',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account/profile?notice=password');
    expect((await get(me.headers.cookie, '/account/profile')).statusCode).toBe(200);
    expect((await get(otherCookie, '/account/profile')).statusCode).toBe(303);
    expect((await signIn(me.email, me.password)).statusCode).toBe(401);
    expect((await signIn(me.email, 'a-new-password-1')).statusCode).toBe(200);
  });

  it('refuses a form without the session nonce (403)', async () => {
    const me = await createCustomer(t);
    const res = await postForm(me, '/account/profile/password', {
      _nonce: 'wrong',
      current_password: me.password,
      new_password: 'a-new-password-1',
    });
    expect(res.statusCode).toBe(403);
    expect((await signIn(me.email, me.password)).statusCode).toBe(200);
  });
});
