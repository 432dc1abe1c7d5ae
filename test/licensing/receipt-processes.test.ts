import { createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectUnderTest } from '../helpers/db.js';
import { identity, seedOwnedLicense } from '../helpers/factories.js';
import { type Cluster, startCluster } from '../helpers/server.js';

/**
 * Receipts from real server processes sharing one database (PostgreSQL: two processes; SQLite: one,
 * as a SQLite store is served). The first receipts, asked of both processes at once, make the
 * store's first signing key: exactly one is made, and every receipt verifies with the published key.
 */
let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster();
}, 90_000);
afterAll(() => cluster.stop());

async function call(i: number, path: string, body?: unknown) {
  const server = cluster.servers[i % cluster.servers.length]!;
  const res = await fetch(`${server.url}/v1${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe(`receipts over real HTTP (${dialectUnderTest}, ${dialectUnderTest === 'postgres' ? 'two processes' : 'one process'})`, () => {
  it('20 parallel first receipts across the processes: one active key, every receipt verifies with it', async () => {
    const db = cluster.database.database.db;
    expect(await db.selectFrom('signing_keys').selectAll().execute()).toEqual([]);
    const { key } = await seedOwnedLicense(db, { limit: 3 });
    const site = identity('processes.example');
    expect((await call(0, '/licenses/activate', { license_key: key, ...site })).status).toBe(200);

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(i, '/licenses/validate', { license_key: key, ...site, receipt: true }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const stored = await db.selectFrom('signing_keys').selectAll().execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.retired_at).toBeNull();

    const published = await call(1, '/software/signing-keys');
    const keys = published.body.keys as { id: string; public_key: string }[];
    expect(keys.map((k) => k.id)).toEqual([stored[0]!.key_id]);
    const publicKey = createPublicKey({
      key: {
        kty: 'OKP',
        crv: 'Ed25519',
        x: Buffer.from(keys[0]!.public_key, 'base64').toString('base64url'),
      },
      format: 'jwk',
    });
    for (const r of results) {
      const receipt = r.body.receipt as { payload: string; signature: string; signing_key_id: string };
      expect(receipt.signing_key_id).toBe(keys[0]!.id);
      expect(
        verify(
          null,
          Buffer.from(receipt.payload, 'ascii'),
          publicKey,
          Buffer.from(receipt.signature, 'base64'),
        ),
      ).toBe(true);
    }
  });
});
