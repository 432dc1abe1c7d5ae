import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { admin, advanceClock, createTestApp, expectError, type TestApp } from '../helpers/app.js';
import { dialectUnderTest } from '../helpers/db.js';
import { createCustomer, createLicense, createProduct } from '../helpers/factories.js';

// The administrator's license list: sorting, the expired status and the expiry bounds
// (docs/licensing.md, '7. For store administrators').

let t: TestApp;
let user: number;
/** L1..L5 in creation order; see beforeAll. */
let ids: number[];
let start: number;

beforeAll(async () => {
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  user = (await createCustomer(t)).id;
  const p1 = await createProduct(t, {}, { via: 'database' });
  const p2 = await createProduct(t, {}, { via: 'database' });
  start = t.app.services.clock.now().getTime();
  const at = (days: number) => new Date(start + days * 86400_000).toISOString();
  const l1 = await createLicense(t, { product_id: p1.id, user_id: user, usage_expires_at: at(1) });
  const l2 = await createLicense(t, { product_id: p1.id, user_id: user, usage_expires_at: at(10) });
  const l3 = await createLicense(t, { product_id: p1.id, user_id: user, usage_expires_at: null });
  const l4 = await createLicense(t, { product_id: p1.id, user_id: user, usage_expires_at: at(1) });
  const l5 = await createLicense(t, { product_id: p2.id, user_id: user, usage_expires_at: at(5) });
  expect((await admin(t, 'DELETE', `/licenses/${l4.id}`)).statusCode).toBe(200);
  ids = [l1.id, l2.id, l3.id, l4.id, l5.id];
});
afterAll(async () => t.close());

/** The list's ids as L-numbers (1-based positions in `ids`), for readable expectations. */
async function list(query: string) {
  const res = await admin(t, 'GET', `/licenses?user_id=${user}&${query}`);
  expect(res.statusCode).toBe(200);
  const body = res.json() as { licenses: { id: number }[]; total: number; page: number; per_page: number };
  return { order: body.licenses.map((l) => ids.indexOf(l.id) + 1), total: body.total };
}

describe('GET /licenses sorting', () => {
  it('keeps the default order: newest first', async () => {
    expect((await list('')).order).toEqual([5, 4, 3, 2, 1]);
    expect((await list('sort=id')).order).toEqual([5, 4, 3, 2, 1]);
    expect((await list('sort=id&order=asc')).order).toEqual([1, 2, 3, 4, 5]);
    expect((await list('sort=created_at&order=asc')).order).toEqual([1, 2, 3, 4, 5]);
  });

  it('sorts by usage expiry, no expiry first ascending, ties by id, in the same order on both databases', async () => {
    expect((await list('sort=usage_expires_at')).order).toEqual([3, 1, 4, 5, 2]);
    expect((await list('sort=usage_expires_at&order=desc')).order).toEqual([2, 5, 4, 1, 3]);
  });

  it('sorts by status and by product', async () => {
    expect((await list('sort=status')).order).toEqual([1, 2, 3, 5, 4]);
    expect((await list('sort=status&order=desc')).order).toEqual([4, 5, 3, 2, 1]);
    expect((await list('sort=product')).order).toEqual([1, 2, 3, 4, 5]);
    expect((await list('sort=product&order=desc')).order).toEqual([5, 4, 3, 2, 1]);
  });

  it('pages a sorted list without overlap', async () => {
    const pages = [];
    for (const page of [1, 2, 3]) pages.push(await list(`sort=usage_expires_at&per_page=2&page=${page}`));
    expect(pages.map((p) => p.order)).toEqual([[3, 1], [4, 5], [2]]);
    expect(pages.every((p) => p.total === 5)).toBe(true);
  });

  it('refuses an unknown sort key or order with rest_invalid_param', async () => {
    for (const query of [
      'sort=name',
      'sort=l.id',
      "sort=id';--",
      'order=up',
      'order=ASC',
      'sort=',
      'sort=id&sort=status',
    ]) {
      expectError(await admin(t, 'GET', `/licenses?${query}`), 400, 'rest_invalid_param');
    }
  });
});

describe('GET /licenses?status=expired and the expiry bounds', () => {
  it('counts as expired, by the test clock, what is not revoked and whose usage expiry has passed', async () => {
    expect(await list('status=expired')).toEqual({ order: [], total: 0 });
    await advanceClock(t, 2 * 86400);
    // L4 expired too, but it is revoked; L3 never expires.
    expect(await list('status=expired')).toEqual({ order: [1], total: 1 });
    await advanceClock(t, 6 * 86400);
    expect(await list('status=expired')).toEqual({ order: [5, 1], total: 2 });
    expect((await list('status=expired&sort=usage_expires_at')).order).toEqual([1, 5]);
    // The stored statuses still filter as before.
    expect((await list('status=active')).order).toEqual([5, 3, 2, 1]);
    expect((await list('status=revoked')).order).toEqual([4]);
  });

  it('bounds the usage expiry strictly, whatever the status, and never matches no expiry', async () => {
    const at = (days: number) => encodeURIComponent(new Date(start + days * 86400_000).toISOString());
    expect((await list(`expires_before=${at(3)}`)).order).toEqual([4, 1]);
    expect((await list(`expires_after=${at(3)}`)).order).toEqual([5, 2]);
    expect((await list(`expires_after=${at(3)}&expires_before=${at(7)}`)).order).toEqual([5]);
    // An offset is the same instant in UTC.
    const plus2 = new Date(start + 3 * 86400_000 + 2 * 3600_000).toISOString().slice(0, 19);
    expect((await list(`expires_before=${plus2}%2B02:00`)).order).toEqual([4, 1]);
  });

  it('refuses a time that is not RFC 3339 with rest_invalid_param and changes nothing', async () => {
    for (const value of [
      'tomorrow',
      '2026-13-01T00:00:00Z',
      '2026-02-30T00:00:00Z',
      "1'; drop table licenses;--",
      '',
    ]) {
      for (const param of ['expires_before', 'expires_after']) {
        expectError(
          await admin(t, 'GET', `/licenses?${param}=${encodeURIComponent(value)}`),
          400,
          'rest_invalid_param',
        );
      }
    }
    expect((await list('')).total).toBe(5);
  });
});

describe.runIf(dialectUnderTest === 'sqlite')('the license list query plans', () => {
  /** The SELECT statements a list request prepares, with their plans. */
  async function plans(query: string): Promise<string[]> {
    const sqlite = t.db.database.sqlite!;
    const spy = vi.spyOn(sqlite, 'prepare');
    const res = await admin(t, 'GET', `/licenses?${query}`);
    expect(res.statusCode).toBe(200);
    const statements = spy.mock.calls.map((c) => String(c[0])).filter((s) => /from "licenses"/i.test(s));
    spy.mockRestore();
    expect(statements.length).toBeGreaterThan(0);
    const details: string[] = [];
    for (const statement of statements) {
      const parameters = statement.split('?').length - 1;
      const plan = sqlite
        .prepare(`explain query plan ${statement}`)
        .all(...Array.from({ length: parameters }, () => 'x')) as { detail: string }[];
      details.push(...plan.map((p) => p.detail));
    }
    return details;
  }

  // Unfiltered, each sort walks one index (for id, the table itself, which is stored in id order)
  // and stops after the page: no sort of the table.
  it.each([
    ['sort=id', 'SCAN l'],
    ['sort=created_at', 'SCAN l USING INDEX licenses_created'],
    ['sort=usage_expires_at', 'SCAN l USING INDEX licenses_usage_expiry'],
    ['sort=status&order=desc', 'SCAN l USING INDEX licenses_status'],
    ['sort=product', 'SCAN l USING INDEX licenses_product'],
  ])('%s walks its index and sorts nothing', async (query, access) => {
    const details = await plans(query);
    expect(details[0]).toBe(access);
    expect(details.filter((d) => /TEMP B-TREE/.test(d))).toEqual([]);
  });

  // The expired (and expires_before) filters read only the expired range of the expiry index,
  // both for the page and for the count; never the whole table.
  it.each(['status=expired', 'status=expired&sort=created_at', 'expires_before=2026-01-01T00:00:00Z'])(
    '%s reads the expiry index',
    async (query) => {
      const details = await plans(query);
      const reads = details.filter((d) => /^(SCAN|SEARCH) l\b/.test(d));
      expect(reads.length).toBeGreaterThan(0);
      // The count reads the index alone (COVERING): it needs nothing else of the row.
      for (const read of reads)
        expect(read).toMatch(
          /^SEARCH l USING (COVERING )?INDEX licenses_usage_expiry \(usage_expires_at<\?\)$/,
        );
    },
  );

  // A search reads a few entries of one index per thing a term may name (docs/licensing.md,
  // section 7): no table and no whole index is scanned, for the page or for its count.
  it.each([
    ['a key tail, an email, a domain', 'search=k7qx'],
    ['an installation id as well', 'search=0b0e4c2a-5d6f-4a8b-9c0d-1e2f3a4b5c6d'],
    ['with a sort and a filter', 'search=k7qx&sort=usage_expires_at&status=active'],
  ])('a search (%s) reads only indexes', async (_, query) => {
    const details = await plans(query);
    expect(
      details.filter(
        (d) => /^SCAN (?!CONSTANT ROW)/.test(d) && !/USING (COVERING )?INDEX|PRIMARY KEY/.test(d),
      ),
    ).toEqual([]);
    expect(details.some((d) => /licenses_key_tail/.test(d))).toBe(true);
    expect(details.some((d) => /activations_domain/.test(d))).toBe(true);
  });

  it('sort=usage_expires_at with status=expired walks the expiry index and sorts nothing', async () => {
    const details = await plans('status=expired&sort=usage_expires_at');
    expect(details[0]).toBe('SEARCH l USING INDEX licenses_usage_expiry (usage_expires_at<?)');
    expect(details.filter((d) => /TEMP B-TREE/.test(d))).toEqual([]);
  });
});
