import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/random.js';
import { dialectUnderTest } from '../helpers/db.js';
import { makeZip } from '../helpers/factories.js';
import { type Cluster, type ServerProcess, startCluster } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Real HTTP against the real server: single use under a burst of parallel redemptions (on
 * PostgreSQL from two server processes sharing the database and the vault), a client that hangs
 * up mid-stream, and a curl download checked byte for byte.
 */
const ADMIN = { email: 'admin@example.com', password: 'correct horse battery staple' };
let cluster: Cluster;
let dataDir: string;
let servers: ServerProcess[] = [];
let auth: Record<string, string>;

async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${base}/v1${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers of a test client
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

/** A published protected product with one release of `zip`, a license and an active site. */
async function fixture(base: string, zip: Buffer) {
  const slug = `conc-${randomUUID().slice(0, 8)}`;
  const product = await api(
    base,
    'POST',
    '/products',
    { name: slug, type: 'simple', price: '10.00', licensing_enabled: 'yes' },
    auth,
  );
  const id = product.json.id as number;
  await api(base, 'POST', `/software/products/${id}/config`, { slug, software_enabled: 'yes' }, auth);
  const form = new FormData();
  form.append('version', '1.0.0');
  form.append('file', new Blob([zip]), 'upload.zip');
  const up = await fetch(`${base}/v1/software/products/${id}/versions`, {
    method: 'POST',
    headers: auth,
    body: form,
  });
  expect(up.status).toBe(201);
  const me = await api(base, 'GET', '/auth/me', undefined, auth);
  const lic = await api(base, 'POST', '/licenses', { product_id: id, user_id: me.json.user.id }, auth);
  const site = { domain: 'burst.example.com', installation_id: randomUUID() };
  const act = await api(base, 'POST', '/licenses/activate', { license_key: lic.json.license_key, ...site });
  expect(act.status).toBe(200);
  return {
    slug,
    body: {
      slug,
      purpose: 'install',
      license_key: lic.json.license_key,
      site_url: site.domain,
      installation_id: site.installation_id,
    },
  };
}

async function packageUrl(base: string, body: unknown): Promise<string> {
  const res = await api(base, 'POST', '/software/package', body);
  expect(res.status).toBe(200);
  return res.json.download_url as string;
}

beforeAll(async () => {
  cluster = await startCluster(ADMIN);
  ({ servers, dataDir, adminHeaders: auth } = cluster);
  await api(servers[0]!.url, 'PATCH', '/settings', { rate_limit: 100 }, auth);
}, 120_000);

afterAll(() => cluster.stop());

describe(`download tokens over real HTTP (${dialectUnderTest})`, () => {
  it(`one token fired 100 times in parallel${dialectUnderTest === 'postgres' ? ' at two processes' : ''}: exactly one 200, 99 token_consumed`, async () => {
    const base = servers[0]!.url;
    const zip = makeZip(50_000);
    const f = await fixture(base, zip);
    const url = new URL(await packageUrl(base, f.body));
    const results = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const target = servers[i % servers.length]!.url;
        const res = await fetch(`${target}${url.pathname}${url.search}`);
        const bytes = Buffer.from(await res.arrayBuffer());
        return { status: res.status, bytes };
      }),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(sha256(ok[0]!.bytes)).toBe(sha256(zip));
    const refused = results.filter((r) => r.status === 403);
    expect(refused).toHaveLength(99);
    for (const r of refused) expect(JSON.parse(r.bytes.toString()).code).toBe('token_consumed');
  }, 60_000);

  it('a client hanging up mid-stream leaves the token consumed and the server healthy', async () => {
    const base = servers[0]!.url;
    const zip = makeZip(8 * 1024 * 1024);
    const f = await fixture(base, zip);
    const url = new URL(await packageUrl(base, f.body));
    const received = await new Promise<number>((resolve, reject) => {
      const req = request(`${base}${url.pathname}${url.search}`, (res) => {
        let n = 0;
        res.on('data', (chunk: Buffer) => {
          n += chunk.length;
          if (n > 64 * 1024) {
            req.destroy();
            resolve(n);
          }
        });
        res.on('error', () => {});
      });
      req.on('error', () => {});
      req.on('close', () => resolve(-1));
      req.setTimeout(20_000, () => reject(new Error('timeout')));
      req.end();
    });
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan(zip.length);
    const again = await fetch(`${base}${url.pathname}${url.search}`);
    expect(again.status).toBe(403);
    expect(((await again.json()) as { code: string }).code).toBe('token_consumed');
    expect((await fetch(`${base}/v1/health`)).status).toBe(200);
    // The server let go of the file (the download stopped reading when the connection closed).
    const vault = join(dataDir, 'vault');
    const openVaultFiles = () =>
      readdirSync(`/proc/${servers[0]!.pid}/fd`).filter((fd) => {
        try {
          return readlinkSync(`/proc/${servers[0]!.pid}/fd/${fd}`).startsWith(vault);
        } catch {
          return false; // closed while listing
        }
      });
    await waitFor(() => openVaultFiles().length === 0, 'the server to close the vault file', {
      timeoutMs: 5000,
    });
    expect(openVaultFiles()).toEqual([]);
    // A fresh package still downloads in full.
    const fresh = await fetch(await packageUrl(base, f.body));
    expect(sha256(Buffer.from(await fresh.arrayBuffer()))).toBe(sha256(zip));
  }, 60_000);

  it('curl: the documented headers and the SHA-256 of the bytes', async () => {
    const base = servers[servers.length - 1]!.url;
    const zip = makeZip(300_000);
    const f = await fixture(servers[0]!.url, zip);
    const url = new URL(await packageUrl(servers[0]!.url, f.body));
    const out = join(dataDir, 'curl.zip');
    const headersFile = join(dataDir, 'curl.headers');
    await promisify(execFile)('curl', [
      '-sS',
      '-o',
      out,
      '-D',
      headersFile,
      `${base}${url.pathname}${url.search}`,
    ]);
    const { readFileSync } = await import('node:fs');
    const headers = readFileSync(headersFile, 'utf8').toLowerCase();
    expect(headers).toMatch(/^http\/1\.1 200/);
    expect(headers).toContain('content-type: application/zip');
    expect(headers).toContain('content-disposition: attachment; filename="');
    expect(headers).toContain(`content-length: ${zip.length}`);
    expect(headers).toContain('accept-ranges: none');
    expect(headers).toContain(`x-package-sha256: ${sha256(zip)}`);
    expect(headers).toContain('cache-control: no-cache, must-revalidate');
    expect(headers).toContain('pragma: no-cache');
    expect(headers).toContain('expires: 0');
    expect(sha256(readFileSync(out))).toBe(sha256(zip));
  }, 60_000);
});
