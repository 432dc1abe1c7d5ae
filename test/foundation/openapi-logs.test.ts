import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ captureLogs: true });
});
afterAll(async () => t.close());

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document generated from the route schemas', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/health', '/v1/auth/login', '/v1/settings', '/v1/users']),
    );
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('has a human docs page', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
  });
});

describe('log redaction', () => {
  it('keeps passwords, license keys, tokens and ?token= values out of every log line', async () => {
    const licenseKey = 'TGL-SECRET-LICENSE-KEY-77777';
    const token = `${'a'.repeat(20)}TOKENSECRET${'b'.repeat(33)}`;
    await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { email: ADMIN.email, password: ADMIN.password },
    });
    await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { email: ADMIN.email, password: 'WRONG-PASSWORD-SECRET' },
    });
    await t.app.inject({ method: 'GET', url: `/v1/software/download?token=${token}` });
    await t.app.inject({ method: 'GET', url: `/v1/nothing?license_key=${licenseKey}&other=1` });
    await t.app.inject({
      method: 'POST',
      url: '/v1/licenses/validate',
      headers: { authorization: 'Basic c2VjcmV0OnNlY3JldA==', cookie: 'tollgate_session=COOKIESECRET' },
      payload: { license_key: licenseKey },
    });
    const logs = t.logs();
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).toContain('/v1/software/download?token=[REDACTED]');
    for (const secret of [
      ADMIN.password,
      'WRONG-PASSWORD-SECRET',
      licenseKey,
      'TOKENSECRET',
      'COOKIESECRET',
      'c2VjcmV0OnNlY3JldA==',
    ]) {
      expect(logs).not.toContain(secret);
    }
  });
});
