import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/modules/accounts/password.js';
import { sha256 } from '../../src/random.js';
import { dialectUnderTest, type TestDatabase } from '../helpers/db.js';
import { identity, seedOwnedLicense } from '../helpers/factories.js';
import { type Cluster, type ServerProcess, signIn, startCluster } from '../helpers/server.js';

/**
 * Exchanging one activation token many times at once over real HTTP. SQLite: one server process.
 * PostgreSQL: two server processes on one database; the state is signed by one and confirmed on
 * the other (the signing secret is shared through the database), and only the conditional claim
 * (UPDATE … WHERE used_at IS NULL) inside the activation transaction keeps the token single-use.
 */
let cluster: Cluster;
let database: TestDatabase;
let servers: ServerProcess[];
const PASSWORD = 'customer-password-1';

beforeAll(async () => {
  cluster = await startCluster();
  ({ database, servers } = cluster);
}, 90_000);

afterAll(() => cluster.stop());

const db = () => database.database.db;
const server = (i: number) => servers[i % servers.length]!;

async function call(
  i: number,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${server(i).url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

/** A customer (signed in on server 0) owning a license of a product that requires approval. */
async function seed(limit: number) {
  const { email, licenseId, key } = await seedOwnedLicense(db(), {
    limit,
    activation_mode: 'oauth',
    password_hash: await hashPassword(PASSWORD),
  });
  return { key, licenseId, auth: await signIn(server(0).url, email, PASSWORD) };
}

/** Request on server 0, confirm on the last server: answers the activation token. */
async function approvedToken(owner: Awaited<ReturnType<typeof seed>>, site: ReturnType<typeof identity>) {
  const requested = await call(0, 'POST', '/v1/licenses/activate', {
    license_key: owner.key,
    ...site,
    return_url: `https://${site.domain}/cb`,
  });
  expect(requested.body.code).toBe('oauth_required');
  const url = new URL(requested.body.redirect_url as string);
  const confirmed = await call(
    servers.length - 1,
    'POST',
    '/v1/licenses/oauth/confirm',
    { license_key: owner.key, state: url.searchParams.get('state'), nonce: url.searchParams.get('nonce') },
    owner.auth,
  );
  expect(confirmed.status).toBe(200);
  return confirmed.body.activation_token as string;
}

describe(`parallel token exchanges over real HTTP (${dialectUnderTest}, ${dialectUnderTest === 'postgres' ? 'two processes' : 'one process'})`, () => {
  it('20 parallel exchanges of one token: exactly one activation, 19 token_consumed', async () => {
    const owner = await seed(5);
    const site = identity('race.example');
    const token = await approvedToken(owner, site);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(i, 'POST', '/v1/licenses/activate', {
          license_key: owner.key,
          ...site,
          activation_token: token,
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.body.message).toBeUndefined();
    expect(results.filter((r) => r.status === 403 && r.body.code === 'token_consumed')).toHaveLength(19);
    const active = await db()
      .selectFrom('activations')
      .selectAll()
      .where('license_id', '=', owner.licenseId)
      .where('status', '=', 'active')
      .execute();
    expect(active.map((a) => a.id)).toEqual([ok[0]!.body.activation_id]);
    const row = await db()
      .selectFrom('oauth_activation_tokens')
      .selectAll()
      .where('token_hash', '=', sha256(token))
      .executeTakeFirstOrThrow();
    expect(row.used_at).not.toBeNull();
  });

  it('two approved sites racing for the last slot: one activation, the other token stays unused', async () => {
    const owner = await seed(1);
    const a = identity('a.example');
    const b = identity('b.example');
    const tokens = [await approvedToken(owner, a), await approvedToken(owner, b)];
    const results = await Promise.all(
      [a, b].map((site, i) =>
        call(i, 'POST', '/v1/licenses/activate', {
          license_key: owner.key,
          ...site,
          activation_token: tokens[i],
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
    expect(results.find((r) => r.status === 403)!.body.code).toBe('activation_limit_reached');
    const used = await db()
      .selectFrom('oauth_activation_tokens')
      .select('used_at')
      .where('license_id', '=', owner.licenseId)
      .execute();
    expect(used.filter((r) => r.used_at !== null)).toHaveLength(1);
  });
});
