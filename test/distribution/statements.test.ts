import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { createCustomer, createLicense, publish, softwareProduct } from '../helpers/factories.js';
import { call, download, issue, protectedFixture, publicFixture } from './helpers.js';

/**
 * How many statements one GET /v1/software/download sends to PostgreSQL (docs/performance.md,
 * 'Targets of 2026-11-28': at most 6): the token with its release and artifact; `begin`; one read
 * that locks what the claim re-checks; the claim and the download count in one statement;
 * `commit`. Counted with a wrapper of node-postgres's `Client.prototype.query`. SQLite runs in the
 * process and has no round trips.
 */
const onPostgres = !!process.env.DATABASE_URL;

describe.runIf(onPostgres)('statements of one download on PostgreSQL', () => {
  let t: TestApp;
  const sent: string[] = [];
  const query = pg.Client.prototype.query;

  beforeAll(async () => {
    t = await createTestApp();
    await setSettings(t, { rate_limit: 100 });
    // Only the download's own statements are counted: the store's timers query on their schedule.
    await t.app.services.dispatcher.stop();
    await t.app.services.renewals.stop();
    // The first token minted starts the hourly prune of old tokens: minted and let finish here, so
    // that its statement never lands in a count.
    const warm = await protectedFixture(t);
    expect((await download(t, (await issue(t, warm)).download_url)).statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text: string };
      sent.push(typeof config === 'string' ? config : config.text);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
  });
  afterAll(async () => {
    pg.Client.prototype.query = query;
    await t?.close();
  });

  /** The statements of one download, past the settings (read at most once a second, not per request). */
  async function statements(url: string): Promise<string[]> {
    sent.length = 0;
    const res: LightMyRequestResponse = await download(t, url);
    expect(res.statusCode, res.body).toBe(200);
    return sent.filter((q) => !/ from "settings"$/.test(q));
  }

  /** The shape every download has, whatever its policy: the tables its one locking read locks. */
  function expectShape(own: string[], locked: string) {
    expect(own, own.join('\n')).toHaveLength(5);
    expect(own[0]).toMatch(
      /^select .* from "download_tokens" as "t" left join "releases" as "r" .* where "t"."token_locator" = \$1 and "t"."token_hash" = \$2$/,
    );
    expect(own[1]).toBe('begin');
    expect(own[2]).toMatch(new RegExp(`^select .* where "t"\\."id" = \\$1 for update of ${locked}$`));
    expect(own[3]).toMatch(
      /^with "claimed" as \(update "download_tokens" .*\) update "releases" set "download_count"/,
    );
    expect(own[4]).toBe('commit');
  }

  it('a protected token: 5 statements, at most 6', async () => {
    const f = await protectedFixture(t);
    const own = await statements((await issue(t, f)).download_url);
    expect(own.length).toBeLessThanOrEqual(6);
    expectShape(own, '"t", "r", "l", "v"');
  });

  it('a public token: 5 statements', async () => {
    const p = await publicFixture(t);
    const res = await call(t, 'POST', '/software/package', { slug: p.slug, purpose: 'install' });
    expect(res.statusCode, res.body).toBe(200);
    expectShape(await statements(res.json().download_url), '"t", "r"');
  });

  it('an account token: 5 statements', async () => {
    const customer = await createCustomer(t);
    const product = await softwareProduct(t);
    const release = await publish(t, product.id, '1.0.0');
    const license = await createLicense(t, { product_id: product.id, user_id: customer.id });
    const minted = await t.app.services.distribution.account.mintAccountToken(
      customer.id,
      license.id,
      release.version_id,
      '10.0.0.1',
    );
    expectShape(await statements(minted.download_url), '"t", "r", "l"');
  });
});
