import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/random.js';
import { call, download, issue, protectedFixture, tokenOf } from '../distribution/helpers.js';
import { adminOk, createTestApp, expectError, post, setSettings, type TestApp } from '../helpers/app.js';
import { dialectUnderTest, type TestDatabase } from '../helpers/db.js';
import { identity, installationId, licenseFixture, seedOwnedLicense } from '../helpers/factories.js';
import { type Cluster, type ServerProcess, startCluster } from '../helpers/server.js';
import { sleep } from '../helpers/wait.js';

// Reinstalls (docs/licensing.md, '2.4 Reinstalls'): with reinstall_takeover on, a new installation
// on a domain that holds an active activation of the license takes that activation over.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { TRUST_PROXY: '1' } });
  await setSettings(t, { rate_limit: 100 });
});
afterAll(async () => t.close());

const db = () => t.app.services.database.db;
const activate = (payload: unknown) => post(t, '/licenses/activate', payload);
const rowsOf = (licenseId: number) =>
  db().selectFrom('activations').selectAll().where('license_id', '=', licenseId).orderBy('id').execute();
const withTakeover = async (run: () => Promise<void>) => {
  await setSettings(t, { reinstall_takeover: true });
  try {
    await run();
  } finally {
    await setSettings(t, { reinstall_takeover: false });
  }
};

describe('reinstall_takeover off (the default)', () => {
  it('a new installation on the same domain needs a seat of its own', async () => {
    const f = await licenseFixture(t, { activation_limit: 1 });
    expect((await activate({ license_key: f.key, ...identity('shop.example.com') })).statusCode).toBe(200);
    expectError(
      await activate({ license_key: f.key, ...identity('shop.example.com') }),
      403,
      'activation_limit_reached',
    );
    const g = await licenseFixture(t, { activation_limit: 2 });
    await activate({ license_key: g.key, ...identity('shop.example.com') });
    await activate({ license_key: g.key, ...identity('shop.example.com') });
    expect((await rowsOf(g.license.id)).filter((r) => r.status === 'active')).toHaveLength(2);
  });
});

describe('reinstall_takeover on', () => {
  it('takes the activation over: the normal answer, no new seat, the old one deactivated as reinstalled', async () => {
    await withTakeover(async () => {
      const f = await licenseFixture(t, { activation_limit: 1 });
      const old = identity('https://shop.example.com/');
      const first = (await activate({ license_key: f.key, ...old })).json();
      const fresh = { domain: 'SHOP.example.com:443', installation_id: installationId() };
      const res = await activate({ license_key: f.key, ...fresh });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        success: true,
        activation_id: expect.any(Number),
        activations_remaining: 0,
        product_id: f.product.id,
        variation_id: 0,
      });
      const newId = res.json().activation_id as number;
      expect(newId).not.toBe(first.activation_id);
      const [was, now] = await rowsOf(f.license.id);
      expect(was).toMatchObject({
        id: first.activation_id,
        status: 'deactivated',
        deactivation_reason: 'reinstalled',
        replaced_by: newId,
        activation_revision: 2,
      });
      expect(was!.deactivated_at).not.toBeNull();
      expect(now).toMatchObject({
        id: newId,
        status: 'active',
        deactivation_reason: null,
        replaced_by: null,
      });
      // The old installation is no longer licensed; the new one is.
      const oldValidate = await post(t, '/licenses/validate', { license_key: f.key, ...old });
      expect([oldValidate.statusCode, oldValidate.json().error]).toEqual([403, 'domain_not_activated']);
      expect((await post(t, '/licenses/validate', { license_key: f.key, ...fresh })).statusCode).toBe(200);
      // The history shows it to the administrator.
      const view = await adminOk<{ activations: Record<string, unknown>[]; activation_count: number }>(
        t,
        'GET',
        `/licenses/${f.license.id}`,
      );
      expect(view.activation_count).toBe(1);
      expect(view.activations.find((a) => a.id === first.activation_id)).toMatchObject({
        status: 'deactivated',
        deactivation_reason: 'reinstalled',
        replaced_by: newId,
      });
      expect(view.activations.find((a) => a.id === newId)).not.toHaveProperty('deactivation_reason');
    });
  });

  it('records the takeover in the audit trail with the site as the actor, and nothing without one', async () => {
    const f = await licenseFixture(t, { activation_limit: 2 });
    const old = identity('audit.example.com');
    const first = (await activate({ license_key: f.key, ...old })).json();
    const trail = async () =>
      (
        await adminOk<Record<string, unknown>[]>(
          t,
          'GET',
          `/audit-events?entity_type=license&entity_id=${f.license.id}`,
        )
      ).filter((e) => e.action === 'take_over_activation');
    // Off, a second installation takes a seat of its own and nothing is recorded.
    const second = { domain: 'audit.example.com', installation_id: installationId() };
    await activate({ license_key: f.key, ...second });
    expect(await trail()).toEqual([]);
    await withTakeover(async () => {
      const fresh = { domain: 'https://AUDIT.example.com/', installation_id: installationId() };
      const { activation_id } = (await activate({ license_key: f.key, ...fresh })).json();
      const events = await trail();
      // Both activations on the domain were taken over: one event each, in the order they went.
      expect(events).toHaveLength(2);
      expect(events.reverse()).toEqual([
        expect.objectContaining({
          actor: { kind: 'site', name: 'audit.example.com', user_id: null, email: null },
          entity_type: 'license',
          entity_id: f.license.id,
          action: 'take_over_activation',
          changes: {
            activation_id: { before: first.activation_id, after: activation_id },
            installation_id: { before: old.installation_id, after: fresh.installation_id },
          },
        }),
        expect.objectContaining({
          action: 'take_over_activation',
          changes: expect.objectContaining({
            installation_id: { before: second.installation_id, after: fresh.installation_id },
          }),
        }),
      ]);
      // A site is nobody's user: filtering by a person leaves its events out.
      const byUser = await adminOk<unknown[]>(t, 'GET', '/audit-events?actor_user_id=1&entity_type=license');
      expect(byUser.some((e) => (e as { action: string }).action === 'take_over_activation')).toBe(false);
    });
  });

  it('an ordinary deactivation carries no reason in the views', async () => {
    const f = await licenseFixture(t, { activation_limit: 1 });
    const site = identity('plain.example.com');
    const { activation_id } = (await activate({ license_key: f.key, ...site })).json();
    await post(t, '/licenses/deactivate', { license_key: f.key, activation_id });
    const list = await adminOk<Record<string, unknown>[]>(t, 'GET', `/licenses/${f.license.id}/activations`);
    expect(list[0]).not.toHaveProperty('deactivation_reason');
    expect(list[0]).not.toHaveProperty('replaced_by');
  });

  it('invalidates the outstanding download tokens of the activation taken over', async () => {
    const f = await protectedFixture(t);
    const url = (await issue(t, f)).download_url;
    await withTakeover(async () => {
      const res = await call(t, 'POST', '/licenses/activate', {
        license_key: f.key,
        domain: f.site.domain,
        installation_id: installationId(),
      });
      expect(res.statusCode).toBe(200);
    });
    expectError(await download(t, url), 403, 'token_invalidated');
    const token = await db()
      .selectFrom('download_tokens')
      .selectAll()
      .where('token_hash', '=', sha256(tokenOf(url)))
      .executeTakeFirstOrThrow();
    expect(token.invalidated_reason).toBe('deactivated');
  });

  it('leaves other domains, and another port of the domain, alone', async () => {
    await withTakeover(async () => {
      const f = await licenseFixture(t, { activation_limit: 3 });
      await activate({ license_key: f.key, ...identity('one.example.com') });
      await activate({ license_key: f.key, ...identity('two.example.com') });
      const res = await activate({ license_key: f.key, ...identity('one.example.com:8080') });
      expect(res.json().activations_remaining).toBe(0);
      expect((await rowsOf(f.license.id)).every((r) => r.status === 'active')).toBe(true);
      expectError(
        await activate({ license_key: f.key, ...identity('three.example.com') }),
        403,
        'activation_limit_reached',
      );
    });
  });

  it('a repeat of the same installation is still "Already activated", and takes nothing over', async () => {
    await withTakeover(async () => {
      const f = await licenseFixture(t, { activation_limit: 1 });
      const site = identity('repeat.example.com');
      const first = (await activate({ license_key: f.key, ...site })).json();
      const again = (await activate({ license_key: f.key, ...site })).json();
      expect(again).toEqual({ ...first, message: 'Already activated' });
      expect(await rowsOf(f.license.id)).toHaveLength(1);
    });
  });

  it('takes over every active activation of the domain (left by reinstalls before the setting was on)', async () => {
    const f = await licenseFixture(t, { activation_limit: 3 });
    await activate({ license_key: f.key, ...identity('many.example.com') });
    await activate({ license_key: f.key, ...identity('many.example.com') });
    await activate({ license_key: f.key, ...identity('other.example.com') });
    await withTakeover(async () => {
      const res = await activate({ license_key: f.key, ...identity('many.example.com') });
      expect(res.json().activations_remaining).toBe(1);
    });
    const active = (await rowsOf(f.license.id)).filter((r) => r.status === 'active');
    expect(active.map((r) => r.domain_normalized).sort()).toEqual(['many.example.com', 'other.example.com']);
  });

  it('a staging site is taken over within the staging cap, even at the cap', async () => {
    await withTakeover(async () => {
      const f = await licenseFixture(t, { activation_limit: 1 });
      for (const d of ['a.test', 'b.test', 'c.test']) await activate({ license_key: f.key, ...identity(d) });
      const res = await activate({ license_key: f.key, ...identity('b.test') });
      expect(res.json()).toMatchObject({ environment: 'staging', staging_activations_remaining: 0 });
      expectError(
        await activate({ license_key: f.key, ...identity('d.test') }),
        403,
        'staging_activation_limit_reached',
      );
      const rows = await rowsOf(f.license.id);
      expect(rows.filter((r) => r.status === 'active')).toHaveLength(3);
      expect(rows.filter((r) => r.deactivation_reason === 'reinstalled')).toHaveLength(1);
    });
  });

  it('a refused activation takes nothing over', async () => {
    await withTakeover(async () => {
      const f = await licenseFixture(t, { activation_limit: 1 });
      const site = identity('kept.example.com');
      await activate({ license_key: f.key, ...site });
      await t.app.inject({ method: 'DELETE', url: `/v1/licenses/${f.license.id}`, headers: t.adminAuth });
      expectError(await activate({ license_key: f.key, ...identity('kept.example.com') }), 403, 'revoked');
      expect((await rowsOf(f.license.id)).map((r) => r.status)).toEqual(['active']);
    });
  });
});

/**
 * Parallel reinstalls over real HTTP. SQLite: one server process. PostgreSQL: two server processes
 * on one database, so only the license row lock keeps one activation per domain.
 */
describe(`parallel takeovers over real HTTP (${dialectUnderTest}, ${dialectUnderTest === 'postgres' ? 'two processes' : 'one process'})`, () => {
  let cluster: Cluster;
  let database: TestDatabase;
  let servers: ServerProcess[];
  beforeAll(async () => {
    cluster = await startCluster();
    ({ database, servers } = cluster);
    const res = await fetch(`${servers[0]!.url}/v1/settings`, {
      method: 'PATCH',
      headers: { ...cluster.adminHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ reinstall_takeover: true }),
    });
    expect(res.status).toBe(200);
    // Every process reads the settings again within a second (docs/administration.md, 'Settings').
    await sleep(1100);
  }, 90_000);
  afterAll(() => cluster.stop());

  it('20 installations of one domain at once leave exactly one active activation, and no seat more', async () => {
    const seeded = await seedOwnedLicense(database.database.db, { limit: 2 });
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await fetch(`${servers[i % servers.length]!.url}/v1/licenses/activate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ license_key: seeded.key, ...identity('https://race.example.com/') }),
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(results.every((r) => r.body.activations_remaining === 1)).toBe(true);
    const rows = await database.database.db
      .selectFrom('activations')
      .selectAll()
      .where('license_id', '=', seeded.licenseId)
      .execute();
    expect(rows).toHaveLength(20);
    const active = rows.filter((r) => r.status === 'active');
    expect(active).toHaveLength(1);
    expect(rows.filter((r) => r.deactivation_reason === 'reinstalled')).toHaveLength(19);
    // Each takeover names the activation that replaced it; the chain ends at the active one.
    expect(new Set(rows.map((r) => r.replaced_by).filter((id) => id !== null)).size).toBe(19);
  });
});
