import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, basic, createTestApp, expectError, login, type TestApp } from '../helpers/app.js';
import { createCustomer } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const countUsers = async () =>
  Number(
    (
      await t.app.services.database.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('login, session and nonce', () => {
  it('login sets an HttpOnly SameSite=Lax cookie and returns user and nonce', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: ADMIN });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.user).toMatchObject({ email: ADMIN.email, role: 'administrator' });
    expect(body.user.id).toBeTypeOf('number');
    expect(body.nonce).toMatch(/^[0-9a-f]{32}$/);
    const cookie = res.cookies.find((c) => c.name === 'tollgate_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Lax');
    expect(cookie?.secure).toBeFalsy();
    expect(body.user).not.toHaveProperty('password_hash');
  });

  it('wrong password or unknown email is 401 invalid_credentials', async () => {
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/auth/login',
        payload: { email: ADMIN.email, password: 'nope-nope' },
      }),
      401,
      'invalid_credentials',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/auth/login',
        payload: { email: 'ghost@example.com', password: 'x' },
      }),
      401,
      'invalid_credentials',
    );
  });

  it('me answers the session user with a nonce, and 401 rest_not_logged_in without a session', async () => {
    const h = await login(t.app, ADMIN.email, ADMIN.password);
    const me = await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: { cookie: h.cookie } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ user: { email: ADMIN.email }, nonce: h['x-rest-nonce'] });
    expectError(await t.app.inject({ method: 'GET', url: '/v1/auth/me' }), 401, 'rest_not_logged_in');
    expectError(
      await t.app.inject({
        method: 'GET',
        url: '/v1/auth/me',
        headers: { cookie: `tollgate_session=${'0'.repeat(64)}` },
      }),
      401,
      'rest_not_logged_in',
    );
  });

  it('a cookie without a nonce is anonymous on a state-changing request; a wrong nonce is refused', async () => {
    const h = await login(t.app, ADMIN.email, ADMIN.password);
    const payload = { email: 'nonce-test@example.com', password: 'long-enough-pw' };
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/users', headers: { cookie: h.cookie }, payload }),
      401,
      'rest_not_logged_in',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/users',
        headers: { cookie: h.cookie, 'x-rest-nonce': 'f'.repeat(32) },
        payload,
      }),
      403,
      'rest_cookie_invalid_nonce',
    );
    const before = await countUsers();
    const ok = await t.app.inject({ method: 'POST', url: '/v1/users', headers: h, payload });
    expect(ok.statusCode).toBe(201);
    expect(await countUsers()).toBe(before + 1);
  });

  it('logout ends the session server side', async () => {
    const h = await login(t.app, ADMIN.email, ADMIN.password);
    const out = await t.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: h });
    expect(out.statusCode).toBe(200);
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: { cookie: h.cookie } }),
      401,
      'rest_not_logged_in',
    );
  });

  it('logout needs the nonce like every cookie write: without it 401, with a wrong one 403, and the session lives on', async () => {
    const h = await login(t.app, ADMIN.email, ADMIN.password);
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: { cookie: h.cookie } }),
      401,
      'rest_not_logged_in',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/auth/logout',
        headers: { cookie: h.cookie, 'x-rest-nonce': 'not-the-nonce' },
      }),
      403,
      'rest_cookie_invalid_nonce',
    );
    const me = await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: { cookie: h.cookie } });
    expect(me.statusCode).toBe(200);
    expectError(await t.app.inject({ method: 'POST', url: '/v1/auth/logout' }), 401, 'rest_not_logged_in');
  });

  it('failed logins are throttled per account', async () => {
    const c = await createCustomer(t, 'throttle@example.com');
    for (let i = 0; i < 5; i++) {
      expectError(
        await t.app.inject({
          method: 'POST',
          url: '/v1/auth/login',
          payload: { email: c.email, password: 'wrong' },
        }),
        401,
        'invalid_credentials',
      );
    }
    // Even the right password is refused until the window passes: guessing cannot continue.
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { email: c.email, password: c.password },
    });
    expectError(res, 429, 'too_many_login_attempts');
    expect(res.json().data.retry_after).toBeGreaterThan(0);
  });

  it('failed logins are throttled per IP across accounts', async () => {
    const ip = '203.0.113.9';
    for (let i = 0; i < 20; i++) {
      await t.app.inject({
        method: 'POST',
        url: '/v1/auth/login',
        remoteAddress: ip,
        payload: { email: `spray${i}@example.com`, password: 'wrong' },
      });
    }
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/auth/login', remoteAddress: ip, payload: ADMIN }),
      429,
      'too_many_login_attempts',
    );
    const elsewhere = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: ADMIN });
    expect(elsewhere.statusCode).toBe(200);
  });
});

describe('users', () => {
  it('an administrator creates users; a duplicate email is 409 email_exists (case-insensitive)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: t.adminAuth,
      payload: { email: 'Buyer@Example.com', password: 'buyer-password', first_name: 'Ada', last_name: 'L' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: expect.any(Number),
      email: 'buyer@example.com',
      role: 'customer',
      first_name: 'Ada',
      last_name: 'L',
    });
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/users',
        headers: t.adminAuth,
        payload: { email: 'BUYER@example.com', password: 'another-password' },
      }),
      409,
      'email_exists',
    );
  });

  it('a customer may not create users, an anonymous caller is not logged in', async () => {
    const c = await createCustomer(t, 'plain@example.com');
    const payload = { email: 'x1@example.com', password: 'long-enough-pw' };
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/users', headers: c.headers, payload }),
      403,
      'rest_forbidden',
    );
    expectError(await t.app.inject({ method: 'POST', url: '/v1/users', payload }), 401, 'rest_not_logged_in');
  });

  it.each([
    [{ email: 'not-an-email', password: 'long-enough-pw' }, 'rest_invalid_param'],
    [{ email: 'a@example.com', password: 'short' }, 'rest_invalid_param'],
    [{ email: 'a@example.com' }, 'rest_missing_param'],
    [{ password: 'long-enough-pw' }, 'rest_missing_param'],
    [{ email: 'a@example.com', password: 'long-enough-pw', role: 'root' }, 'rest_invalid_param'],
    [{ email: 'a@example.com', password: 'long-enough-pw', is_admin: true }, 'invalid_parameters'],
    [{ email: 'a@example.com', password: 12345678 }, 'rest_invalid_param'],
    [{ email: `${'a'.repeat(10_000)}@example.com`, password: 'long-enough-pw' }, 'rest_invalid_param'],
    [
      { email: "o'neil@example.com'; DROP TABLE users; --", password: 'long-enough-pw' },
      'rest_invalid_param',
    ],
    [
      { email: 'a@example.com', password: 'long-enough-pw', first_name: 'Eve\r\nSet-Cookie: x=1' },
      'rest_invalid_param',
    ],
    [[], 'rest_invalid_param'],
  ])('bad user input %j is refused with %s and creates nothing', async (payload, code) => {
    const before = await countUsers();
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/users',
        headers: t.adminAuth,
        payload: payload as object,
      }),
      400,
      code,
    );
    expect(await countUsers()).toBe(before);
  });
});

describe('application passwords', () => {
  it('is shown once, stored hashed, and authenticates Basic requests without cookie or nonce', async () => {
    const h = await login(t.app, ADMIN.email, ADMIN.password);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/users/me/application-passwords',
      headers: h,
      payload: { name: 'deploy bot' },
    });
    expect(res.statusCode).toBe(201);
    const { uuid, name, password } = res.json();
    expect(name).toBe('deploy bot');
    expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(password.length).toBeGreaterThanOrEqual(32);
    const stored = await t.app.services.database.db
      .selectFrom('application_passwords')
      .selectAll()
      .where('uuid', '=', uuid)
      .executeTakeFirstOrThrow();
    expect(stored.password_hash).not.toContain(password);
    expect(stored.password_hash).toMatch(/^[0-9a-f]{64}$/);

    const list = await t.app.inject({
      method: 'GET',
      url: '/v1/users/me/application-passwords',
      headers: { authorization: basic(ADMIN.email, password) },
    });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(password);
    expect(list.json().map((p: { uuid: string }) => p.uuid)).toContain(uuid);

    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: { authorization: basic(ADMIN.email, password) },
      payload: { email: 'via-basic@example.com', password: 'long-enough-pw' },
    });
    expect(created.statusCode).toBe(201);

    const del = await t.app.inject({
      method: 'DELETE',
      url: `/v1/users/me/application-passwords/${uuid}`,
      headers: h,
    });
    expect(del.statusCode).toBe(200);
    expectError(
      await t.app.inject({
        method: 'GET',
        url: '/v1/users/me/application-passwords',
        headers: { authorization: basic(ADMIN.email, password) },
      }),
      401,
      'invalid_credentials',
    );
  });

  it('the account password itself does not work as Basic auth, nor a malformed header', async () => {
    expectError(
      await t.app.inject({
        method: 'GET',
        url: '/v1/settings',
        headers: { authorization: basic(ADMIN.email, ADMIN.password) },
      }),
      401,
      'invalid_credentials',
    );
    expectError(
      await t.app.inject({
        method: 'GET',
        url: '/v1/settings',
        headers: { authorization: 'Basic !!!notbase64' },
      }),
      401,
      'invalid_credentials',
    );
  });

  it('refuses a missing or hostile name', async () => {
    const h = await login(t.app, ADMIN.email, ADMIN.password);
    for (const [payload, code] of [
      [{}, 'rest_missing_param'],
      [{ name: '' }, 'rest_invalid_param'],
      [{ name: 'x'.repeat(10_000) }, 'rest_invalid_param'],
      [{ name: 'bot\u0000' }, 'rest_invalid_param'],
      [{ name: 'bot', scope: 'all' }, 'invalid_parameters'],
    ] as const) {
      expectError(
        await t.app.inject({
          method: 'POST',
          url: '/v1/users/me/application-passwords',
          headers: h,
          payload,
        }),
        400,
        code,
      );
    }
    expectError(
      await t.app.inject({
        method: 'DELETE',
        url: '/v1/users/me/application-passwords/not-a-uuid',
        headers: h,
      }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await t.app.inject({
        method: 'DELETE',
        url: '/v1/users/me/application-passwords/00000000-0000-4000-8000-000000000000',
        headers: h,
      }),
      404,
      'not_found',
    );
  });
});
