import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { type Fixture, protectedFixture, tokenOf } from '../distribution/helpers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { dialectUnderTest, freshDatabase, type TestDatabase } from '../helpers/db.js';
import { startServer } from '../helpers/server.js';

/** A port free right now on the loopback (METRICS_PORT cannot be 0). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the sample with exactly these labels, 0 when absent (a series not yet seen). */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels).sort();
  const hit = samples.find(
    (s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === JSON.stringify(want),
  );
  return hit ? hit.value : 0;
}

/** The metric names the operations page documents (its tables name each in backticks). */
const documented = () => [
  ...new Set(
    [...readFileSync('docs/operations.md', 'utf8').matchAll(/`((?:tollgate|process|nodejs)_\w+)`/g)].map(
      (m) => m[1]!,
    ),
  ),
];
/** The routes of validate, the update check, package issuance and download, as printRoutes names them. */
const HOT_ROUTES = [
  /── \/validate \(POST\)$/,
  /v1\/software\/check \([^)]*GET[^)]*\)$/,
  /v1\/software\/package \(POST\)$/,
  /v1\/software\/download \([^)]*GET[^)]*\)$/,
];

/** The hook lines printRoutes gives under the route whose line matches `route`. */
function hooksOf(t: TestApp, route: RegExp): string {
  const lines = t.app.printRoutes({ includeHooks: true, commonPrefix: false }).split('\n');
  const at = lines.findIndex((l) => route.test(l));
  if (at < 0) throw new Error(`no route ${route}`);
  const hooks: string[] = [];
  for (let i = at + 1; i < lines.length && lines[i]!.includes('•'); i++) hooks.push(lines[i]!);
  return hooks.join('\n');
}

const POOL_METRICS = [
  'tollgate_db_pool_connections',
  'tollgate_db_pool_idle_connections',
  'tollgate_db_pool_waiting',
];

describe('with METRICS_PORT', () => {
  let t: TestApp;
  let main: string;
  let metricsUrl: string;
  let f: Fixture;
  const secrets: string[] = [];

  const scrape = async () => {
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const secret of secrets) expect(text).not.toContain(secret);
    return { text, samples: parse(text), contentType: res.headers.get('content-type') };
  };
  const json = (path: string, body: unknown) =>
    fetch(`${main}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    const port = await freePort();
    t = await createTestApp({ env: { TEST_CLOCK: '1', METRICS_PORT: String(port) } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    main = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    expect(await t.app.metrics!.listen()).toBe(port);
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    // The outboxes' rows stay where they are: the depth and age below are this test's own.
    await t.app.services.dispatcher.stop();
    await t.app.services.mailWorker.stop();
  });
  afterAll(async () => t.close());

  it('answers the Prometheus text format with every documented metric', async () => {
    const { text, contentType } = await scrape();
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const names = documented();
    expect(names.length).toBeGreaterThan(12);
    for (const name of names) {
      if (POOL_METRICS.includes(name) && dialectUnderTest === 'sqlite') {
        expect(text).not.toContain(`# TYPE ${name} `);
        continue;
      }
      expect(text, name).toContain(`# TYPE ${name} `);
    }
    if (dialectUnderTest === 'postgres') {
      const samples = parse(text);
      expect(value(samples, 'tollgate_db_pool_connections')).toBeGreaterThanOrEqual(1);
      expect(value(samples, 'tollgate_db_pool_idle_connections')).toBeLessThanOrEqual(
        value(samples, 'tollgate_db_pool_connections'),
      );
    }
    // Every metric of ours is documented.
    for (const m of text.matchAll(/^# TYPE (tollgate_\w+) /gm)) expect(names).toContain(m[1]);
  });

  it('answers 404 for anything but GET /metrics, and the main port has no /metrics', async () => {
    const base = metricsUrl.replace(/\/metrics$/, '');
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/metrics/x`)).status).toBe(404);
    expect((await fetch(metricsUrl, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${metricsUrl}?name[]=x`)).status).toBe(200);
    const res = await fetch(`${main}/metrics`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe('rest_no_route');
  });

  it('shows a due webhook event in the depth and the age of the oldest due', async () => {
    const before = (await scrape()).samples;
    expect(value(before, 'tollgate_webhook_outbox_depth')).toBe(0);
    expect(value(before, 'tollgate_webhook_outbox_oldest_due_age_seconds')).toBe(0);
    await t.app.services.outbox.record('license.revoked', { license_id: 1 });
    await t.app.services.testClock!.advance(120);
    const after = (await scrape()).samples;
    expect(value(after, 'tollgate_webhook_outbox_depth')).toBe(1);
    const age = value(after, 'tollgate_webhook_outbox_oldest_due_age_seconds');
    expect(age).toBeGreaterThanOrEqual(120);
    expect(age).toBeLessThan(180);
    expect(value(after, 'tollgate_mail_outbox_depth')).toBe(0);
    expect(value(after, 'tollgate_mail_outbox_oldest_due_age_seconds')).toBe(0);
  });

  it('counts a validate success, a validate failure, a package and a download by their outcome', async () => {
    f = await protectedFixture(t);
    const unknownKey = 'ZZZZ-UNKNOWN-KEY-0000-0000';
    secrets.push(f.key, f.site.domain, f.site.installation_id, unknownKey);
    const before = (await scrape()).samples;

    const ok = await json('/v1/licenses/validate', { license_key: f.key, ...f.site });
    expect(ok.status).toBe(200);
    const refused = await json('/v1/licenses/validate', { license_key: unknownKey, ...f.site });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_license');
    const issued = await json('/v1/software/package', { slug: f.slug, purpose: 'install', ...f.creds });
    expect(issued.status).toBe(200);
    const { download_url } = (await issued.json()) as { download_url: string };
    secrets.push(tokenOf(download_url));
    const got = await fetch(`${main}${new URL(download_url).pathname}${new URL(download_url).search}`);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).length).toBe(f.zip.length);
    // The same token again: refused with its code.
    const again = await fetch(`${main}${new URL(download_url).pathname}${new URL(download_url).search}`);
    expect(again.status).toBe(403);

    const checked = await json('/v1/software/check', { slug: f.slug, version: '0.9.0', ...f.creds });
    expect(checked.status).toBe(200);
    const unknown = await json('/v1/software/check', {
      slug: 'no-such-product',
      version: '0.9.0',
      ...f.creds,
    });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    const unknownCode = ((await unknown.json()) as { code: string }).code;

    const after = (await scrape()).samples;
    const delta = (name: string, labels: Record<string, string> = {}) =>
      value(after, name, labels) - value(before, name, labels);
    const outcome = (operation: string, result: string) =>
      delta('tollgate_outcomes_total', { operation, result });
    expect(outcome('validate', 'success')).toBe(1);
    expect(outcome('validate', 'invalid_license')).toBe(1);
    expect(outcome('package', 'success')).toBe(1);
    expect(outcome('download', 'success')).toBe(1);
    expect(outcome('download', 'token_consumed')).toBe(1);
    expect(outcome('update_check', 'success')).toBe(1);
    expect(outcome('update_check', unknownCode)).toBe(1);
    expect(delta('tollgate_download_bytes_total')).toBe(f.zip.length);
    const route = (r: string, method: string, status: string) =>
      delta('tollgate_http_requests_total', { route: r, method, status });
    expect(route('/v1/licenses/validate', 'POST', '200')).toBe(1);
    expect(route('/v1/licenses/validate', 'POST', '403')).toBe(1);
    expect(route('/v1/software/download', 'GET', '200')).toBe(1);
    expect(route('/v1/software/download', 'GET', '403')).toBe(1);
    expect(
      delta('tollgate_http_request_duration_seconds_count', {
        route: '/v1/software/package',
        method: 'POST',
        status: '200',
      }),
    ).toBe(1);
  });

  it('labels requests by route pattern, never by the URL, and unmatched ones as such', async () => {
    const before = (await scrape()).samples;
    const res = await fetch(`${main}/v1/no-such-route/${f.key}`);
    expect(res.status).toBe(404);
    const token = await fetch(`${main}/v1/software/download?token=${'a'.repeat(64)}`);
    expect(token.status).toBeGreaterThanOrEqual(400);
    secrets.push('a'.repeat(64), 'no-such-route');
    const after = (await scrape()).samples;
    const requests = (labels: Record<string, string>) =>
      value(after, 'tollgate_http_requests_total', labels) -
      value(before, 'tollgate_http_requests_total', labels);
    expect(requests({ route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(requests({ route: '/v1/software/download', method: 'GET', status: String(token.status) })).toBe(1);
    for (const s of after.filter((x) => x.name === 'tollgate_http_requests_total')) {
      expect(s.labels.route === 'unmatched' || s.labels.route!.startsWith('/'), s.labels.route).toBe(true);
    }
  });

  it('a validate refused by its schema counts under its error code', async () => {
    const before = (await scrape()).samples;
    const bad = await json('/v1/licenses/validate', { license_key: 42, domain: 'shop.example.com' });
    expect(bad.status).toBe(400);
    const { code } = (await bad.json()) as { code: string };
    const after = (await scrape()).samples;
    const labels = { operation: 'validate', result: code };
    expect(
      value(after, 'tollgate_outcomes_total', labels) - value(before, 'tollgate_outcomes_total', labels),
    ).toBe(1);
  });

  it('counts rate-limit refusals by limiter', async () => {
    const before = (await scrape()).samples;
    let refusals = 0;
    for (let i = 0; i < 7; i++) {
      const res = await json('/v1/auth/login', {
        email: 'admin@example.com',
        password: `wrong-${i}-password`,
      });
      if (res.status === 429) refusals++;
      else expect(res.status).toBe(401);
    }
    expect(refusals).toBeGreaterThan(0);
    const after = (await scrape()).samples;
    const login = { limiter: 'login' };
    expect(
      value(after, 'tollgate_rate_limit_refusals_total', login) -
        value(before, 'tollgate_rate_limit_refusals_total', login),
    ).toBe(refusals);
  });

  it('the hot routes carry the metrics hooks', () => {
    for (const route of HOT_ROUTES) expect(hooksOf(t, route), String(route)).toContain('onResponse');
    expect(hooksOf(t, HOT_ROUTES[0]!)).toContain('preSerialization');
  });
});

describe('without METRICS_PORT', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('opens no second listener and adds no hook', async () => {
    expect(t.app.metrics).toBeNull();
    const servers = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
    const before = servers();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    expect(servers()).toBe(before + 1);
    for (const route of HOT_ROUTES) {
      expect(hooksOf(t, route), String(route)).not.toContain('onResponse');
      expect(hooksOf(t, route), String(route)).not.toContain('preSerialization');
    }
  });
});

describe('METRICS_PORT in the configuration', () => {
  it('is a whole number from 1 to 65535, other than PORT; unset means no metrics', () => {
    expect(loadConfig({}).metricsPort).toBeNull();
    expect(loadConfig({ METRICS_PORT: '' }).metricsPort).toBeNull();
    expect(loadConfig({ METRICS_PORT: '9100' }).metricsPort).toBe(9100);
    expect(loadConfig({ METRICS_PORT: '65535' }).metricsPort).toBe(65535);
    for (const bad of ['0', '65536', 'nine', '-1', '91.5', ' 9100', '9100x']) {
      expect(() => loadConfig({ METRICS_PORT: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ METRICS_PORT: bad }), bad).toThrow(/METRICS_PORT/);
    }
    expect(() => loadConfig({ PORT: '9100', METRICS_PORT: '9100' })).toThrow(/METRICS_PORT/);
  });
});

describe('the server process', () => {
  const dirs: string[] = [];
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  async function serverEnv(): Promise<Record<string, string>> {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-metrics-'));
    dirs.push(dataDir);
    const env: Record<string, string> = { DATA_DIR: dataDir };
    if (process.env.DATABASE_URL) {
      const db = await freshDatabase();
      dbs.push(db);
      env.DATABASE_URL = (db.config as { url: string }).url;
    }
    return env;
  }

  it('opens the metrics listener on METRICS_PORT and closes it on SIGTERM', async () => {
    const port = await freePort();
    const server = await startServer({ ...(await serverEnv()), METRICS_PORT: String(port) }, 50_000);
    expect(server.output()).toContain(`metrics on http://127.0.0.1:${port}/metrics`);
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('# TYPE tollgate_http_requests_total counter');
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    expect(await server.stop()).toBe(0);
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  }, 90_000);

  it('refuses a bad METRICS_PORT at start-up', async () => {
    await expect(startServer({ ...(await serverEnv()), METRICS_PORT: '70000' }, 40_000)).rejects.toThrow(
      /configuration error: METRICS_PORT/,
    );
  }, 60_000);

  it('stops the start when METRICS_PORT cannot be opened', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      await expect(
        startServer({ ...(await serverEnv()), METRICS_PORT: String(port) }, 40_000),
      ).rejects.toThrow(/failed to start/);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  }, 60_000);
});
