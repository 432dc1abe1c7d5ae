import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe('transport and error envelopes', () => {
  it('health answers ok once migrations ran', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
  });

  it('an unknown route is 404 rest_no_route', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/v1/no/such/route' }), 404, 'rest_no_route');
    expectError(await t.app.inject({ method: 'DELETE', url: '/v1/health' }), 404, 'rest_no_route');
  });

  it('malformed JSON is 400 rest_invalid_json', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": "a@b.c", "password":',
    });
    expectError(res, 400, 'rest_invalid_json');
  });

  it('an empty JSON body is 400 rest_invalid_json', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expectError(res, 400, 'rest_invalid_json');
  });

  it('prototype poisoning keys are refused, not merged', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":"a@b.c","password":"x","__proto__":{"role":"administrator"}}',
    });
    expectError(res, 400, 'rest_invalid_json');
  });

  it('a body over the limit is 413 rest_body_too_large', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expectError(res, 413, 'rest_body_too_large');
  });

  it('a non-JSON content type is 415', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { 'content-type': 'text/plain' },
      payload: 'email=a',
    });
    expectError(res, 415, 'rest_unsupported_media_type');
  });

  it('wrong types, missing and unknown fields get specific 400 codes', async () => {
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: 5, password: 'x' } }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: 'a@b.c' } }),
      400,
      'rest_missing_param',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/auth/login',
        payload: { email: 'a@b.c', password: 'x', admin: true },
      }),
      400,
      'invalid_parameters',
    );
  });

  it('an unexpected error is a generic 500 without a stack trace', async () => {
    const app = t.app;
    // A route that throws a plain Error stands in for any bug; registered on a throwaway child.
    const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const { buildApp } = await import('../../src/app.js');
    const other = await buildApp(t.config, t.db.database);
    other.get('/boom', async () => {
      throw new Error('secret internals at /srv/app.ts:12');
    });
    const boom = await other.inject({ method: 'GET', url: '/boom' });
    expectError(boom, 500, 'internal_error');
    expect(boom.body).not.toContain('secret internals');
    expect(boom.body).not.toContain('.ts:');
    await other.close();
  });
});
