import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { identity, licenseFixture } from '../helpers/factories.js';

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
});
