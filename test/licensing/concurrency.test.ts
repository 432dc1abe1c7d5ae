import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectUnderTest, type TestDatabase } from '../helpers/db.js';
import { identity, seedOwnedLicense } from '../helpers/factories.js';
import { type Cluster, type ServerProcess, startCluster } from '../helpers/server.js';

/**
 * Activation limits under real parallel HTTP. SQLite: one server process (its one connection runs
 * transactions one at a time). PostgreSQL: two server processes on one database, so only the
 * license row lock (FOR UPDATE) can keep the count exact.
 */
let cluster: Cluster;
let database: TestDatabase;
let servers: ServerProcess[];

beforeAll(async () => {
  cluster = await startCluster();
  ({ database, servers } = cluster);
}, 90_000);

afterAll(() => cluster.stop());

async function seedLicense(limit: number): Promise<{ id: number; key: string }> {
  const seeded = await seedOwnedLicense(database.database.db, { limit });
  return { id: seeded.licenseId, key: seeded.key };
}

async function activate(i: number, body: unknown) {
  const server = servers[i % servers.length]!;
  const res = await fetch(`${server.url}/v1/licenses/activate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const activeRows = (licenseId: number) =>
  database.database.db
    .selectFrom('activations')
    .selectAll()
    .where('license_id', '=', licenseId)
    .where('status', '=', 'active')
    .execute();

describe(`parallel activations over real HTTP (${dialectUnderTest}, ${dialectUnderTest === 'postgres' ? 'two processes' : 'one process'})`, () => {
  it('50 distinct identities on a limit of 3: exactly 3 succeed, 47 get activation_limit_reached', async () => {
    const { id, key } = await seedLicense(3);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        activate(i, { license_key: key, ...identity(`site-${i}.example`) }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 403 && r.body.code === 'activation_limit_reached');
    expect(ok).toHaveLength(3);
    expect(refused).toHaveLength(47);
    expect(new Set(ok.map((r) => r.body.activation_id)).size).toBe(3);
    expect((await activeRows(id)).length).toBe(3);
  });

  it('20 parallel repeats of one identity create exactly one activation', async () => {
    const { id, key } = await seedLicense(3);
    const site = identity('same.example');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => activate(i, { license_key: key, ...site })),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.activation_id)).size).toBe(1);
    expect(results.filter((r) => r.body.message === undefined)).toHaveLength(1);
    expect(results.filter((r) => r.body.message === 'Already activated')).toHaveLength(19);
    expect((await activeRows(id)).length).toBe(1);
  });

  it('a mixed burst (repeats and new identities) never passes the limit', async () => {
    const { id, key } = await seedLicense(2);
    const repeated = identity('repeat.example');
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        activate(i, { license_key: key, ...(i % 3 === 0 ? repeated : identity(`m-${i}.example`)) }),
      ),
    );
    expect(results.every((r) => r.status === 200 || r.body.code === 'activation_limit_reached')).toBe(true);
    const rows = await activeRows(id);
    expect(rows.length).toBe(2);
    expect(new Set(rows.map((r) => r.identity_key)).size).toBe(2);
  });
});
