import { describe, expect, it } from 'vitest';
import { iso, mysqlTime, Occasionally, rfc3339 } from '../../src/clock.js';

// The formatters compute the calendar themselves; Date's own ISO form is the reference.
const reference = (d: Date) => {
  const s = d.toISOString();
  return { iso: s, rfc3339: s.replace(/\.\d{3}Z$/, 'Z'), mysql: s.slice(0, 19).replace('T', ' ') };
};

const expectSameAsDate = (ms: number) => {
  const d = new Date(ms);
  const want = reference(d);
  expect([iso(d), rfc3339(d), mysqlTime(d)], `${ms}`).toEqual([want.iso, want.rfc3339, want.mysql]);
};

describe('timestamp formatters', () => {
  it('match toISOString at the calendar edges', () => {
    const edges = [
      0, // 1970-01-01
      -1, // 1969-12-31T23:59:59.999Z
      Date.UTC(2000, 1, 29, 12, 0, 0, 5), // leap day of a century divisible by 400
      Date.UTC(1900, 1, 28, 23, 59, 59, 999), // 1900 is not a leap year
      Date.UTC(2024, 1, 29, 0, 0, 0, 10),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1, 0, 0, 0, 0),
      Date.UTC(2100, 2, 1, 0, 0, 0, 100),
      new Date('1000-01-01T00:00:00.000Z').getTime(), // first year formatted by arithmetic
      new Date('0999-12-31T23:59:59.999Z').getTime(), // falls back to Date
      new Date('9999-12-31T23:59:59.999Z').getTime(), // last year formatted by arithmetic
      new Date('+010000-01-01T00:00:00.000Z').getTime(), // six-digit year, falls back
      new Date('-000001-06-15T08:30:00.000Z').getTime(), // negative year, falls back
      8.64e15, // the largest Date
      -8.64e15,
    ];
    for (const ms of edges) expectSameAsDate(ms);
  });

  it('match toISOString on every day of the years the leap rules turn on, on month edges, and at random times', () => {
    // Compared without an assertion per instant: a sample of tens of thousands stays cheap.
    const mismatches: number[] = [];
    const check = (ms: number) => {
      const d = new Date(ms);
      const want = reference(d);
      if (iso(d) !== want.iso || rfc3339(d) !== want.rfc3339 || mysqlTime(d) !== want.mysql)
        mismatches.push(ms);
    };
    // Every day, at its last millisecond, of years either side of each kind of leap rule and epoch.
    for (const year of [1000, 1899, 1900, 1901, 1969, 1970, 1999, 2000, 2001, 2024, 2026, 2100, 2400, 9999]) {
      for (let t = Date.UTC(year, 0, 1, 23, 59, 59, 999); t < Date.UTC(year + 1, 0, 1); t += 86_400_000)
        check(t);
    }
    // The first and last millisecond of every month, in a year of every residue mod 400 and 4.
    for (let year = 1000; year <= 9999; year += 7) {
      for (let month = 0; month < 12; month++) {
        check(Date.UTC(year, month, 1));
        check(Date.UTC(year, month + 1, 1) - 1);
      }
    }
    let seed = 12345;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const from = Date.UTC(1000, 0, 1) - 86_400_000; // a day either side of the arithmetic's range
    const to = Date.UTC(9999, 11, 31) + 2 * 86_400_000;
    for (let i = 0; i < 50_000; i++) check(Math.floor(from + random() * (to - from)));
    expect(mismatches.map((ms) => new Date(ms).toISOString())).toEqual([]);
  });

  it('throw on an invalid date as toISOString does', () => {
    const invalid = new Date(Number.NaN);
    expect(() => iso(invalid)).toThrow(RangeError);
    expect(() => rfc3339(invalid)).toThrow(RangeError);
    expect(() => mysqlTime(invalid)).toThrow(RangeError);
  });
});

describe('Occasionally', () => {
  it('runs the task on the first call, then at most once per interval of clock time; errors go to onError', async () => {
    const runs: number[] = [];
    const errors: unknown[] = [];
    let fail = false;
    const job = new Occasionally(
      60_000,
      async (now) => {
        runs.push(now.getTime());
        if (fail) throw new Error('cleanup failed');
      },
      (err) => errors.push(err),
    );
    job.maybe(new Date(1_000_000));
    job.maybe(new Date(1_000_000 + 59_999));
    expect(runs).toEqual([1_000_000]);
    fail = true;
    job.maybe(new Date(1_000_000 + 60_000));
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toEqual([1_000_000, 1_060_000]);
    expect(errors).toHaveLength(1);
  });
});
