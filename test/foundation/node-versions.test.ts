import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SQLITE_DRIVER } from '../../src/db/sqlite.js';
import { SUPPORTED_NODE, unsupportedNode } from '../../src/node-version.js';
import { makeZip } from '../helpers/factories.js';
import { type ServerProcess, startServer } from '../helpers/server.js';

// The Node.js versions Tollgate runs on (docs/development.md, "Node.js versions"). CI runs the
// suite on Node 20, 22 and 24: the server tests below run on whichever Node.js runs the suite.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'tollgate-node-'));
  dirs.push(d);
  return d;
};

describe('supported Node.js versions', () => {
  it('accepts each supported line from its lowest release, and nothing else', () => {
    for (const v of ['20.19.0', '20.20.2', '22.14.0', '22.23.3', '24.0.0', '24.21.0']) {
      expect(unsupportedNode(v), v).toBeNull();
    }
    for (const v of ['18.20.8', '19.9.0', '20.18.3', '21.7.3', '22.13.1', '23.11.0', '25.0.0', '26.1.0']) {
      expect(unsupportedNode(v), v).not.toBeNull();
    }
    for (const v of ['', 'v24.1.0', 'banana', '24']) expect(unsupportedNode(v), v).not.toBeNull();
  });

  it('the Node.js running this suite is one of them, with its own better-sqlite3', () => {
    expect(unsupportedNode(process.versions.node)).toBeNull();
    const major = Number(process.versions.node.split('.')[0]);
    expect(SQLITE_DRIVER).toBe(major >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20');
  });

  it('package.json states the same versions', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.engines.node).toBe(SUPPORTED_NODE.map((l) => `^${l.major}.${l.minor}.0`).join(' || '));
  });
});

interface Run {
  code: number | null;
  signal: string | null;
  listened: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Runs `src/main.ts serve` with `process.versions.node` made to read `version`; stops it with
 * SIGTERM if it starts listening.
 */
function startAs(version: string, dataDir: string): Promise<Run> {
  const pretend = `Object.defineProperty(process.versions, 'node', { value: ${JSON.stringify(version)} });`;
  // After tsx, which reads the version to choose how to load TypeScript.
  const args = ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(pretend)}`];
  const child = spawn(process.execPath, [...args, 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: Run = { code: null, signal: null, listened: false, stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => {
    run.stdout += d.toString();
    if (!run.listened && /listening on /.test(run.stdout)) {
      run.listened = true;
      child.kill('SIGTERM');
    }
  });
  child.stderr.on('data', (d: Buffer) => {
    run.stderr += d.toString();
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ ...run, code, signal });
    });
  });
}

describe('a start on an unsupported Node.js', () => {
  it.each(['18.20.8', '19.9.0', '20.18.3', '23.11.0', '26.0.0'])(
    'Node.js %s: exits 1 with a one-line message before opening the database',
    async (version) => {
      const dataDir = join(tempDir(), 'data');
      const run = await startAs(version, dataDir);
      expect(run.code).toBe(1);
      expect(run.listened).toBe(false);
      expect(run.stdout).toBe('');
      // One line, not a stack trace.
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(existsSync(dataDir)).toBe(false);
    },
    40_000,
  );

  it('the same start, reading the version of the Node.js running the suite, serves', async () => {
    const dataDir = join(tempDir(), 'data');
    const run = await startAs(process.versions.node, dataDir);
    expect(run.listened).toBe(true);
    expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({
      code: 0,
      signal: null,
      stderr: '',
    });
    expect(existsSync(join(dataDir, 'tollgate.sqlite'))).toBe(true);
  }, 40_000);
});

const ADMIN = { email: 'burst-admin@example.com', password: 'burst admin password' };

async function api(base: string, method: string, path: string, body?: unknown, headers = {}) {
  const res = await fetch(`${base}/v1${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers of a test client
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

/**
 * A server on SQLite (whichever database the rest of the suite uses) with a software product, its
 * release, and `licenses` licenses each active on a site: each package request for one of them
 * writes a download token, a group commit.
 */
async function storeWithSites(licenses: number) {
  const server = await startServer({
    DATA_DIR: tempDir(),
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
  });
  const base = server.url;
  const login = await fetch(`${base}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('tollgate_session='))!
    .split(';')[0]!;
  const auth = { cookie, 'x-rest-nonce': ((await login.json()) as { nonce: string }).nonce };
  expect((await api(base, 'PATCH', '/settings', { rate_limit: 100 }, auth)).status).toBe(200);
  const slug = `burst-${randomUUID().slice(0, 8)}`;
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
  form.append('file', new Blob([makeZip(10_000)]), 'upload.zip');
  const upload = await fetch(`${base}/v1/software/products/${id}/versions`, {
    method: 'POST',
    headers: auth,
    body: form,
  });
  expect(upload.status).toBe(201);
  const me = await api(base, 'GET', '/auth/me', undefined, auth);
  const requests: unknown[] = [];
  for (let i = 0; i < licenses; i++) {
    const license = await api(base, 'POST', '/licenses', { product_id: id, user_id: me.json.user.id }, auth);
    const site = { domain: `site-${i}.example.com`, installation_id: randomUUID() };
    const activation = await api(base, 'POST', '/licenses/activate', {
      license_key: license.json.license_key,
      ...site,
    });
    expect(activation.status).toBe(200);
    requests.push({
      slug,
      purpose: 'install',
      license_key: license.json.license_key,
      site_url: site.domain,
      installation_id: site.installation_id,
    });
  }
  return { server, requests };
}

/** The server process's thread count: the checkpoint worker is a thread of its own. */
const threads = (server: ServerProcess) =>
  Number(/^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]);

/**
 * Package requests from three clients, each request a download token written by a group commit,
 * until the checkpoint worker has started (50 group commits in one second: src/db/checkpointer.ts).
 * Three at a time keep the server busy between a client's answer and its next request. Each license
 * may ask 100 times a minute, the address 500 times.
 */
async function burstUntilWorker(server: ServerProcess, requests: unknown[], before: number) {
  let sent = 0;
  const client = async () => {
    while (sent < 450 && threads(server) === before) {
      const res = await api(server.url, 'POST', '/software/package', requests[sent++ % requests.length]);
      expect(res.status).toBe(200);
    }
  };
  await Promise.all([client(), client(), client()]);
  expect(threads(server)).toBeGreaterThan(before);
}

async function until(what: () => boolean, ms: number) {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

// better-sqlite3 12 aborts Node 24.19 and later when the garbage collector frees one of its
// statements once their environment is gone: when the checkpoint worker leaves, at exit, and in
// collections outside any context (under load, or while starting).
describe(`the server on Node.js ${process.versions.node} with its checkpoint worker`, () => {
  it('survives a write burst, the worker starting and leaving, and exits 0 on SIGTERM', async () => {
    const { server, requests } = await storeWithSites(5);
    try {
      const before = threads(server);
      await burstUntilWorker(server, requests, before);
      // Idle for 10 seconds, the worker closes its connection and its thread ends.
      await until(() => threads(server) === before, 30_000);
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
      expect((await api(server.url, 'POST', '/software/package', requests[0])).status).toBe(200);
      expect(await server.stop()).toBe(0);
    } finally {
      await server.kill('SIGKILL');
    }
  }, 90_000);

  it('exits 0 on SIGTERM while the worker runs', async () => {
    const { server, requests } = await storeWithSites(5);
    try {
      await burstUntilWorker(server, requests, threads(server));
      expect(await server.stop()).toBe(0);
    } finally {
      await server.kill('SIGKILL');
    }
  }, 60_000);
});
