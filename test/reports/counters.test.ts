import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { systemClock } from '../../src/clock.js';
import { openDatabase } from '../../src/db/database.js';
import { DailyCounters, FLUSH_EVERY_MS } from '../../src/modules/reports/counters.js';
import type { CounterRow, ReportsRepository } from '../../src/modules/reports/reports.repository.js';
import { call, download, type Fixture, protectedFixture } from '../distribution/helpers.js';
import { admin, createTestApp, type TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Update checks and downloads are counted in memory and added to daily_counters by a flush
 * (docs/admin.md, 'Dashboard'): two server processes on one database add up, and close flushes.
 */
let t: TestApp;
let f: Fixture;
beforeAll(async () => {
  t = await createTestApp();
  f = await protectedFixture(t);
});
afterAll(async () => t.close());

const stored = async () => {
  const rows = await t.app.services.database.db
    .selectFrom('daily_counters')
    .select(['kind', 'count'])
    .where('product_id', '=', f.product.id)
    .execute();
  return Object.fromEntries(rows.map((r) => [r.kind, Number(r.count)]));
};
const report = async () => {
  const res = await admin(t, 'GET', '/reports/dashboard?days=1');
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { update_checks: { total: number }; downloads: { total: number } };
};

describe('daily counters', () => {
  it('two app instances on one database add up; close flushes; a request writes nothing itself', async () => {
    const database = openDatabase(t.db.config);
    const other = await buildApp({ ...t.config, logLevel: 'silent' }, database);
    try {
      const check = (app: typeof t.app, version: string) =>
        app.inject({
          method: 'POST',
          url: '/v1/software/check',
          payload: { slug: f.slug, version, ...f.creds },
        });
      for (let i = 0; i < 3; i++) expect((await check(t.app, '1.0.0')).statusCode).toBe(200);
      for (let i = 0; i < 4; i++) expect((await check(other, '1.0.0')).statusCode).toBe(200);
      const eligible = await check(other, '0.9.0');
      expect(eligible.statusCode).toBe(200);
      const url = new URL(eligible.json().download_url);
      const got = await other.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
      expect(got.statusCode).toBe(200);
      // Counted in memory only: nothing is stored before a flush.
      expect(await stored()).toEqual({});
      await t.app.services.counters.flush();
      expect(await stored()).toEqual({ update_check: 3 });
      await other.close();
      expect(await stored()).toEqual({ update_check: 8, download: 1 });
      expect(await report()).toMatchObject({ update_checks: { total: 8 }, downloads: { total: 1 } });
      // A second flush of the same process adds only what came since.
      expect(
        (await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.0.0', ...f.creds })).statusCode,
      ).toBe(200);
      await t.app.services.counters.flush();
      await t.app.services.counters.flush();
      expect(await stored()).toEqual({ update_check: 9, download: 1 });
    } finally {
      await other.close();
      await database.close();
    }
  });

  it('a refused update check and a refused download count nothing', async () => {
    const before = await stored();
    const refused = await call(t, 'POST', '/software/check', {
      slug: f.slug,
      version: '1.0.0',
      license_key: 'nope',
    });
    expect(refused.statusCode).toBeGreaterThanOrEqual(400);
    expect((await download(t, `http://x/v1/software/download?token=${'0'.repeat(64)}`)).statusCode).toBe(403);
    await t.app.services.counters.flush();
    expect(await stored()).toEqual(before);
  });
});

describe('the flush', () => {
  it('runs on its own while the server listens, off the request path', async () => {
    const database = openDatabase(t.db.config);
    const other = await buildApp({ ...t.config, logLevel: 'silent' }, database);
    try {
      await other.listen({ port: 0, host: '127.0.0.1' });
      const before = (await stored()).update_check ?? 0;
      const res = await other.inject({
        method: 'POST',
        url: '/v1/software/check',
        payload: { slug: f.slug, version: '1.0.0', ...f.creds },
      });
      expect(res.statusCode).toBe(200);
      await waitFor(async () => (await stored()).update_check === before + 1, 'the timer flushed the check', {
        timeoutMs: FLUSH_EVERY_MS * 3,
      });
    } finally {
      await other.close();
      await database.close();
    }
  }, 30_000);

  it('a failed flush keeps its counts for the next one', async () => {
    const written: CounterRow[][] = [];
    let fail = true;
    const repo = {
      async addCounters(rows: CounterRow[]) {
        if (fail) throw new Error('database away');
        written.push(rows);
      },
    } as unknown as ReportsRepository;
    const log = { warn() {} } as never;
    const counters = new DailyCounters(repo, systemClock, log);
    counters.add('update_check', 7);
    counters.add('update_check', 7);
    counters.add('download', 8);
    await counters.flush();
    expect(written).toEqual([]);
    fail = false;
    counters.add('update_check', 7);
    await counters.stop();
    const day = new Date().toISOString().slice(0, 10);
    expect(written.flat().sort((a, b) => a.kind.localeCompare(b.kind))).toEqual([
      { kind: 'download', day, product_id: 8, count: 1 },
      { kind: 'update_check', day, product_id: 7, count: 3 },
    ]);
    // Nothing left: another flush writes nothing.
    await counters.flush();
    expect(written).toHaveLength(1);
  });
});
