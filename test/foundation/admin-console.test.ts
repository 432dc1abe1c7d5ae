import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectError, type TestApp } from '../helpers/app.js';

/**
 * How the server serves the console's built files (src/pages/admin.ts), on a stand-in build: the
 * console itself is tested in a browser (test/browser/admin.test.ts).
 */
describe('the console at /admin', () => {
  let t: TestApp;
  let absent: TestApp;
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-admin-'));
  const INDEX =
    '<!doctype html><title>console</title><script type="module" src="/admin/assets/app-1a2b3c.js"></script>';

  beforeAll(async () => {
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'app-1a2b3c.js'), 'console.log(1)');
    writeFileSync(join(dir, 'assets', 'app-1a2b3c.css'), 'body{}');
    writeFileSync(join(dir, '.source-hash'), 'abc\n');
    t = await createTestApp({ build: { adminDir: dir } });
    absent = await createTestApp({ build: { adminDir: join(dir, 'not-built') } });
  });
  afterAll(async () => {
    await t?.close();
    await absent?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers index.html, never cached, at /admin and at every deep link', async () => {
    for (const url of [
      '/admin',
      '/admin/',
      '/admin/licenses',
      '/admin/licenses/42',
      '/admin/products/7/releases',
    ]) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toBe(INDEX);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
  });

  it('serves the hashed assets for a year, with their types', async () => {
    const js = await t.app.inject({ method: 'GET', url: '/admin/assets/app-1a2b3c.js' });
    expect(js.statusCode).toBe(200);
    expect(js.body).toBe('console.log(1)');
    expect(js.headers['content-type']).toMatch(/^text\/javascript/);
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const css = await t.app.inject({ method: 'GET', url: '/admin/assets/app-1a2b3c.css' });
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    const head = await t.app.inject({ method: 'HEAD', url: '/admin/assets/app-1a2b3c.js' });
    expect(head.statusCode).toBe(200);
  });

  it('answers a missing file 404, never index.html; dot files and escapes are missing files', async () => {
    for (const url of [
      '/admin/assets/app-000000.js',
      '/admin/assets/',
      '/admin/favicon.ico',
      '/admin/.source-hash',
      '/admin/assets/..%2f..%2fpackage.json',
      '/admin/licenses/robots.txt',
    ]) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expectError(res, 404, 'rest_no_route');
    }
  });

  it('answers 503 admin_not_built while the console is not built, and keeps serving the API', async () => {
    for (const url of ['/admin', '/admin/licenses/3', '/admin/assets/app-1a2b3c.js']) {
      const res = await absent.app.inject({ method: 'GET', url });
      expectError(res, 503, 'admin_not_built');
    }
    expect((await absent.app.inject({ method: 'GET', url: '/v1/health' })).statusCode).toBe(200);
  });

  it('leaves GET / to the storefront, and the console out of the API reference', async () => {
    const home = await t.app.inject({ method: 'GET', url: '/' });
    expect(home.statusCode).toBe(200);
    expect(home.headers['content-type']).toMatch(/^text\/html/);
    expect(home.body).not.toContain('/admin/assets/');
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/admin'))).toEqual([]);
  });
});
