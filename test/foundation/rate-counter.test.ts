import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RateCounter } from '../../src/http/rate-limit.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// The database-kept counters of spec section 8 (shared by every server process), on the database
// under test.

let t: TestDatabase;
let nowMs: number;
let rates: RateCounter;

beforeEach(async () => {
  t = await freshDatabase();
  nowMs = Date.UTC(2026, 10, 22, 12, 0, 30);
  rates = new RateCounter(t.database, { now: () => new Date(nowMs) });
});
afterEach(async () => t.drop());

const windows = async () =>
  (await t.database.db.selectFrom('rate_counters').select(['bucket', 'window_start']).execute()).map(
    (r) => `${r.bucket}@${Number(r.window_start)}`,
  );

/** The prune runs beside the request that started it. */
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('rate counters', () => {
  it('count per bucket and window, and say how long the window has left', async () => {
    expect(await rates.hitPair('a', 'b', 60)).toEqual([
      { count: 1, retryAfter: 30 },
      { count: 1, retryAfter: 30 },
    ]);
    const [a, b] = await rates.hitPair('a', 'c', 60);
    expect([a.count, b.count]).toEqual([2, 1]);
    expect(await rates.peek('a', 60)).toEqual({ count: 2, retryAfter: 30 });
    nowMs += 60_000;
    expect((await rates.hit('a', 60)).count).toBe(1);
  });

  it('drop windows older than a day, at most once a minute per process', async () => {
    await rates.hit('first', 60);
    await settle();
    const old = Math.floor(nowMs / 1000) - 2 * 86400;
    await t.database.db
      .insertInto('rate_counters')
      .values({ bucket: 'old', window_start: old, count: 3 })
      .execute();
    // Within the minute after a prune: no other scan of the table.
    nowMs += 30_000;
    await rates.hitPair('x', 'y', 60);
    await settle();
    expect(await windows()).toContain(`old@${old}`);
    nowMs += 31_000;
    await rates.hitPair('x', 'y', 60);
    await settle();
    const left = await windows();
    expect(left).not.toContain(`old@${old}`);
    expect(left.some((w) => w.startsWith('first@'))).toBe(true);
  });
});
