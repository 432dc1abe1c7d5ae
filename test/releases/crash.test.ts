import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { makeZip } from '../helpers/factories.js';
import { type ServerProcess, signIn, startServer } from '../helpers/server.js';
import { stagingFiles, vaultFiles } from '../helpers/vault.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Real server processes: an upload cut off by a dropped connection or by SIGKILL of the server
 * leaves no release and no visible file, and a restart sweeps the staging leftovers.
 */

const ADMIN = { email: 'crash-admin@example.com', password: 'crash test password' };
let dataDir: string;
let db: TestDatabase | null = null;
let env: Record<string, string>;
let server: ServerProcess;
let auth: string;
let productId: number;

async function api(
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const res = await fetch(`${server.url}/v1${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: auth,
      ...(init.body ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const vault = () => join(dataDir, 'vault');
const staging = () => stagingFiles(vault());
/** Staging files come and go quickly: look every 25 ms, for up to 15 s. */
const STAGING_WAIT = { timeoutMs: 15_000, intervalMs: 25 };

/**
 * Starts a multipart upload of `total` bytes and sends only the first `sent` of the file,
 * answering the request so the caller can cut it off.
 */
function partialUpload(version: string, sent: number) {
  const boundary = `----crash${randomBytes(6).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="version"\r\n\r\n${version}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.zip"\r\n` +
      'Content-Type: application/zip\r\n\r\n',
  );
  const url = new URL(`${server.url}/v1/software/products/${productId}/versions`);
  const req = request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers: {
      authorization: auth,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + 50 * 1024 * 1024),
    },
  });
  req.on('error', () => {});
  req.write(head);
  req.write(makeZip(sent - 200).subarray(0, sent));
  return req;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tollgate-crash-'));
  env = { DATA_DIR: dataDir, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password };
  if (process.env.DATABASE_URL) {
    db = await freshDatabase();
    if (db.config.kind === 'postgres') env.DATABASE_URL = db.config.url;
  }
  server = await startServer(env);
  const session = await signIn(server.url, ADMIN.email, ADMIN.password);
  const pw = await fetch(`${server.url}/v1/users/me/application-passwords`, {
    method: 'POST',
    headers: { ...session, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'crash' }),
  });
  const { password } = (await pw.json()) as { password: string };
  auth = `Basic ${Buffer.from(`${ADMIN.email}:${password}`).toString('base64')}`;
  const product = await api('/products', {
    method: 'POST',
    body: { name: 'Crash', type: 'simple', price: '1.00' },
  });
  productId = product.body.id as number;
  expect(
    (await api(`/software/products/${productId}/config`, { method: 'POST', body: { slug: 'crash-plugin' } }))
      .status,
  ).toBe(200);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('an interrupted upload publishes nothing', () => {
  it('a dropped connection mid-upload removes the staging file and creates no release', async () => {
    const req = partialUpload('1.0.0', 2 * 1024 * 1024);
    await waitFor(() => staging().length === 1, 'the staging file', STAGING_WAIT);
    req.destroy();
    await waitFor(() => staging().length === 0, 'the staging file to be removed', STAGING_WAIT);
    const list = await api(`/software/products/${productId}/versions`);
    expect(list.body.releases).toEqual([]);
    expect(vaultFiles(vault())).toEqual([]);
  });

  it('SIGKILL of the server mid-upload: nothing published, and the restart sweeps staging', async () => {
    const req = partialUpload('1.0.0', 3 * 1024 * 1024);
    await waitFor(() => staging().length === 1, 'the staging file', STAGING_WAIT);
    await server.kill('SIGKILL');
    req.destroy();
    // The dead process could not clean up: its partial file is still there.
    expect(staging()).toHaveLength(1);
    expect(vaultFiles(vault())).toEqual([]);

    server = await startServer(env);
    expect(staging()).toEqual([]);
    const list = await api(`/software/products/${productId}/versions`);
    expect(list.status).toBe(200);
    expect(list.body.releases).toEqual([]);
    expect(vaultFiles(vault())).toEqual([]);
    const status = await api('/software/storage/status');
    expect(status.body.staging).toMatchObject({ files: 0, bytes: 0 });
    expect(status.body.counts).toMatchObject({ artifacts: {}, releases: {} });
  });

  it('after the restart the same upload completes', async () => {
    const zip = makeZip(100_000);
    const form = new FormData();
    form.append('version', '1.0.0');
    form.append('file', new Blob([zip]), 'plugin.zip');
    const res = await fetch(`${server.url}/v1/software/products/${productId}/versions`, {
      method: 'POST',
      headers: { authorization: auth },
      body: form,
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { status: string }).status).toBe('published');
    expect(vaultFiles(vault())).toHaveLength(1);
  });

  it('a file moved into the vault whose commit never came is swept at restart once an hour old', async () => {
    // What SIGKILL between the move into the vault and the database commit leaves: a file at a
    // generated key that no artifact row names. A fresh one may be another process's upload
    // about to commit, so it stays; the artifact committed above stays whatever its age.
    const dir = join(dataDir, 'vault', 'ab');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const old = join(dir, 'abcdef01-2345-4678-89ab-cdef01234567.zip');
    const fresh = join(dir, 'abcdef01-2345-4678-89ab-cdef01234568.tgv');
    writeFileSync(old, makeZip(1000), { mode: 0o600 });
    writeFileSync(fresh, makeZip(1000), { mode: 0o600 });
    const twoHoursAgo = (Date.now() - 2 * 3600_000) / 1000;
    utimesSync(old, twoHoursAgo, twoHoursAgo);
    const committed = vaultFiles(vault()).find(
      (f) => !basename(f).startsWith('abcdef01-2345-4678-89ab-cdef0123456'),
    )!;
    utimesSync(join(vault(), committed), twoHoursAgo, twoHoursAgo);
    expect(vaultFiles(vault())).toHaveLength(3);

    await server.stop();
    server = await startServer(env);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    expect(vaultFiles(vault())).toEqual([committed, 'ab/abcdef01-2345-4678-89ab-cdef01234568.tgv'].sort());
    const list = await api(`/software/products/${productId}/versions`);
    expect((list.body.releases as { status: string }[]).map((r) => r.status)).toEqual(['published']);
  });
});
