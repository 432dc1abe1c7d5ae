import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryCounts } from '../../src/count-table.js';
import { MemoryRateCounter, RateCounter } from '../../src/http/rate-limit.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep } from '../helpers/wait.js';

// The software issuance counters (docs/distribution.md, Limits) and those of sign-in, on the
// database under test: in the database, shared by every server process; the issuance counters in
// memory on SQLite, which one process serves.

let t: TestDatabase;
let nowMs: number;
let rates: RateCounter;
const clock = { now: () => new Date(nowMs) };

beforeEach(async () => {
  t = await freshDatabase();
  nowMs = Date.UTC(2026, 10, 22, 12, 0, 30);
  rates = new RateCounter(t.database, clock);
});
afterEach(async () => t.drop());

const windows = async () =>
  (await t.database.db.selectFrom('rate_counters').select(['bucket', 'window_start']).execute()).map(
    (r) => `${r.bucket}@${Number(r.window_start)}`,
  );

/** The prune runs beside the request that started it. */

describe('rate counters', () => {
  it('count per bucket and window, and say how long the window has left', async () => {
    expect(await rates.hitPair('a', 'b', 60)).toEqual([
      { count: 1, retryAfter: 30 },
      { count: 1, retryAfter: 30 },
    ]);
    const [a, b] = await rates.hitPair('a', 'c', 60);
    expect([a.count, b.count]).toEqual([2, 1]);
    expect(await rates.peek('a', 60)).toEqual({ count: 2, retryAfter: 30 });
    expect((await rates.hit('a', 60)).count).toBe(3);
    expect(await rates.peek('never', 60)).toEqual({ count: 0, retryAfter: 30 });
    nowMs += 60_000;
    expect(await rates.peek('a', 60)).toEqual({ count: 0, retryAfter: 30 });
    expect((await rates.hit('a', 60)).count).toBe(1);
  });

  it('take: parallel callers never take more than the limit; release gives one back in its window', async () => {
    const results = await Promise.all(Array.from({ length: 40 }, () => rates.take('t', 60, 5)));
    expect(results.filter((r) => r.taken)).toHaveLength(5);
    expect(results.every((r) => r.retryAfter === 30)).toBe(true);
    expect((await rates.peek('t', 60)).count).toBe(5);
    const { start } = results[0]!;
    await rates.release('t', start);
    expect((await rates.peek('t', 60)).count).toBe(4);
    expect((await rates.take('t', 60, 5)).taken).toBe(true);
    expect((await rates.take('t', 60, 5)).taken).toBe(false);
    // A release for a window that has ended changes nothing in the current one.
    nowMs += 60_000;
    expect((await rates.take('t', 60, 5)).taken).toBe(true);
    await rates.release('t', start);
    expect((await rates.peek('t', 60)).count).toBe(1);
  });

  it('are kept in the database, where every process (and the next one) sees them', async () => {
    await rates.hitPair('a', 'b', 60);
    await rates.hit('a', 60);
    const start = Math.floor(nowMs / 1000) - 30;
    expect((await windows()).sort()).toEqual([`a@${start}`, `b@${start}`]);
    const other = new RateCounter(t.database, clock);
    expect((await other.peek('a', 60)).count).toBe(2);
    expect((await other.hit('a', 60)).count).toBe(3);
    expect((await rates.peek('a', 60)).count).toBe(3);
  });

  it('of the issuance limits on SQLite: in memory, never in the database, counted at once', async () => {
    const issuance = new MemoryRateCounter(100, clock);
    const counted = issuance.hitPair('a', 'b', 60);
    // An answer, not a promise: the update check counts without waiting a turn.
    expect(counted).toEqual([
      { count: 1, retryAfter: 30 },
      { count: 1, retryAfter: 30 },
    ]);
    expect(issuance.hitPair('a', 'c', 60).map((r) => r.count)).toEqual([2, 1]);
    expect(await windows()).toEqual([]);
    // A restart (another counter) starts from zero.
    expect(new MemoryRateCounter(100, clock).hitPair('a', 'b', 60).map((r) => r.count)).toEqual([1, 1]);
  });

  it('drop windows older than a day, at most once a minute per process', async () => {
    await rates.hit('first', 60);
    await sleep(50);
    const start = Math.floor(nowMs / 1000) - 30;
    const old = Math.floor(nowMs / 1000) - 2 * 86400;
    await t.database.db
      .insertInto('rate_counters')
      .values({ bucket: 'old', window_start: old, count: 3 })
      .execute();
    // Within the minute after a prune: no other scan of the table.
    nowMs += 30_000;
    await rates.hitPair('x', 'y', 60);
    await sleep(50);
    expect(await windows()).toContain(`old@${old}`);
    nowMs += 31_000;
    await rates.hitPair('x', 'y', 60);
    await sleep(50);
    const left = await windows();
    expect(left).not.toContain(`old@${old}`);
    expect(left).toContain(`first@${start}`);
  });

  it('in memory (SQLite), start every bucket from zero in a new window', () => {
    const issuance = new MemoryRateCounter(100, clock);
    issuance.hitPair('first', 'first-ip', 60);
    const start = Math.floor(nowMs / 1000) - 30;
    const memory = (issuance as unknown as { counts: MemoryCounts }).counts;
    nowMs += 29_000;
    issuance.hitPair('x', 'y', 60);
    expect(memory.peek('first', start)).toBe(1);
    nowMs += 2_000;
    expect(issuance.hitPair('x', 'first', 60).map((r) => r.count)).toEqual([1, 1]);
    // The ended window's counts are not read again: `first` starts from zero, `x` too.
    expect(memory.peek('x', start + 60)).toBe(1);
    expect(memory.peek('first', start + 60)).toBe(1);
    expect(memory.peek('y', start + 60)).toBe(0);
    expect(memory.held(start + 60)).toBe(2);
  });

  it('name a client address by a hash of it in the database, by itself in memory', () => {
    const address = new RateCounter(t.database, clock).addressKey('203.0.113.7');
    expect(address).toMatch(/^[0-9a-f]{32}$/);
    expect(address).not.toContain('203');
    expect(new MemoryRateCounter(100, clock).addressKey('203.0.113.7')).toBe('203.0.113.7');
  });
});

describe('counts in memory (SQLite)', () => {
  it('are kept per bucket for the current window, and reset when a new window starts', () => {
    const counts = new MemoryCounts(10);
    expect([counts.add('a', 60), counts.add('a', 60), counts.add('b', 60)]).toEqual([1, 2, 1]);
    expect(counts.peek('a', 60)).toBe(2);
    expect(counts.peek('a', 120)).toBe(0);
    expect(counts.add('a', 120)).toBe(1);
    expect(counts.peek('a', 60)).toBe(0);
    expect(counts.peek('b', 120)).toBe(0);
  });

  it('hold a table of buckets, and never forget one that keeps counting for one counted less', () => {
    // 16 slots, all of them a new bucket's probes: the table is full after 16 buckets.
    const counts = new MemoryCounts(16);
    counts.add('busy', 0);
    // A flood of new addresses, the busy client counted between every two of them.
    for (let i = 0; i < 1000; i++) {
      counts.add(`new-${i}`, 0);
      if (i % 2 === 1) counts.add('busy', 0);
      expect(counts.held(0)).toBeLessThanOrEqual(16);
    }
    expect(counts.held(0)).toBe(16);
    expect(counts.peek('busy', 0)).toBe(501);
    // The flood's buckets counted once made room for each other: counted again, each starts from
    // zero (and takes the place of another counted once, never of the busy one).
    expect(counts.peek('new-999', 0)).toBe(1);
    expect(counts.peek('new-0', 0)).toBe(0);
    expect(counts.add('new-0', 0)).toBe(1);
    expect(counts.peek('busy', 0)).toBe(501);
  });

  it('rounds its slots up to a power of two, and tells apart buckets whose names differ in one character', () => {
    // A table a sixteenth full: a new bucket finds a free slot among its probes.
    const counts = new MemoryCounts(10_000);
    const names = Array.from({ length: 1000 }, (_, i) => `dist:ipcap:10.0.${i >> 8}.${i & 255}`);
    for (const name of names) counts.add(name, 0);
    counts.add(names[500]!, 0);
    expect(names.map((n) => counts.peek(n, 0)).reduce((a, b) => a + b, 0)).toBe(1001);
    expect(counts.peek(names[500]!, 0)).toBe(2);
    expect(counts.peek('dist:ipcap:10.0.1.245x', 0)).toBe(0);
    expect(counts.held(0)).toBe(1000);
    expect((counts as unknown as { slots: Uint32Array }).slots.length).toBe(4 * 16_384);
  });
});
