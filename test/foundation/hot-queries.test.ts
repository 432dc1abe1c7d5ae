import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { equalitiesUnplanned } from '../../src/db/database.js';
import { call, download, issue, protectedFixture } from '../distribution/helpers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { dialectUnderTest } from '../helpers/db.js';
import { publish } from '../helpers/factories.js';

// The hot statements precompiled on SQLite's fast path (src/db/precompiled.ts): their SQL is kept
// in a snapshot, so that any change to one shows in review, and each must find its rows through an
// index, never by scanning a table that grows with the store.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TRUST_PROXY: '1' } });
});
afterAll(async () => t.close());

/** Tables the hot statements may scan: one row each, or a handful. */
const SMALL = new Set(['release_changes']);

describe.runIf(dialectUnderTest === 'sqlite')('the precompiled hot statements', () => {
  let statements: string[];
  beforeAll(async () => {
    const f = await protectedFixture(t);
    const validate = await call(t, 'POST', '/licenses/validate', { license_key: f.key, ...f.site });
    expect(validate.statusCode).toBe(200);
    const upToDate = await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.0.0', ...f.creds });
    expect(upToDate.statusCode).toBe(200);
    await publish(t, f.product.id, '1.1.0');
    const eligible = await call(t, 'POST', '/software/check', { slug: f.slug, version: '1.0.0', ...f.creds });
    expect(eligible.statusCode).toBe(200);
    const pkg = await issue(t, f);
    expect((await download(t, pkg.download_url)).statusCode).toBe(200);
    statements = [...t.db.database.precompiled!].sort();
  });

  it("are the nine of validate, the update check, package, their rate limits, last seen and the download's first read (and its read of a token minted before locators), as recorded", async () => {
    expect(statements).toHaveLength(9);
    await expect(`${statements.join(';\n\n')};\n`).toMatchFileSnapshot('./__snapshots__/hot-queries.sql');
  });

  it('each finds its rows through an index', () => {
    const sqlite = t.db.database.sqlite!;
    const scans: string[] = [];
    for (const statement of statements) {
      const parameters = statement.split('?').length - 1;
      // As prepareRows prepares it: its equality parameters hidden from the planner.
      const plan = sqlite
        .prepare(`explain query plan ${equalitiesUnplanned(statement)}`)
        .all(...Array.from({ length: parameters }, () => null)) as { detail: string }[];
      for (const { detail } of plan) {
        const scanned = /^SCAN (\w+)/.exec(detail);
        if (scanned && !SMALL.has(scanned[1]!) && !/USING (COVERING )?INDEX/.test(detail)) {
          scans.push(`${detail} in: ${statement}`);
        }
      }
    }
    expect(scans).toEqual([]);
  });
});
