import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCustomer } from '../helpers/factories.js';

// Import jobs started from the console (docs/migrating.md, 'From the console'): the admin API,
// one job at a time, interrupted jobs, and bad input, on the test's database.

let t: TestApp;
const tag = `${process.pid}${Date.now().toString(36)}`;

/**
 * A CSV export in DATA_DIR/imports/<name> with `n` customers, each with one license and one site
 * (the first site's address is unreadable). Ids carry the name: the import map knows one "csv" store.
 */
function csvExport(name: string, n: number): string {
  const dir = join(t.config.dataDir, 'imports', name);
  mkdirSync(dir, { recursive: true });
  const rows = (header: string, make: (i: number) => string, count = n) =>
    `${[header, ...Array.from({ length: count }, (_, i) => make(i))].join('\r\n')}\r\n`;
  const id = (kind: string, i: number) => `${name}-${kind}${i}`;
  writeFileSync(
    join(dir, 'customers.csv'),
    rows('id,email', (i) => `${id('c', i)},${name}-${i}-${tag}@example.com`),
  );
  writeFileSync(
    join(dir, 'products.csv'),
    rows('id,name,slug,price', () => `${name}-p,Pro,${name}-pro-${tag},49.00`, 1),
  );
  writeFileSync(
    join(dir, 'licenses.csv'),
    rows(
      'id,key,product_id,customer_id,status',
      (i) => `${id('l', i)},KEY-${name}-${i}-${tag},${name}-p,${id('c', i)},active`,
    ),
  );
  writeFileSync(
    join(dir, 'activations.csv'),
    rows('id,license_id,url', (i) =>
      i === 0
        ? `${id('a', i)},${id('l', i)},not a url`
        : `${id('a', i)},${id('l', i)},https://s${i}.${name}.example.com`,
    ),
  );
  return dir;
}

interface Job {
  id: number;
  status: string;
  source: string;
  dry_run: boolean;
  dir: string | null;
  processed: number;
  total: number | null;
  counts: Record<string, { created: number; present: number; skipped: number }>;
  failure: { reason: string; message: string | null } | null;
  report: {
    ok: boolean;
    problem_count: number;
    problems: { kind: string; source_id: string; reason: string }[];
    reconciliation: { kind: string; source: number; imported: number; skipped: number; ok: boolean }[];
    revenue: { currency: string; source: number; imported: number; skipped: number; ok: boolean }[];
    stripe: { customers: number; cards: number };
  } | null;
}

const post = (payload: unknown, headers: Record<string, string> = t.adminAuth) =>
  t.app.inject({ method: 'POST', url: '/v1/imports', headers, payload: payload as object });
const read = async (id: number) =>
  (await t.app.inject({ method: 'GET', url: `/v1/imports/${id}`, headers: t.adminAuth })).json() as Job;

async function settle(id: number): Promise<Job> {
  for (let i = 0; i < 1200; i++) {
    const job = await read(id);
    if (job.status === 'done' || job.status === 'failed') return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${id} did not end`);
}

const db = () => t.app.services.database.db;
const count = async (table: 'licenses' | 'activations' | 'import_jobs' | 'users') =>
  Number(
    (
      await db()
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

beforeAll(async () => {
  t = await createTestApp({ captureLogs: true });
  csvExport('small', 3);
});
afterAll(async () => t.close());

describe('a CSV import from the console', () => {
  it('a dry run reports what an import would do and writes nothing; the import then makes it, once', async () => {
    const licenses = await count('licenses');
    const started = await post({ source: 'csv', dry_run: true, dir: 'small' });
    expect(started.statusCode).toBe(202);
    const dry = await settle((started.json() as Job).id);
    expect(dry).toMatchObject({ status: 'done', source: 'csv', dry_run: true, failure: null, total: 9 });
    expect(dry.dir).toBe(join(t.config.dataDir, 'imports', 'small'));
    expect(dry.counts.licenses).toEqual({ created: 3, present: 0, skipped: 0 });
    expect(dry.report?.problems).toEqual([
      { kind: 'activations', source_id: 'small-a0', reason: 'invalid_url' },
    ]);
    expect(await count('licenses')).toBe(licenses);

    const run = await settle((await post({ source: 'csv', dir: 'small' })).json().id);
    expect(run).toMatchObject({ status: 'done', dry_run: false, processed: 9, total: 9 });
    expect(run.report?.ok).toBe(true);
    // A CSV export holds no orders: no revenue to reconcile, no Stripe customer kept.
    expect(run.report).toMatchObject({ revenue: [], stripe: { customers: 0, cards: 0 } });
    expect(run.report?.reconciliation.find((r) => r.kind === 'activations')).toEqual({
      kind: 'activations',
      source: 3,
      imported: 2,
      skipped: 1,
      ok: true,
    });
    expect(await count('licenses')).toBe(licenses + 3);

    const again = await settle((await post({ source: 'csv', dir: 'small' })).json().id);
    expect(again.counts.licenses).toEqual({ created: 0, present: 3, skipped: 0 });
    expect(await count('licenses')).toBe(licenses + 3);
  });

  it('lists the recent jobs newest first, without their reports', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/imports', headers: t.adminAuth });
    expect(res.statusCode).toBe(200);
    const jobs = res.json() as Job[];
    expect(jobs.length).toBeGreaterThanOrEqual(3);
    expect(jobs.map((j) => j.id)).toEqual([...jobs.map((j) => j.id)].sort((a, b) => b - a));
    expect(jobs[0]).not.toHaveProperty('report');
  });

  it('the start is in the audit trail, by the administrator', async () => {
    const row = await db()
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'import_started')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(row.actor_email).toBe('admin@example.com');
    expect(JSON.parse(row.changes)).toMatchObject({ source: { after: 'csv' }, dry_run: { after: false } });
  });

  it('an unknown job is 404 import_not_found', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/imports/999999', headers: t.adminAuth });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('import_not_found');
  });
});

describe('only administrators', () => {
  it('anonymous is 401, a customer 403, and nothing starts', async () => {
    const jobs = await count('import_jobs');
    const anonymous = await post({ source: 'csv', dir: 'small' }, {});
    expect([anonymous.statusCode, anonymous.json().code]).toEqual([401, 'rest_not_logged_in']);
    const customer = await createCustomer(t);
    for (const res of [
      await post({ source: 'csv', dir: 'small' }, customer.headers),
      await t.app.inject({ method: 'GET', url: '/v1/imports', headers: customer.headers }),
    ]) {
      expect([res.statusCode, res.json().code]).toEqual([403, 'rest_forbidden']);
    }
    expect(await count('import_jobs')).toBe(jobs);
  });
});

describe('one job at a time', () => {
  it('of parallel starts one runs and the others are 409 import_running; a start after it ends runs', async () => {
    csvExport('big', 1500);
    const answers = await Promise.all(Array.from({ length: 6 }, () => post({ source: 'csv', dir: 'big' })));
    const statuses = answers.map((a) => a.statusCode).sort();
    expect(statuses).toEqual([202, 409, 409, 409, 409, 409]);
    for (const a of answers.filter((x) => x.statusCode === 409)) expect(a.json().code).toBe('import_running');
    const job = answers.find((a) => a.statusCode === 202)!.json() as Job;
    const done = await settle(job.id);
    expect(done).toMatchObject({ status: 'done', processed: 4500, total: 4500 });
    const next = await post({ source: 'csv', dry_run: true, dir: 'big' });
    expect(next.statusCode).toBe(202);
    await settle(next.json().id);
  }, 300_000);
});

describe('a job the server stopped', () => {
  it('a graceful stop ends the job between two records as failed interrupted; a re-run makes nothing twice', async () => {
    csvExport('stopped', 1200);
    const before = await count('licenses');
    const job = (await post({ source: 'csv', dir: 'stopped' })).json() as Job;
    await t.app.services.importJobs.stop();
    const stopped = await read(job.id);
    expect(stopped.status).toBe('failed');
    expect(stopped.failure).toEqual({ reason: 'interrupted', message: null });
    expect(await count('licenses')).toBeLessThan(before + 1200);
    const rerun = await settle((await post({ source: 'csv', dir: 'stopped' })).json().id);
    expect(rerun.status).toBe('done');
    expect(rerun.report?.ok).toBe(true);
    expect(await count('licenses')).toBe(before + 1200);
  }, 300_000);

  it('a job whose heartbeat stopped a minute ago (its process died) is shown failed interrupted', async () => {
    const old = iso(new Date(Date.now() - 120_000));
    const row = await db()
      .insertInto('import_jobs')
      .values({
        source: 'csv',
        dry_run: 0,
        status: 'running',
        active: 1,
        dir: '/gone',
        counts: JSON.stringify({ customers: { created: 1, present: 0, skipped: 0 } }),
        created_by: 1,
        created_at: old,
        started_at: old,
        heartbeat_at: old,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const job = await read(Number(row.id));
    expect(job.status).toBe('failed');
    expect(job.failure?.reason).toBe('interrupted');
  });

  it('at start, a process recovers the jobs left active (on SQLite every one; on PostgreSQL the stale ones)', async () => {
    const now = iso(new Date());
    const row = await db()
      .insertInto('import_jobs')
      .values({
        source: 'csv',
        dry_run: 1,
        status: 'running',
        active: 1,
        dir: '/gone',
        counts: '{}',
        created_by: 1,
        created_at: now,
        heartbeat_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.app.services.importJobs.recover();
    const after = await db()
      .selectFrom('import_jobs')
      .selectAll()
      .where('id', '=', row.id)
      .executeTakeFirstOrThrow();
    if (t.app.services.database.dialect === 'sqlite') {
      expect([after.status, after.failure_reason, after.active]).toEqual(['failed', 'interrupted', null]);
    } else {
      // Another process may be running it: its heartbeat is fresh.
      expect([after.status, after.active]).toEqual(['running', 1]);
      await db()
        .updateTable('import_jobs')
        .set({ status: 'failed', active: null })
        .where('id', '=', row.id)
        .execute();
    }
  });
});

describe('the MySQL URL is a secret', () => {
  it('an unreachable database fails the job as source_unavailable; the password is nowhere to be read', async () => {
    const password = `pw-${tag}-secret`;
    const res = await post({
      source: 'edd',
      dry_run: true,
      db_url: `mysql://root:${password}@127.0.0.1:1/wordpress`,
      table_prefix: 'wp_',
    });
    expect(res.statusCode).toBe(202);
    expect(res.body).not.toContain(password);
    const job = await settle(res.json().id);
    expect(job.status).toBe('failed');
    expect(job.failure?.reason).toBe('source_unavailable');
    expect(JSON.stringify(job)).not.toContain(password);
    const list = await t.app.inject({ method: 'GET', url: '/v1/imports', headers: t.adminAuth });
    expect(list.body).not.toContain(password);
    const audit = await db().selectFrom('audit_events').select('changes').execute();
    expect(JSON.stringify(audit)).not.toContain(password);
    expect(JSON.stringify(audit)).not.toContain('mysql://');
    const stored = await db().selectFrom('import_jobs').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(password);
    expect(t.logs()).not.toContain(password);
  });
});

describe('the folder must be inside an import root', () => {
  it('refuses a way out with 400 import_dir_outside_roots and a missing folder with 400 import_dir_not_found', async () => {
    const imports = join(t.config.dataDir, 'imports');
    symlinkSync('/tmp', join(imports, 'escape'));
    writeFileSync(join(imports, 'a-file.csv'), 'id\r\n');
    const jobs = await count('import_jobs');
    const cases: [string, number, string][] = [
      ['../', 400, 'import_dir_outside_roots'],
      ['../../../etc', 400, 'import_dir_outside_roots'],
      ['small/../../vault', 400, 'import_dir_outside_roots'],
      ['/etc', 400, 'import_dir_outside_roots'],
      [`${imports}-evil`, 400, 'import_dir_outside_roots'],
      ['escape', 400, 'import_dir_outside_roots'],
      ['nothing-here', 400, 'import_dir_not_found'],
      ['a-file.csv', 400, 'import_dir_not_found'],
    ];
    for (const [dir, status, code] of cases) {
      const res = await post({ source: 'csv', dir });
      expect([dir, res.statusCode, res.json().code]).toEqual([dir, status, code]);
    }
    expect(await count('import_jobs')).toBe(jobs);
  });
});

describe('bad input is refused with a 4xx and starts nothing', () => {
  it('missing, unexpected or wrongly typed fields, hostile strings, huge and malformed bodies', async () => {
    const jobs = await count('import_jobs');
    const cases: [unknown, number, string][] = [
      [{ source: 'csv' }, 400, 'invalid_import_arguments'],
      [{ source: 'edd' }, 400, 'invalid_import_arguments'],
      [{ source: 'woocommerce', dir: 'small' }, 400, 'invalid_import_arguments'],
      [{ source: 'csv', dir: 'small', db_url: 'mysql://a@b/c' }, 400, 'invalid_import_arguments'],
      [{ source: 'freemius', dir: 'small', table_prefix: 'wp_' }, 400, 'invalid_import_arguments'],
      [{ source: 'csv', dir: 'small', extra: 1 }, 400, 'invalid_parameters'],
      [{ source: 'mysql', dir: 'small' }, 400, 'rest_invalid_param'],
      [{ source: 'csv', dir: 'small', dry_run: 'yes' }, 400, 'rest_invalid_param'],
      [{ source: 'csv', dir: ['small'] }, 400, 'rest_invalid_param'],
      [{ source: 'csv', dir: 'small\u0000/../../etc' }, 400, 'rest_invalid_param'],
      [{ source: 'csv', dir: 'small\nforged log line' }, 400, 'rest_invalid_param'],
      [{ source: 'csv', dir: 'x'.repeat(5000) }, 400, 'rest_invalid_param'],
      [{ source: 'edd', db_url: 'postgres://a@b/c' }, 400, 'rest_invalid_param'],
      [
        { source: 'edd', db_url: 'mysql://a@b/c', table_prefix: "wp_'; DROP TABLE x; --" },
        400,
        'rest_invalid_param',
      ],
      [[], 400, 'rest_invalid_param'],
    ];
    for (const [body, status, code] of cases) {
      const res = await post(body);
      expect([body, res.statusCode, res.json().code]).toEqual([body, status, code]);
    }
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/v1/imports',
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"source": "csv",',
    });
    expect([malformed.statusCode, malformed.json().code]).toEqual([400, 'rest_invalid_json']);
    const huge = await t.app.inject({
      method: 'POST',
      url: '/v1/imports',
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: JSON.stringify({ source: 'csv', dir: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect([huge.statusCode, huge.json().code]).toEqual([413, 'rest_body_too_large']);
    const id = await t.app.inject({ method: 'GET', url: '/v1/imports/abc', headers: t.adminAuth });
    expect([id.statusCode, id.json().code]).toEqual([400, 'rest_invalid_param']);
    expect(await count('import_jobs')).toBe(jobs);
  });
});
