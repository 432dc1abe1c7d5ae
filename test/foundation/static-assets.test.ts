import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_DIR, ensureConsoleBuilt } from '../../scripts/build-admin.js';
import { STORE_SCRIPT } from '../../src/pages/store/client/store.generated.js';
import { STORE_STYLESHEET } from '../../src/pages/store/theme.js';
import { STYLESHEET } from '../../src/pages/style.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * The console's built files and the store's script and stylesheets over real HTTP (src/pages/static.ts,
 * docs/performance.md 'Static assets'): the encoding negotiated from Accept-Encoding, the bytes as
 * they cross the wire (node:http, which decodes nothing), the cache policy and revalidation.
 */
interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

let t: TestApp;
let base: string;

function raw(method: string, path: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function decoded(res: Raw): Buffer {
  const encoding = res.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(res.body);
  if (encoding === 'gzip') return gunzipSync(res.body);
  expect(encoding).toBeUndefined();
  return res.body;
}

beforeAll(async () => {
  ensureConsoleBuilt({ quiet: true });
  assets = readdirSync(join(CONSOLE_DIR, 'assets'));
  mainScript = `/admin/assets/${assets.find((f) => /^index-.*\.js$/.test(f))}`;
  scriptBytes = readFileSync(join(CONSOLE_DIR, mainScript.slice('/admin/'.length)));
  t = await createTestApp({ build: { adminDir: CONSOLE_DIR } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => {
  await t?.close();
});

// Read once the console is built (beforeAll): a run without the browser tests may not have built it.
let assets: string[];
let mainScript: string;
let scriptBytes: Buffer;

describe('the console (dist/admin) over HTTP', () => {
  it('has a Brotli and a gzip copy of every text file of the build', () => {
    for (const f of assets.filter((f) => /\.(js|css)$/.test(f))) {
      expect(assets, f).toContain(`${f}.br`);
      expect(assets, f).toContain(`${f}.gz`);
    }
  });

  it('sends br when accepted (preferred to gzip), else gzip, else identity; each with Vary and its length', async () => {
    const cases: [string | undefined, string | undefined][] = [
      ['gzip, deflate, br, zstd', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
      ['gzip, deflate', 'gzip'],
      ['*', 'br'],
      ['br;q=0, gzip;q=0', undefined],
      ['identity', undefined],
      [undefined, undefined],
    ];
    const sizes = new Map<string | undefined, number>();
    for (const [accept, encoding] of cases) {
      const res = await raw('GET', mainScript, accept === undefined ? {} : { 'accept-encoding': accept });
      expect(res.status, accept).toBe(200);
      expect(res.headers['content-encoding'], accept).toBe(encoding);
      expect(res.headers.vary, accept).toBe('Accept-Encoding');
      expect(Number(res.headers['content-length']), accept).toBe(res.body.length);
      expect(res.headers['content-type'], accept).toMatch(/^text\/javascript/);
      expect(decoded(res).equals(scriptBytes), accept).toBe(true);
      sizes.set(encoding, res.body.length);
    }
    // The point of it: a quarter of the script's size or less.
    expect(sizes.get('br')!).toBeLessThan(sizes.get('gzip')!);
    expect(sizes.get('gzip')!).toBeLessThan(scriptBytes.length / 3);
  });

  it('caches hashed files for a year; index.html is revalidated with its ETag (304)', async () => {
    const js = await raw('GET', mainScript, { 'accept-encoding': 'br' });
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    for (const path of ['/admin', '/admin/index.html', '/admin/licenses/3']) {
      const page = await raw('GET', path, { 'accept-encoding': 'gzip' });
      expect(page.status, path).toBe(200);
      expect(page.headers['cache-control'], path).toBe('no-cache');
      expect(page.headers['content-encoding'], path).toBe('gzip');
      expect(page.headers.vary, path).toBe('Accept-Encoding');
      expect(decoded(page).toString(), path).toContain('<div id="root">');
      const etag = page.headers.etag as string;
      expect(etag, path).toMatch(/^"[A-Za-z0-9_-]+-gz"$/);
      const again = await raw('GET', path, { 'accept-encoding': 'gzip', 'if-none-match': etag });
      expect(again.status, path).toBe(304);
      expect(again.body.length, path).toBe(0);
      // The same page in another encoding is the same content: still not modified.
      expect((await raw('GET', path, { 'accept-encoding': 'br', 'if-none-match': etag })).status).toBe(304);
      expect((await raw('GET', path, { 'if-none-match': '"something-else"' })).status).toBe(200);
    }
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    for (const accept of ['br', 'gzip', 'identity']) {
      const get = await raw('GET', mainScript, { 'accept-encoding': accept });
      const head = await raw('HEAD', mainScript, { 'accept-encoding': accept });
      expect(head.status, accept).toBe(200);
      expect(head.body.length, accept).toBe(0);
      for (const h of [
        'content-length',
        'content-encoding',
        'content-type',
        'vary',
        'cache-control',
        'etag',
      ]) {
        expect(head.headers[h], `${accept} ${h}`).toBe(get.headers[h]);
      }
    }
  });

  it('serves no ranges: a Range header gets the whole file, and says so', async () => {
    const res = await raw('GET', mainScript, { range: 'bytes=0-99', 'accept-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(res.headers['accept-ranges']).toBe('none');
    expect(res.headers['content-range']).toBeUndefined();
    expect(decoded(res).equals(scriptBytes)).toBe(true);
  });

  it('never serves the compressed copies by their own names', async () => {
    for (const suffix of ['.br', '.gz']) {
      expect((await raw('GET', `${mainScript}${suffix}`)).status).toBe(404);
    }
  });
});

describe("the store's script and stylesheets over HTTP", () => {
  const files: [string, string, RegExp][] = [
    ['/store/assets/store.js', STORE_SCRIPT, /^text\/javascript/],
    ['/store/assets/store.css', STORE_STYLESHEET, /^text\/css/],
    ['/account/assets/style.css', STYLESHEET, /^text\/css/],
  ];

  it('are sent compressed as negotiated, revalidated with their ETag, and answer HEAD', async () => {
    for (const [path, text, type] of files) {
      for (const [accept, encoding] of [
        ['gzip, deflate, br', 'br'],
        ['gzip', 'gzip'],
        ['identity', undefined],
      ] as const) {
        const res = await raw('GET', path, { 'accept-encoding': accept });
        expect(res.status, path).toBe(200);
        expect(res.headers['content-encoding'], `${path} ${accept}`).toBe(encoding);
        expect(res.headers['content-type'], path).toMatch(type);
        expect(res.headers.vary, path).toBe('Accept-Encoding');
        expect(res.headers['cache-control'], path).toBe('no-cache');
        expect(Number(res.headers['content-length']), path).toBe(res.body.length);
        expect(decoded(res).toString(), path).toBe(text);
        const head = await raw('HEAD', path, { 'accept-encoding': accept });
        expect(head.body.length, path).toBe(0);
        expect(head.headers['content-length'], path).toBe(res.headers['content-length']);
        expect(head.headers['content-encoding'], path).toBe(res.headers['content-encoding']);
        const again = await raw('GET', path, {
          'accept-encoding': accept,
          'if-none-match': res.headers.etag as string,
        });
        expect(again.status, path).toBe(304);
      }
    }
  });
});
