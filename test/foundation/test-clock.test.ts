import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';

describe('test clock off (default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('both routes answer 404 rest_no_route', async () => {
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/test-clock', headers: t.adminAuth }),
      404,
      'rest_no_route',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/test-clock',
        headers: t.adminAuth,
        payload: { advance_seconds: 60 },
      }),
      404,
      'rest_no_route',
    );
  });
});

describe('test clock on (TEST_CLOCK=1)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  });
  afterAll(async () => t.close());

  it('reads the time and moves it forward for every rule', async () => {
    const r1 = await t.app.inject({ method: 'GET', url: '/v1/test-clock', headers: t.adminAuth });
    expect(r1.statusCode).toBe(200);
    const before = Date.parse(r1.json().now);
    expect(r1.json().now).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const r2 = await t.app.inject({
      method: 'POST',
      url: '/v1/test-clock',
      headers: t.adminAuth,
      payload: { advance_seconds: 3600 },
    });
    expect(r2.statusCode).toBe(200);
    expect(Date.parse(r2.json().now) - before).toBeGreaterThanOrEqual(3600_000);
    expect(Date.parse(r2.json().now) - before).toBeLessThan(3660_000);
    expect(t.app.services.clock.now().getTime() - before).toBeGreaterThanOrEqual(3600_000);
  });

  it('sessions expire on the moved clock', async () => {
    const login = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { email: 'admin@example.com', password: 'correct horse battery' },
    });
    const cookie = `tollgate_session=${login.cookies.find((c) => c.name === 'tollgate_session')!.value}`;
    expect((await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: { cookie } })).statusCode).toBe(
      200,
    );
    await t.app.inject({
      method: 'POST',
      url: '/v1/test-clock',
      headers: t.adminAuth,
      payload: { advance_seconds: 8 * 86400 },
    });
    expectError(
      await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: { cookie } }),
      401,
      'rest_not_logged_in',
    );
  });

  it('refuses negative, fractional, string and unknown input', async () => {
    for (const [payload, code] of [
      [{ advance_seconds: -5 }, 'rest_invalid_param'],
      [{ advance_seconds: 1.5 }, 'rest_invalid_param'],
      [{ advance_seconds: '60' }, 'rest_invalid_param'],
      [{}, 'rest_missing_param'],
      [{ advance_seconds: 1, rewind: true }, 'invalid_parameters'],
    ] as const) {
      expectError(
        await t.app.inject({ method: 'POST', url: '/v1/test-clock', headers: t.adminAuth, payload }),
        400,
        code,
      );
    }
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/test-clock', payload: { advance_seconds: 1 } }),
      401,
      'rest_not_logged_in',
    );
  });
});
