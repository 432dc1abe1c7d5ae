import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { type ClientRequest, type RequestOptions, request } from 'node:http';
import { createRequire } from 'node:module';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectUnderTest, freshDatabase, type TestDatabase } from '../helpers/db.js';
import { identity, makeZip } from '../helpers/factories.js';
import { type ServerProcess, signIn, startServer } from '../helpers/server.js';
import { sleep, waitFor } from '../helpers/wait.js';

/**
 * Several instances behind a proxy (docs/operations.md, "Several instances behind a proxy"): two
 * real server processes on one PostgreSQL database, with Debian's nginx in front of them running
 * the shipped examples/nginx/tollgate.conf, and TRUSTED_PROXIES=127.0.0.1. Through nginx: a release
 * uploaded to one process is bought, activated and downloaded from the other; the per-address
 * limits count the address nginx saw, across both processes, behind an nginx that replaces
 * X-Forwarded-For (the shipped file as it is) and one that appends to it (its commented
 * alternative), whatever the client writes in that header itself; stopping one process in the middle of a stream of
 * orders and of an upload loses no write that was acknowledged. Each process's metrics listener
 * counts what that process answered.
 *
 * Only on PostgreSQL (a SQLite store is served by one process) and with nginx installed; .ci/run
 * installs nginx, so under CI its absence on the PostgreSQL run is a failure, not a skip.
 */

/**
 * Each process has its own DATA_DIR and both store artifacts in the bucket (the S3_* settings,
 * docs/operations.md, 'Object storage'): a download served by the other process can only have
 * come from the bucket, and the test checks the object is there and that neither vault holds a
 * file.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SHIPPED_CONF = join(ROOT, 'examples/nginx/tollgate.conf');
const ADMIN = { email: 'multi-admin@example.com', password: 'multi instance admin password' };
const BUCKET = 'tollgate-multi';
/** Client addresses of the rate-limit checks: all of 127.0.0.0/8 reaches the loopback interface. */
const CLIENT_A = '127.0.0.2';
const CLIENT_B = '127.0.0.3';
const ACTIVATING_CLIENT = '127.0.0.4';
/** Clients of the nginx that appends to X-Forwarded-For. */
const APPENDED_CLIENT_A = '127.0.0.5';
const APPENDED_CLIENT_B = '127.0.0.6';
/** The shipped file's two ways of passing the client's address on. */
const REPLACING = 'proxy_set_header X-Forwarded-For $remote_addr;';
const APPENDING = 'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;';

function findNginx(): string | null {
  for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx']) if (existsSync(p)) return p;
  try {
    return execFileSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

const nginxBin = findNginx();
const onPostgres = dialectUnderTest === 'postgres';
const skip = !onPostgres || (nginxBin === null && !process.env.CI);

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

// ─── The shipped nginx configuration, rendered for the test ─────────────────────────────────────

/** The body of the first `header {` block of `text` (braces balanced), or throws. */
function blockBody(text: string, header: RegExp): string {
  const m = header.exec(text);
  if (!m) throw new Error(`no ${header} block in ${SHIPPED_CONF}`);
  const open = text.indexOf('{', m.index);
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(open + 1, i);
  }
  throw new Error(`unbalanced braces in ${SHIPPED_CONF}`);
}

/** Replaces `from` (which must occur) with `to`: the test fails loudly if the shipped file changed shape. */
function must(text: string, from: string | RegExp, to: string): string {
  const found = typeof from === 'string' ? text.includes(from) : from.test(text);
  if (!found) throw new Error(`${SHIPPED_CONF} no longer has ${from}`);
  return text.replaceAll(from, to);
}

/**
 * nginx.conf for the test: the shipped `upstream tollgate` (its addresses replaced by the two
 * processes') and the shipped HTTPS server block, less `listen`, `server_name` and the TLS lines,
 * listening on plain HTTP on `port`. Test-only additions: `X-Test-Instance: a|b` pins a request
 * to one process (a map over two one-server upstreams, so that "lands on one, downloads from the
 * other" is certain), and every answer says which process gave it (X-Test-Upstream).
 */
function renderNginxConf(
  dir: string,
  port: number,
  upstreams: [number, number],
  forwardedFor: 'replace' | 'append',
): string {
  const raw = readFileSync(SHIPPED_CONF, 'utf8');
  // The appending alternative is shipped as a comment beside the replacing line.
  if (!raw.includes(`# ${APPENDING}`)) throw new Error(`${SHIPPED_CONF} no longer offers ${APPENDING}`);
  let shipped = raw.replace(/#[^\n]*/g, '');
  if (forwardedFor === 'append') shipped = must(shipped, REPLACING, APPENDING);
  let upstream = blockBody(shipped, /^upstream tollgate\s*\{/m);
  upstream = must(upstream, 'server 127.0.0.1:8081 ', `server 127.0.0.1:${upstreams[0]} `);
  upstream = must(upstream, 'server 127.0.0.1:8082 ', `server 127.0.0.1:${upstreams[1]} `);
  const servers = [...shipped.matchAll(/^server\s*\{/gm)].map((m) =>
    blockBody(shipped.slice(m.index), /^server\s*\{/m),
  );
  const tls = servers.find((s) => s.includes('ssl_certificate'));
  if (!tls) throw new Error(`${SHIPPED_CONF} has no HTTPS server block`);
  let server = tls.replace(/^\s*(listen|server_name|ssl_[a-z_]+)\s[^;]*;/gm, '');
  server = must(server, 'proxy_pass http://tollgate;', 'proxy_pass http://$tollgate_upstream;');
  return `
worker_processes 1;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 256; }
http {
  log_format upstreams '$remote_addr "$request" $status upstream=$upstream_addr ($upstream_status)';
  access_log ${dir}/access.log upstreams;
  client_body_temp_path ${dir}/tmp/client_body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;

  upstream tollgate {${upstream}}
  upstream tollgate_a { server 127.0.0.1:${upstreams[0]}; }
  upstream tollgate_b { server 127.0.0.1:${upstreams[1]}; }
  map $http_x_test_instance $tollgate_upstream {
    default tollgate;
    a tollgate_a;
    b tollgate_b;
  }

  server {
    listen 127.0.0.1:${port};
    add_header X-Test-Upstream $upstream_addr always;
${server}
  }
}
`;
}

interface Nginx {
  url: string;
  log(): string;
  stop(): Promise<void>;
}

async function startNginx(
  bin: string,
  port: number,
  upstreams: [number, number],
  forwardedFor: 'replace' | 'append',
): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-nginx-'));
  // Started as root, nginx runs its workers as an unprivileged user (nobody), which must be able
  // to reach the temporary directories inside this one.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'tmp'));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, renderNginxConf(dir, port, upstreams, forwardedFor));
  const args = ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf];
  execFileSync(bin, [...args, '-t'], { stdio: 'pipe' });
  const child: ChildProcess = spawn(bin, [...args, '-g', 'daemon off;'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const log = () => {
    const read = (f: string) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : '');
    return `${out}\n--- error.log\n${read('error.log')}\n--- access.log\n${read('access.log')}`;
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', done);
      // SIGTERM: nginx's fast shutdown, the workers with it.
      child.kill('SIGTERM');
    });
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}:\n${log()}`);
        return fetch(`${url}/nginx-is-up`).then(
          () => true,
          () => false,
        );
      },
      'nginx to listen',
      { timeoutMs: 10_000 },
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, log, stop };
}

// ─── s3rver, the local S3-compatible server ─────────────────────────────────────────────────────

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (opts: {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

async function startS3(directory: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  // s3rver ships no types; required rather than imported so that no module declaration is needed.
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;
  const s3 = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET }],
  });
  const { port } = await s3.run();
  return { endpoint: `http://127.0.0.1:${port}`, close: () => s3.close() };
}

// ─── HTTP through nginx ─────────────────────────────────────────────────────────────────────────

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  // biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers of a test client
  json: () => any;
  /** The process that answered, `127.0.0.1:<port>` (nginx's X-Test-Upstream). */
  upstream: string;
}

/** One request over node:http, on a connection of its own; `write` sends the body. */
function exchange(
  url: string,
  options: RequestOptions,
  write: (req: ClientRequest) => void,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, ...options }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          body,
          json: () => JSON.parse(body.toString()),
          upstream: String(res.headers['x-test-upstream'] ?? ''),
        });
      });
    });
    req.on('error', reject);
    req.setTimeout(20_000, () => req.destroy(new Error(`${options.method} ${url}: no answer in 20 s`)));
    write(req);
  });
}

/**
 * One request through nginx (fetch cannot choose its source address): `from` is the client
 * address the connection comes from, `instance` pins it to process a or b.
 */
function send(
  base: string,
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; from?: string; instance?: 'a' | 'b' } = {},
): Promise<Answer> {
  const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
  const headers: Record<string, string> = {
    ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
    ...(opts.instance ? { 'x-test-instance': opts.instance } : {}),
    ...opts.headers,
  };
  return exchange(
    `${base}${path}`,
    { method, headers, ...(opts.from ? { localAddress: opts.from } : {}) },
    (req) => req.end(payload),
  );
}

/**
 * A release upload through nginx, pinned to one process, whose body goes in two halves: the
 * first at once, the second when `sendRest` is called, so the request is certainly under way
 * while that process is told to stop.
 */
function splitUpload(url: string, headers: Record<string, string>, version: string, zip: Buffer) {
  const boundary = `tollgate-${randomUUID()}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="version"\r\n\r\n${version}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload.zip"\r\n` +
        'Content-Type: application/zip\r\n\r\n',
    ),
    zip,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const half = Math.floor(body.length / 2);
  let rest = () => {};
  const answer = exchange(
    url,
    {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(body.length),
      },
    },
    (req) => {
      req.write(body.subarray(0, half));
      rest = () => req.end(body.subarray(half));
    },
  );
  return { answer, sendRest: () => rest() };
}

// ─── The cluster ────────────────────────────────────────────────────────────────────────────────

let database: TestDatabase | undefined;
const servers: ServerProcess[] = [];
let nginx: Nginx | undefined;
/** A second nginx, in front of the same two processes, that appends to X-Forwarded-For. */
let appendingNginx: Nginx | undefined;
let s3: { endpoint: string; close(): Promise<void> } | undefined;
const dirs: string[] = [];
let base = '';
let admin: Record<string, string> = {};
/** `127.0.0.1:<port>` of process a and process b, as nginx's X-Test-Upstream names them. */
let addrOf: { a: string; b: string };
/** Each process's own metrics listener (METRICS_PORT), as an operator scrapes them. */
let metricsOf: { a: string; b: string };

/** The value of one series in a Prometheus text exposition; 0 when it is absent. */
async function metric(url: string, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(url)).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && want.every((w) => l.slice(0, l.indexOf('}')).includes(w)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const api = (method: string, path: string, opts: Parameters<typeof send>[3] = {}) =>
  send(base, method, `/v1${path}`, opts);
const adminApi = (method: string, path: string, opts: Parameters<typeof send>[3] = {}) =>
  api(method, path, { ...opts, headers: { ...admin, ...opts.headers } });

function expectStatus(res: Answer, status: number) {
  expect(res.status, `${res.status} ${res.body.toString().slice(0, 500)}`).toBe(status);
}

describe.skipIf(skip)('several instances behind nginx (PostgreSQL)', () => {
  beforeAll(async () => {
    if (nginxBin === null) {
      throw new Error('nginx is not installed: .ci/run installs it (apt package nginx) for this test');
    }
    database = await freshDatabase();
    const mk = (tag: string) => {
      const d = mkdtempSync(join(tmpdir(), `tollgate-multi-${tag}-`));
      dirs.push(d);
      return d;
    };
    s3 = await startS3(mk('s3'));
    const nginxPort = await freePort();
    base = `http://127.0.0.1:${nginxPort}`;
    const vaultKey = randomBytes(32).toString('base64');
    const metricsPorts = [await freePort(), await freePort()];
    metricsOf = {
      a: `http://127.0.0.1:${metricsPorts[0]}/metrics`,
      b: `http://127.0.0.1:${metricsPorts[1]}/metrics`,
    };
    const env = (dataDir: string, metricsPort: number): Record<string, string> => ({
      DATABASE_URL: database!.config.kind === 'postgres' ? database!.config.url : '',
      DATA_DIR: dataDir,
      // nginx connects from 127.0.0.1: the client is the right-most X-Forwarded-For address that
      // is not nginx, whether nginx replaced the header or appended to it.
      TRUSTED_PROXIES: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
      PUBLIC_URL: base,
      // Every process must hold the key that seals encrypted artifacts and signing keys.
      VAULT_KEY: vaultKey,
      S3_ENDPOINT: s3!.endpoint,
      S3_REGION: 'us-east-1',
      S3_BUCKET: BUCKET,
      S3_PREFIX: 'artifacts/',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: '1',
    });
    // Both at once; only a makes sure the administrator exists, so that the two do not race to
    // create the same account. Whatever starts is kept for afterAll to stop.
    const started = await Promise.allSettled([
      startServer({
        ...env(mk('data-a'), metricsPorts[0]!),
        ADMIN_EMAIL: ADMIN.email,
        ADMIN_PASSWORD: ADMIN.password,
      }),
      startServer(env(mk('data-b'), metricsPorts[1]!)),
    ]);
    for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const ports = servers.map((s) => Number(new URL(s.url).port)) as [number, number];
    addrOf = { a: `127.0.0.1:${ports[0]}`, b: `127.0.0.1:${ports[1]}` };
    nginx = await startNginx(nginxBin, nginxPort, ports, 'replace');
    appendingNginx = await startNginx(nginxBin, await freePort(), ports, 'append');
    admin = await signIn(base, ADMIN.email, ADMIN.password).catch((e: Error) => {
      throw new Error(`${e.message} ${String(e.cause)}\n${nginx?.log()}`);
    });
  }, 120_000);

  afterAll(async () => {
    // Everything that was started is stopped, whatever the other stops give.
    await Promise.allSettled([
      ...servers.map((s) => s.stop()),
      nginx?.stop(),
      appendingNginx?.stop(),
      s3?.close(),
    ]);
    await database?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a release uploaded to one process is bought, activated and downloaded from the other', async () => {
    const slug = `multi-${randomUUID().slice(0, 8)}`;
    const product = await adminApi('POST', '/products', {
      body: { name: slug, type: 'simple', price: '10.00', licensing_enabled: 'yes' },
      instance: 'a',
    });
    expectStatus(product, 201);
    const productId = product.json().id as number;
    // The session made through nginx is in the shared database: process b accepts it too.
    expectStatus(
      await adminApi('POST', `/software/products/${productId}/config`, {
        body: { slug, software_enabled: 'yes' },
        instance: 'b',
      }),
      200,
    );

    // The upload streams through nginx (proxy_request_buffering off) to process a.
    const zip = makeZip(3 * 1024 * 1024);
    const form = new FormData();
    form.append('version', '1.0.0');
    form.append('file', new Blob([zip]), 'upload.zip');
    const up = await fetch(`${base}/v1/software/products/${productId}/versions`, {
      method: 'POST',
      headers: { ...admin, 'x-test-instance': 'a' },
      body: form,
    });
    const release = (await up.json()) as { file_sha256: string };
    expect(up.status, JSON.stringify(release)).toBe(201);
    expect(up.headers.get('x-test-upstream')).toBe(addrOf.a);
    expect(release.file_sha256).toBe(sha256(zip));

    // A guest buys it with the test card.
    const email = `multi-buyer-${randomUUID().slice(0, 8)}@example.com`;
    const order = await api('POST', '/checkout/submit', {
      body: {
        items: [{ product_id: productId, qty: 1 }],
        billing: { first_name: 'Ada', last_name: 'Lovelace', email, country: 'GB' },
        payment_method: 'test_card',
      },
    });
    expectStatus(order, 200);
    const { order_id: orderId, order_key: orderKey } = order.json() as {
      order_id: number;
      order_key: string;
    };
    const paid = await api('POST', `/checkout/pay-order/${orderId}`, {
      body: { key: orderKey, payment_method: 'test_card', payment_data: { card_number: '4242424242424242' } },
    });
    expectStatus(paid, 200);
    expect(paid.json()).toMatchObject({ ok: true });
    const licenses = await adminApi('GET', `/licenses?product_id=${productId}`);
    expectStatus(licenses, 200);
    const [license] = licenses.json().licenses as { id: number; license_key: string; order_id: number }[];
    expect(license).toMatchObject({ order_id: orderId });

    // The site activates from its own address; the activation records that one, not nginx's.
    const site = identity('shop.multi.example.com');
    const act = await api('POST', '/licenses/activate', {
      body: { license_key: license!.license_key, ...site },
      from: ACTIVATING_CLIENT,
    });
    expectStatus(act, 200);
    const activations = await adminApi('GET', `/licenses/${license!.id}/activations`);
    expectStatus(activations, 200);
    const listed = activations.json();
    const rows = (Array.isArray(listed) ? listed : listed.activations) as {
      domain: string;
      ip_address: string;
    }[];
    expect(rows.map((r) => [r.domain, r.ip_address])).toEqual([
      ['shop.multi.example.com', ACTIVATING_CLIENT],
    ]);

    // The update check on one process issues the download link; the other serves the package.
    const creds = {
      license_key: license!.license_key,
      site_url: `https://${site.domain}/`,
      installation_id: site.installation_id,
    };
    const check = await api('POST', '/software/check', {
      body: { slug, version: '0.9.0', ...creds },
      instance: 'a',
    });
    expectStatus(check, 200);
    expect(check.upstream).toBe(addrOf.a);
    expect(check.json()).toMatchObject({ eligible: true, latest_version: '1.0.0', file_sha256: sha256(zip) });
    const downloadUrl = check.json().download_url as string;
    expect(downloadUrl.startsWith(`${base}/v1/`)).toBe(true);
    const u = new URL(downloadUrl);
    const dl = await send(base, 'GET', `${u.pathname}${u.search}`, { instance: 'b' });
    expectStatus(dl, 200);
    expect(dl.upstream).toBe(addrOf.b);
    expect(dl.body.length).toBe(zip.length);
    expect(sha256(dl.body)).toBe(sha256(zip));
    // Single use across both processes: the token is spent in the shared database.
    const again = await send(base, 'GET', `${u.pathname}${u.search}`, { instance: 'a' });
    expectStatus(again, 403);
    expect(again.json().code).toBe('token_consumed');
    // Each process counts what it answered, on its own metrics listener.
    const outcome = (url: string, operation: string, result: string) =>
      metric(url, 'tollgate_outcomes_total', { operation, result });
    expect(await outcome(metricsOf.a, 'update_check', 'success')).toBe(1);
    expect(await outcome(metricsOf.b, 'update_check', 'success')).toBe(0);
    expect(await outcome(metricsOf.b, 'download', 'success')).toBe(1);
    expect(await outcome(metricsOf.a, 'download', 'success')).toBe(0);
    expect(await outcome(metricsOf.a, 'download', 'token_consumed')).toBe(1);

    // The package came from the bucket: neither process's own vault holds a file.
    const listing = await (await fetch(`${s3!.endpoint}/${BUCKET}?list-type=2&prefix=artifacts/`)).text();
    expect(listing).toMatch(/<Key>artifacts\/[^<]+<\/Key>/);
    for (const d of dirs.filter((x) => /data-[ab]-/.test(x))) {
      const vault = join(d, 'vault');
      const entries = existsSync(vault) ? readdirSync(vault, { recursive: true, withFileTypes: true }) : [];
      expect(entries.filter((e) => e.isFile()).map((e) => e.name)).toEqual([]);
    }
  });

  it('per-address limits count the address nginx saw, across both processes', async () => {
    // The issuance limit counts in fixed one-minute windows: start early in one, so that the
    // eleven requests below fall in the same window.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await sleep(60_000 - intoMinute + 200);
    const slug = `no-such-product-${randomUUID().slice(0, 8)}`;
    const checkFrom = (from: string, instance: 'a' | 'b', headers: Record<string, string> = {}) =>
      api('GET', `/software/check?slug=${slug}&version=1.0.0`, { from, instance, headers });

    // rate_limit is 10 a minute (the default): ten checks of an unknown product from one client
    // address, alternating between the processes, are all answered; the eleventh is refused.
    for (let i = 0; i < 10; i++) {
      const res = await checkFrom(CLIENT_A, i % 2 === 0 ? 'a' : 'b');
      expectStatus(res, 404);
      expect(res.json().code).toBe('product_not_found');
      expect(res.upstream).toBe(i % 2 === 0 ? addrOf.a : addrOf.b);
    }
    for (const instance of ['a', 'b'] as const) {
      const refused = await checkFrom(CLIENT_A, instance);
      expectStatus(refused, 429);
      expect(refused.json().code).toBe('rate_limited');
    }
    // A forged X-Forwarded-For does not make the same client someone else: nginx replaces it.
    const forged = await checkFrom(CLIENT_A, 'a', { 'x-forwarded-for': '198.51.100.23' });
    expectStatus(forged, 429);
    expect(forged.json().code).toBe('rate_limited');
    // Another client address has its own count, on either process.
    for (const instance of ['a', 'b'] as const) {
      const other = await checkFrom(CLIENT_B, instance);
      expectStatus(other, 404);
      expect(other.json().code).toBe('product_not_found');
    }
    // Each process counted the refusals it gave: two on a (one with the forged header), one on b.
    const refusals = (url: string) =>
      metric(url, 'tollgate_rate_limit_refusals_total', { limiter: 'software_issuance' });
    expect(await refusals(metricsOf.a)).toBe(2);
    expect(await refusals(metricsOf.b)).toBe(1);
  });

  it('behind an nginx that appends to X-Forwarded-For, what the client writes there is not believed', async () => {
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await sleep(60_000 - intoMinute + 200);
    const slug = `no-such-product-${randomUUID().slice(0, 8)}`;
    const checkFrom = (from: string, instance: 'a' | 'b', headers: Record<string, string> = {}) =>
      send(appendingNginx!.url, 'GET', `/v1/software/check?slug=${slug}&version=1.0.0`, {
        from,
        instance,
        headers,
      });
    const refusals = (url: string) =>
      metric(url, 'tollgate_rate_limit_refusals_total', { limiter: 'software_issuance' });
    const before = { a: await refusals(metricsOf.a), b: await refusals(metricsOf.b) };

    // Each request claims to come from another address: nginx appends the one it saw, and that
    // one (the right-most not in TRUSTED_PROXIES) is what both processes count.
    for (let i = 0; i < 10; i++) {
      const res = await checkFrom(APPENDED_CLIENT_A, i % 2 === 0 ? 'a' : 'b', {
        'x-forwarded-for': `198.51.100.${i + 1}`,
      });
      expectStatus(res, 404);
      expect(res.json().code).toBe('product_not_found');
    }
    for (const instance of ['a', 'b'] as const) {
      const refused = await checkFrom(APPENDED_CLIENT_A, instance, {
        'x-forwarded-for': '198.51.100.99, 127.0.0.1',
      });
      expectStatus(refused, 429);
      expect(refused.json().code).toBe('rate_limited');
    }
    // Another client behind the same nginx has its own count, on either process.
    for (const instance of ['a', 'b'] as const) {
      const other = await checkFrom(APPENDED_CLIENT_B, instance);
      expectStatus(other, 404);
      expect(other.json().code).toBe('product_not_found');
    }
    expect(await refusals(metricsOf.a)).toBe(before.a + 1);
    expect(await refusals(metricsOf.b)).toBe(before.b + 1);
  });

  it('stopping one process mid-traffic loses no acknowledged write', async () => {
    // The default checkout limit (5 orders per address per 10 minutes) would refuse this stream;
    // both processes must see the new value (settings are cached for a second per process).
    expectStatus(await adminApi('PATCH', '/settings', { body: { checkout_rate_limit: 1000 } }), 200);
    for (const instance of ['a', 'b'] as const) {
      await waitFor(
        async () => (await adminApi('GET', '/settings', { instance })).json().checkout_rate_limit === 1000,
        `process ${instance} to see checkout_rate_limit 1000`,
      );
    }
    const product = await adminApi('POST', '/products', { body: { name: 'Stream target', price: '5.00' } });
    expectStatus(product, 201);
    const productId = product.json().id as number;
    const tag = randomUUID().slice(0, 8);

    // A release upload to process b, half sent: it is under way when b is told to stop, and must
    // still be stored whole. A public product, so that anyone may check for it and download it.
    const slug = `multi-stop-${tag}`;
    const free = await adminApi('POST', '/products', {
      body: { name: slug, type: 'simple', price: '0.00', licensing_enabled: 'no' },
    });
    expectStatus(free, 201);
    const freeId = free.json().id as number;
    expectStatus(
      await adminApi('POST', `/software/products/${freeId}/config`, {
        body: { slug, software_enabled: 'yes' },
      }),
      200,
    );
    const zip = makeZip(2 * 1024 * 1024);
    const upload = splitUpload(
      `${base}/v1/software/products/${freeId}/versions`,
      { ...admin, 'x-test-instance': 'b' },
      '1.0.0',
      zip,
    );
    await sleep(300);

    // Orders, four at a time, through the shipped upstream (round robin, no pinning). Process b
    // gets SIGTERM once 10 are acknowledged, and the upload's second half follows 300 ms later;
    // the stream goes on until 8 more are acknowledged after b has exited. b exits only once the
    // upload is stored, which on a loaded machine took long enough for 90 orders to run out
    // first: the bound is 400, reached only if b never exits.
    const MAX_ORDERS = 400;
    const AFTER_EXIT = 8;
    const submit = (i: number) =>
      api('POST', '/checkout/submit', {
        body: {
          items: [{ product_id: productId, qty: 1 }],
          billing: {
            first_name: 'S',
            last_name: 'T',
            email: `stream-${tag}-${i}@example.com`,
            country: 'GB',
          },
          payment_method: 'test_card',
        },
        headers: { 'idempotency-key': `stream-${tag}-${i}` },
      }).catch((e: Error) => ({ status: 0, error: e.message }) as const);
    const results: {
      i: number;
      orderId: number | null;
      status: number;
      upstream: string;
      afterStop: boolean;
    }[] = [];
    let stopping: Promise<number | null> | null = null;
    let stopped = false;
    let ackedAfterExit = 0;
    let nextIndex = 0;
    const worker = async () => {
      while (nextIndex < MAX_ORDERS && ackedAfterExit < AFTER_EXIT) {
        const i = nextIndex++;
        const afterStop = stopped;
        const res = await submit(i);
        const ok = 'body' in res && res.status === 200 && res.json().ok === true;
        results.push({
          i,
          status: res.status,
          orderId: ok ? (res.json().order_id as number) : null,
          upstream: 'upstream' in res ? res.upstream : '',
          afterStop,
        });
        if (ok && afterStop) ackedAfterExit++;
        if (!stopping && results.filter((r) => r.orderId !== null).length >= 10) {
          stopping = servers[1]!.stop().then((code) => {
            stopped = true;
            return code;
          });
          setTimeout(upload.sendRest, 300);
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    const sent = nextIndex;
    expect(stopping, 'process b was stopped').not.toBeNull();
    // A graceful stop: in-flight requests finished, exit code 0.
    expect(await stopping).toBe(0);

    // The upload that was under way was finished and acknowledged by b, and what b stored is
    // whole: the process still running offers it and serves it byte for byte.
    const uploaded = await upload.answer;
    expectStatus(uploaded, 201);
    expect(uploaded.upstream).toBe(addrOf.b);
    expect(uploaded.json().file_sha256).toBe(sha256(zip));
    const check = await api('GET', `/software/check?slug=${slug}&version=0.9.0`);
    expectStatus(check, 200);
    expect(check.upstream).toBe(addrOf.a);
    expect(check.json()).toMatchObject({ eligible: true, latest_version: '1.0.0' });
    const u = new URL(check.json().download_url as string);
    const dl = await send(base, 'GET', `${u.pathname}${u.search}`);
    expectStatus(dl, 200);
    expect(dl.upstream).toBe(addrOf.a);
    expect(sha256(dl.body)).toBe(sha256(zip));

    const acked = results.filter((r) => r.orderId !== null);
    // Both processes took orders before the stop, and the survivor took those after b's exit.
    expect(acked.some((r) => r.upstream === addrOf.b)).toBe(true);
    expect(ackedAfterExit).toBeGreaterThanOrEqual(AFTER_EXIT);
    for (const r of acked.filter((x) => x.afterStop)) expect(r.upstream).toMatch(new RegExp(`${addrOf.a}$`));
    // Anything not acknowledged was a server-side failure during the stop (nginx's 502, or 503
    // from a closing process), never a refusal of the order itself.
    for (const r of results.filter((x) => x.orderId === null))
      expect(r.status === 0 || r.status >= 500).toBe(true);

    // Every acknowledged order is in the database, read back through the process still running.
    for (const r of acked) {
      const read = await adminApi('GET', `/orders/${r.orderId}`);
      expectStatus(read, 200);
      expect(read.json().billing.email).toBe(`stream-${tag}-${r.i}@example.com`);
    }
    // The client's retry of an unacknowledged one, with the same Idempotency-Key, answers the
    // order if it had been placed after all, else places it: in the end exactly one order each.
    const ids = new Map(acked.map((r) => [r.i, r.orderId!]));
    for (const r of results.filter((x) => x.orderId === null)) {
      const retry = await submit(r.i);
      expect('body' in retry && retry.status).toBe(200);
      if ('body' in retry) ids.set(r.i, retry.json().order_id as number);
    }
    expect(ids.size).toBe(sent);
    expect(new Set(ids.values()).size).toBe(sent);
    const ours: { id: number; billing: { email: string } }[] = [];
    for (let page = 1; ; page++) {
      const list = await adminApi('GET', `/orders?per_page=100&page=${page}`);
      expectStatus(list, 200);
      const orders = list.json() as { id: number; billing: { email: string } }[];
      ours.push(...orders.filter((o) => o.billing.email.startsWith(`stream-${tag}-`)));
      if (orders.length < 100) break;
    }
    expect(ours.map((o) => o.id).sort((x, y) => x - y)).toEqual([...ids.values()].sort((x, y) => x - y));
  }, 60_000);
});
