import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logsRequests, requestLogger } from '../../src/http/redact.js';
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

  it("writes a request's lines with its request id, and nothing below the configured level", async () => {
    const before = t.logs().length;
    await t.app.inject({ method: 'GET', url: '/v1/health' });
    const lines = t
      .logs()
      .slice(before)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { reqId?: string; msg: string });
    const incoming = lines.find((l) => l.msg === 'incoming request');
    const completed = lines.find((l) => l.msg === 'request completed');
    expect(incoming?.reqId).toMatch(/^req-/);
    expect(completed?.reqId).toBe(incoming?.reqId);
    const quiet = await createTestApp({ captureLogs: true, env: { LOG_LEVEL: 'warn' } });
    try {
      await quiet.app.inject({ method: 'GET', url: '/v1/health' });
      expect(quiet.logs()).not.toContain('incoming request');
    } finally {
      await quiet.close();
    }
  });

  it('builds request lines only at levels that write them', async () => {
    expect(['trace', 'debug', 'info'].filter(logsRequests)).toEqual(['trace', 'debug', 'info']);
    expect(['warn', 'error', 'fatal', 'silent'].filter(logsRequests)).toEqual([]);
    const verbose = await createTestApp({ captureLogs: true, env: { LOG_LEVEL: 'debug' } });
    try {
      await verbose.app.inject({ method: 'GET', url: '/v1/health' });
      expect(verbose.logs()).toContain('request completed');
    } finally {
      await verbose.close();
    }
  });

  it("makes a request's child logger only once a line is written at an enabled level", () => {
    let children = 0;
    const parent = Object.create(t.app.log) as typeof t.app.log;
    parent.child = (...args: Parameters<typeof t.app.log.child>) => {
      children++;
      return t.app.log.child(...args);
    };
    const log = requestLogger.call(t.app as never, parent, { reqId: 'req-lazy-1' }, {}, {} as never);
    log.debug('below the level');
    log.trace('below the level');
    expect(children).toBe(0);
    expect(log.level).toBe('info');
    log.info('first line');
    log.warn('second line');
    expect(children).toBe(1);
    const written = t
      .logs()
      .split('\n')
      .filter((l) => l.includes('req-lazy-1'));
    expect(written.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['first line', 'second line']);
  });
});
