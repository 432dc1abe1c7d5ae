import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgBatchCounts } from '../../src/db/pg-batch.js';
import { precompile } from '../../src/db/precompiled.js';
import { RateCounter } from '../../src/http/rate-limit.js';
import { TokensRepository } from '../../src/modules/distribution/tokens.repository.js';
import { LicenseRepository } from '../../src/modules/licensing/license.repository.js';
import { ReleasesRepository } from '../../src/modules/releases/releases.repository.js';
import { dialectUnderTest, freshDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * src/db/pg-batch.ts: the calls of one turn answered by one statement on PostgreSQL must give each
 * caller exactly what the single statement gives it, rows and order included.
 */
describe.runIf(dialectUnderTest === 'postgres')('one statement for the reads of a turn (PostgreSQL)', () => {
  let d: TestDatabase;
  beforeAll(async () => {
    d = await freshDatabase();
  });
  afterAll(async () => d.drop());

  // Several rows per caller, in an order of the query's own.
  type Row = { n: number; tag: string };
  const build = (p: Record<'count' | 'tag', string>) => {
    const query = sql<Row>`select g as n, ${p.tag}::text as tag from generate_series(1, ${p.count}::int) g order by g desc`;
    return { compile: () => query.compile(d.database.db) };
  };

  it('each caller gets the rows and order of the single statement', async () => {
    const single = precompile(d.database, ['count', 'tag'] as const, build);
    const batched = precompile(d.database, ['count', 'tag'] as const, build, {
      pgBatch: { count: 'text', tag: 'text' },
    });
    const calls = [3, 0, 5, 1, 2].map((count, i) => ({ count: String(count), tag: `c${i}` }));
    const alone = [];
    for (const c of calls) alone.push(await single.all(c));
    const together = await Promise.all(calls.map((c) => batched.all(c)));
    expect(together).toEqual(alone);
    expect(together[2]!.map((r) => r.n)).toEqual([5, 4, 3, 2, 1]);
  });

  it('a value that fails fails only its own caller', async () => {
    const batched = precompile(d.database, ['count', 'tag'] as const, build, {
      pgBatch: { count: 'text', tag: 'text' },
    });
    const answers = await Promise.allSettled(
      ['2', 'not a number', '1'].map((count) => batched.all({ count, tag: 'x' })),
    );
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((answers[0] as PromiseFulfilledResult<{ n: number }[]>).value.map((r) => r.n)).toEqual([2, 1]);
  });

  it('a query with aliases of its own is batched, not run call by call', async () => {
    // The callers' values are referred to from inside the single query; an alias of the query's
    // own (here `a`, as the releases query names artifacts) must not hide them.
    const aliased = (p: Record<'count', string>) => ({
      compile: () =>
        sql<{
          n: number;
        }>`select a.n from generate_series(1, 9) as a(n) where a.n <= ${p.count}::int order by a.n`.compile(
          d.database.db,
        ),
    });
    const batched = precompile(d.database, ['count'] as const, aliased, { pgBatch: { count: 'text' } });
    const before = { ...pgBatchCounts };
    const rows = await Promise.all(['2', '3'].map((count) => batched.all({ count })));
    expect(rows.map((r) => r.map((x) => x.n))).toEqual([
      [1, 2],
      [1, 2, 3],
    ]);
    expect(pgBatchCounts.failures - before.failures).toBe(0);
    expect(pgBatchCounts.statements - before.statements).toBe(1);
  });

  it("every batched read of the hot paths runs as one statement for a turn's callers", async () => {
    // A batch that fails still answers (call by call), so only the counts tell it went wrong:
    // each pair of concurrent calls below must be one statement, never a failure.
    const releases = new ReleasesRepository(d.database);
    const licenses = new LicenseRepository(d.database);
    const pairs: (() => Promise<unknown>)[] = [
      () => releases.publishedWithArtifacts(1),
      () => releases.findArtifact(1),
      () => licenses.findForIdentity('KEY', 'identity'),
      () => licenses.findForIdentity('KEY', 'identity', { revision: true }),
    ];
    for (const call of pairs) {
      const before = { ...pgBatchCounts };
      await Promise.all([call(), call()]);
      expect(pgBatchCounts.failures - before.failures).toBe(0);
      expect(pgBatchCounts.statements - before.statements).toBe(1);
    }
  });

  it('a batched read keeps its generic plan instead of being planned on every execution', async () => {
    // One connection, so the prepared statement and its plan counts live in one session.
    const one = new pg.Pool({ connectionString: (d.config as { url: string }).url, max: 1 });
    try {
      const onOne = { ...d.database, pg: one };
      const releases = new ReleasesRepository(onOne);
      const licenses = new LicenseRepository(onOne);
      for (let round = 0; round < 8; round++) {
        await Promise.all([1, 2, 3].map((product) => releases.publishedWithArtifacts(product)));
        await Promise.all(['A', 'B', 'C'].map((key) => licenses.findForIdentity(key, 'identity')));
      }
      const { rows } = await one.query<{ generic_plans: string; custom_plans: string }>(
        "select generic_plans, custom_plans from pg_prepared_statements where name like '%\\_b'",
      );
      expect(rows).toHaveLength(2);
      for (const r of rows) {
        // PostgreSQL plans the first five executions for their values, then keeps the generic plan
        // unless it is priced dearer than those.
        expect(Number(r.custom_plans)).toBeLessThanOrEqual(5);
        expect(Number(r.generic_plans)).toBeGreaterThanOrEqual(3);
      }
    } finally {
      await one.end();
    }
  });

  it('the counter hits of a turn are one upsert, each caller answered the count its own hit made', async () => {
    const rates = new RateCounter(d.database, { now: () => new Date(Date.UTC(2026, 10, 22, 12, 0, 30)) });
    await rates.hitPair('lic-1', 'ip-1', 60);
    const before = { ...pgBatchCounts };
    // lic-1 is hit by three callers in the turn: one row of the statement, raised by three.
    const answers = await Promise.all([
      rates.hitPair('lic-1', 'ip-2', 60),
      rates.hitPair('lic-2', 'ip-2', 60),
      rates.hitPair('lic-1', 'ip-3', 60),
      rates.hitPair('lic-1', 'ip-1', 60),
    ]);
    expect(pgBatchCounts.failures - before.failures).toBe(0);
    expect(pgBatchCounts.statements - before.statements).toBe(1);
    expect(answers.map((pair) => pair.map((r) => r.count))).toEqual([
      [2, 1],
      [1, 2],
      [3, 1],
      [4, 2],
    ]);
    const rows = await d.database.db
      .selectFrom('rate_counters')
      .select(['bucket', 'count'])
      .orderBy('bucket')
      .execute();
    expect(rows).toEqual([
      { bucket: 'ip-1', count: 2 },
      { bucket: 'ip-2', count: 2 },
      { bucket: 'ip-3', count: 1 },
      { bucket: 'lic-1', count: 4 },
      { bucket: 'lic-2', count: 1 },
    ]);
  });

  it('a counter batch that fails is run call by call, so each caller still gets its counts', async () => {
    const rates = new RateCounter(d.database, { now: () => new Date(Date.UTC(2026, 10, 22, 12, 5, 30)) });
    const before = { ...pgBatchCounts };
    // A bucket name longer than the column fails the batch; alone, only its own caller fails.
    const answers = await Promise.allSettled([
      rates.hitPair('ok-a', 'ok-b', 60),
      rates.hitPair('x'.repeat(300), 'ok-c', 60),
    ]);
    expect(pgBatchCounts.failures - before.failures).toBe(1);
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected']);
    const counted = await d.database.db
      .selectFrom('rate_counters')
      .select(['bucket', 'count'])
      .where('bucket', 'in', ['ok-a', 'ok-b', 'ok-c'])
      .orderBy('bucket')
      .execute();
    expect(counted).toEqual([
      { bucket: 'ok-a', count: 1 },
      { bucket: 'ok-b', count: 1 },
    ]);
  });

  const token = (n: number, overrides: { domain_normalized?: string } = {}) => ({
    token_hash: n.toString(16).padStart(64, '0'),
    binding_version: 1,
    policy: 'public' as const,
    product_id: 1,
    release_id: 1,
    artifact_id: 1,
    artifact_sha256: 'a'.repeat(64),
    purpose: 'update' as const,
    license_id: null,
    activation_id: null,
    activation_revision: null,
    identity_key: null,
    installation_id: null,
    domain_normalized: `site${n}.example.com`,
    token_locator: Date.UTC(2026, 10, 28),
    created_at: '2026-11-28T00:00:00.000Z',
    expires_at: '2026-11-28T01:00:00.000Z',
    used_at: null,
    invalidated_at: null,
    invalidated_reason: null,
    ...overrides,
  });

  it("the tokens minted in a turn are one insert, each caller answered its own row's id", async () => {
    const tokens = new TokensRepository(d.database);
    const before = { ...pgBatchCounts };
    const ids = await Promise.all([1, 2, 3, 4].map((n) => tokens.insert(token(n))));
    expect(pgBatchCounts.failures - before.failures).toBe(0);
    expect(pgBatchCounts.statements - before.statements).toBe(1);
    const rows = await d.database.db
      .selectFrom('download_tokens')
      .select(['id', 'domain_normalized'])
      .where('id', 'in', ids)
      .execute();
    const domainOf = new Map(rows.map((r) => [r.id, r.domain_normalized]));
    expect(ids.map((id) => domainOf.get(id))).toEqual([1, 2, 3, 4].map((n) => `site${n}.example.com`));
  });

  it('a token batch that fails is run call by call: only the bad row fails, nothing is inserted twice', async () => {
    const tokens = new TokensRepository(d.database);
    const before = { ...pgBatchCounts };
    const answers = await Promise.allSettled([
      tokens.insert(token(11)),
      // Longer than the column: this row alone is refused.
      tokens.insert(token(12, { domain_normalized: `${'x'.repeat(400)}.example.com` })),
      tokens.insert(token(13)),
    ]);
    expect(pgBatchCounts.failures - before.failures).toBe(1);
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const hashes = await d.database.db
      .selectFrom('download_tokens')
      .select('token_hash')
      .where(
        'token_hash',
        'in',
        [11, 12, 13].map((n) => token(n).token_hash),
      )
      .orderBy('token_hash')
      .execute();
    expect(hashes.map((h) => h.token_hash)).toEqual([11, 13].map((n) => token(n).token_hash));
  });
});
