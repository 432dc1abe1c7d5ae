import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectUnderTest, type TestDatabase } from '../helpers/db.js';
import { uniqueEmail } from '../helpers/factories.js';
import { type Cluster, type ServerProcess, startCluster } from '../helpers/server.js';

/**
 * Trials under real parallel HTTP (docs/selling.md, 'Trials'): once per email and once per site,
 * decided by the unique index of trial_claims. PostgreSQL: two server processes on one database.
 */
let cluster: Cluster;
let database: TestDatabase;
let servers: ServerProcess[];

beforeAll(async () => {
  cluster = await startCluster();
  ({ database, servers } = cluster);
}, 90_000);

afterAll(() => cluster.stop());

async function send(i: number, path: string, body: unknown, headers: Record<string, string> = {}) {
  const server = servers[i % servers.length]!;
  const res = await fetch(`${server.url}/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function trialProduct(): Promise<number> {
  const created = await send(
    0,
    '/products',
    { name: 'Trial race', type: 'simple', price: '10.00', licensing_enabled: 'yes' },
    cluster.adminHeaders,
  );
  expect(created.status).toBe(201);
  const id = created.body.id as number;
  const config = await send(
    0,
    `/software/products/${id}/config`,
    { trial_days: 14, trial_sites: 1 },
    cluster.adminHeaders,
  );
  expect(config.status).toBe(200);
  return id;
}

const licensesOf = (productId: number) =>
  database.database.db.selectFrom('licenses').selectAll().where('product_id', '=', productId).execute();

describe(`parallel trials over real HTTP (${dialectUnderTest})`, () => {
  it('20 requests for one email: one trial, 19 × 409 trial_already_used', async () => {
    const productId = await trialProduct();
    const email = uniqueEmail('race');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(i, '/trials', { product_id: productId, email })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.code === 'trial_already_used')).toHaveLength(19);
    expect(await licensesOf(productId)).toHaveLength(1);
  });

  it('20 emails for one site: one trial, 19 × 409 trial_already_used', async () => {
    const productId = await trialProduct();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        send(i, '/trials', { product_id: productId, email: uniqueEmail(`site${i}`), site: 'race.example' }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.code === 'trial_already_used')).toHaveLength(19);
    expect(await licensesOf(productId)).toHaveLength(1);
  });
});
