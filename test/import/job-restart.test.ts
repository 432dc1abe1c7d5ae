import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectUnderTest, freshDatabase, type TestDatabase } from '../helpers/db.js';
import { type ServerProcess, startServer } from '../helpers/server.js';

// An import job across a restart of the real server (docs/migrating.md, 'From the console'): a
// job the server stopped is shown failed with the reason `interrupted`, and running it again
// finishes the import without making anything twice.

const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };
/** Customers, written one to a transaction: enough for the job to be stopped part-way. */
const N = 30_000;
let dataDir: string;
let database: TestDatabase | undefined;
let env: Record<string, string>;
let server: ServerProcess | undefined;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'tollgate-job-restart-'));
  if (dialectUnderTest === 'postgres') database = await freshDatabase();
  env = {
    DATA_DIR: dataDir,
    ADMIN_EMAIL: OWNER.email,
    ADMIN_PASSWORD: OWNER.password,
    ...(database?.config.kind === 'postgres' ? { DATABASE_URL: database.config.url } : {}),
  };
  writeExport('export', 'x');
  writeExport('export2', 'y');
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A CSV export in DATA_DIR/imports/<name>, its ids and keys starting with `p` (the map knows one "csv" store). */
function writeExport(name: string, p: string) {
  const dir = join(dataDir, 'imports', name);
  mkdirSync(dir, { recursive: true });
  const rows = (header: string, make: (i: number) => string, count = N) =>
    `${[header, ...Array.from({ length: count }, (_, i) => make(i))].join('\n')}\n`;
  writeFileSync(
    join(dir, 'customers.csv'),
    rows('id,email', (i) => `${p}c${i},${p}buyer${i}@example.com`),
  );
  writeFileSync(
    join(dir, 'products.csv'),
    rows('id,name,slug,price', () => `${p}p1,Pro,${p}-restart-pro,9.00`, 1),
  );
  writeFileSync(
    join(dir, 'licenses.csv'),
    rows(
      'id,key,product_id,customer_id,status',
      (i) => `${p}l${i},${p}RESTART-${i},${p}p1,${p}c${i},active`,
      10,
    ),
  );
}

async function start() {
  // One server at a time: the one a test started before is stopped (a no-op when it has stopped).
  await server?.stop();
  server = await startServer(env, 90_000);
  const res = await fetch(`${server.url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(OWNER),
  });
  const cookie = res.headers
    .getSetCookie()
    .find((c) => c.startsWith('tollgate_session='))!
    .split(';')[0]!;
  const { nonce } = (await res.json()) as { nonce: string };
  const s = server;
  return async (method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${s.url}/v1${path}`, {
      method,
      headers: { cookie, 'x-rest-nonce': nonce, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
  };
}

type Api = Awaited<ReturnType<typeof start>>;
interface Job {
  id: number;
  status: string;
  processed: number;
  failure: { reason: string } | null;
  counts: Record<string, { created: number; present: number; skipped: number }>;
}

async function until(api: Api, id: number, done: (job: Job) => boolean): Promise<Job> {
  for (let i = 0; i < 1200; i++) {
    const job = (await api('GET', `/imports/${id}`)).body as unknown as Job;
    if (done(job)) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`job ${id} never got there`);
}

/** Starts the import and waits until it has written some customers (one at a time, the slowest kind). */
async function startAndWait(api: Api, dir: string): Promise<number> {
  const started = await api('POST', '/imports', { source: 'csv', dir });
  expect(started.status).toBe(202);
  const id = started.body.id as number;
  await until(api, id, (job) => job.counts.customers!.created > 0 || job.status !== 'running');
  return id;
}

describe('an import job and a restart of the server', () => {
  it('stopped by SIGTERM: failed interrupted after the restart; the re-run makes nothing twice', async () => {
    let api = await start();
    const id = await startAndWait(api, 'export');
    expect(await server!.stop()).toBe(0);
    api = await start();
    const stopped = (await api('GET', `/imports/${id}`)).body as unknown as Job;
    expect([stopped.status, stopped.failure?.reason]).toEqual(['failed', 'interrupted']);
    const made = stopped.counts.customers!.created;
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThan(N);
    const rerun = await api('POST', '/imports', { source: 'csv', dir: 'export' });
    expect(rerun.status).toBe(202);
    const done = await until(
      api,
      rerun.body.id as number,
      (job) => job.status !== 'running' && job.status !== 'queued',
    );
    expect(done.status).toBe('done');
    // Every customer is made once: those of the first run are found, the rest made now.
    expect(done.counts.customers).toEqual({ created: N - made, present: made, skipped: 0 });
    expect(done.counts.licenses).toEqual({ created: 10, present: 0, skipped: 0 });
  }, 300_000);

  it.skipIf(dialectUnderTest === 'postgres')(
    'killed (a crash) on SQLite: failed interrupted as soon as the server is back',
    async () => {
      let api = await start();
      const id = await startAndWait(api, 'export2');
      await server!.kill('SIGKILL');
      api = await start();
      const crashed = (await api('GET', `/imports/${id}`)).body as unknown as Job;
      expect([crashed.status, crashed.failure?.reason]).toEqual(['failed', 'interrupted']);
      // Not blocked by the crashed job: another one starts.
      expect((await api('POST', '/imports', { source: 'csv', dry_run: true, dir: 'export' })).status).toBe(
        202,
      );
    },
    300_000,
  );
});
