import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, download, protectedFixture } from '../distribution/helpers.js';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { identity, licenseFixture, publish } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';

/**
 * How many statements a warm validate sends to PostgreSQL: each is a round trip over the network,
 * so the count bounds its latency (docs/performance.md, 'Named prepared statements on
 * PostgreSQL'). SQLite runs in the process and has no round trips.
 */
const onPostgres = !!process.env.DATABASE_URL;

describe.runIf(onPostgres)('round trips to PostgreSQL', () => {
  let t: TestApp;
  let body: Record<string, string>;
  const sent: string[] = [];
  const query = pg.Client.prototype.query;

  beforeAll(async () => {
    t = await createTestApp();
    const { key } = await licenseFixture(t);
    const site = identity('round-trips.example');
    const activated = await t.app.inject({
      method: 'POST',
      url: '/v1/licenses/activate',
      payload: { license_key: key, ...site },
    });
    expect(activated.statusCode, activated.body).toBe(200);
    body = { license_key: key, ...site };
    // Only requests' statements are counted: the store's own timers (the webhook dispatcher, the
    // renewal scheduler) would query on their schedule in the middle of a count.
    await t.app.services.dispatcher.stop();
    await t.app.services.renewals.stop();
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text: string; name?: string };
      sent.push(typeof config === 'string' ? config : `${config.name ?? ''} ${config.text}`);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
  });
  afterAll(async () => {
    pg.Client.prototype.query = query;
    await t.close();
  });

  it('a warm validate sends one statement, a named prepared one', async () => {
    const validate = () => t.app.inject({ method: 'POST', url: '/v1/licenses/validate', payload: body });
    expect((await validate()).statusCode).toBe(200);
    sent.length = 0;
    const res = await validate();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().valid).toBe(true);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^tg_[0-9a-f]{24} select/);
  });

  it('the update check and the download send as many statements as documented', async () => {
    await setSettings(t, { rate_limit: 100 });
    const f = await protectedFixture(t);
    await publish(t, f.product.id, '1.1.0');
    const count = async (run: () => Promise<LightMyRequestResponse>) => {
      sent.length = 0;
      const res = await run();
      expect(res.statusCode, res.body).toBe(200);
      // The settings are read at most once a second per process (their cache), not per request:
      // a slow run may refresh them in the middle of a count.
      const own = sent.filter((q) => !/ from "settings"$/.test(q));
      return { n: own.length, res, sent: own };
    };
    const check = (version: string) => () =>
      call(t, 'POST', '/software/check', { slug: f.slug, version, ...f.creds });
    // Warm: the first check reads the settings, the first mint of a process the download tokens'
    // secret (TokenBearers) and starts the hourly prune of old tokens, once each; the prune (one
    // statement: no token is old enough to delete) is let finish before counting.
    await check('1.1.0')();
    await check('1.0.0')();
    await waitFor(
      () => sent.some((q) => / from "download_tokens" order by "id" limit /.test(q)),
      'the prune',
    );
    const upToDate = await count(check('1.1.0'));
    const eligible = await count(check('1.0.0'));
    const claim = await count(() => download(t, eligible.res.json().download_url));
    // The figures of docs/performance.md ('Named prepared statements on PostgreSQL'): a change
    // that adds a round trip to these routes shows here (test/distribution/statements.test.ts
    // counts the download's 5 on their own).
    const all = [upToDate, eligible, claim].map((c) => c.sent.join('\n')).join('\n---\n');
    expect({ upToDate: upToDate.n, eligible: eligible.n, download: claim.n }, all).toEqual({
      upToDate: 3,
      eligible: 4,
      download: 5,
    });
  });

  it('parallel validates of one turn share a statement, and each gets its own answer', async () => {
    const sites = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const { key } = await licenseFixture(t);
        const site = identity(`batch-${i}.example`);
        if (i % 2 === 0) {
          const res = await t.app.inject({
            method: 'POST',
            url: '/v1/licenses/activate',
            payload: { license_key: key, ...site },
          });
          expect(res.statusCode, res.body).toBe(200);
        }
        return { license_key: key, ...site, active: i % 2 === 0 };
      }),
    );
    const unknown = { license_key: 'NO-SUCH-KEY', ...identity('batch-x.example') };
    sent.length = 0;
    const answers = await Promise.all(
      [...sites, unknown].map(({ license_key, domain, installation_id }) =>
        t.app.inject({
          method: 'POST',
          url: '/v1/licenses/validate',
          payload: { license_key, domain, installation_id },
        }),
      ),
    );
    sites.forEach((site, i) => {
      const res = answers[i]!;
      if (site.active) {
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toMatchObject({ valid: true });
      } else {
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json()).toMatchObject({ valid: false, error: 'domain_not_activated' });
      }
    });
    expect(answers[6]!.statusCode).toBe(403);
    expect(answers[6]!.json()).toMatchObject({ valid: false, error: 'invalid_license' });
    // Seven lookups, fewer statements: at least two of them went together.
    // (Other statements that repeat are named too: the lookup is told by its columns.)
    const lookups = sent.filter(
      (q) => /^tg_[0-9a-f]{24}(_b)? select/.test(q) && q.includes('as "product_activation_limit"'),
    );
    expect(lookups.length).toBeLessThan(7);
    expect(lookups.some((q) => q.includes('_b select'))).toBe(true);
  });
});
