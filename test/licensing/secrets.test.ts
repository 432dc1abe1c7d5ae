import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { LicenseRepository, type NewActivation } from '../../src/modules/licensing/license.repository.js';
import { createTestApp, post, type TestApp } from '../helpers/app.js';
import { identity, licenseFixture } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ captureLogs: true });
});
afterAll(async () => t.close());

describe('license keys never reach a log line', () => {
  it('across activate, validate, deactivate, admin search and reads, and failed requests', async () => {
    const { key, license } = await licenseFixture(t, { activation_limit: 1 });
    const site = identity();
    await post(t, '/licenses/activate', { license_key: key, ...site });
    await post(t, '/licenses/activate', { license_key: key, ...identity('other.example') }); // limit reached
    await post(t, '/licenses/validate', { license_key: key, ...site });
    await post(t, '/licenses/validate', { license_key: key, ...identity('nope.example') });
    await post(t, '/licenses/validate', { license_key: key, domain: 'bad domain', installation_id: 'x' });
    await post(t, '/licenses/deactivate', { license_key: key, ...site });
    await t.app.inject({ method: 'GET', url: `/v1/licenses?search=${key}`, headers: t.adminAuth });
    await t.app.inject({ method: 'GET', url: `/v1/licenses/${license.id}`, headers: t.adminAuth });
    await t.app.inject({
      method: 'POST',
      url: '/v1/licenses/activate',
      headers: { 'content-type': 'application/json' },
      payload: `{"license_key":"${key}",`,
    });
    const logs = t.logs();
    expect(logs).toContain('/v1/licenses/activate'); // the requests were logged ...
    expect(logs).toContain('search=[REDACTED]');
    expect(logs).not.toContain(key); // ... without the key
    expect(logs).not.toContain(key.replace(/-/g, ''));
  });

  it('a database failure logs its step and cause, never the key', async () => {
    class Broken extends LicenseRepository {
      override async insertActivation(values: NewActivation): Promise<number> {
        throw Object.assign(new Error('duplicate key value violates unique constraint'), {
          code: '23505',
          detail: `Key (license_key)=(${values.identity_key}) already exists.`,
        });
      }
    }
    let captured = '';
    const stream = new PassThrough();
    stream.on('data', (d: Buffer) => {
      captured += d.toString();
    });
    const app = await buildApp({ ...t.config, logLevel: 'info' }, t.db.database, {
      logStream: stream,
      licenseRepository: new Broken(t.db.database),
    });
    try {
      const { key } = await licenseFixture(t);
      const site = identity();
      const res = await app.inject({
        method: 'POST',
        url: '/v1/licenses/activate',
        payload: { license_key: key, ...site },
      });
      expect(res.statusCode).toBe(500);
      expect(captured).toContain('activation_write_failed');
      expect(captured).toContain('23505');
      expect(captured).not.toContain(key);
      // The driver's detail (which can quote row values) is dropped from the logged cause.
      expect(captured).not.toContain('already exists');
    } finally {
      await app.close();
    }
  });
});
