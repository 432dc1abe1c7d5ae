import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dialectUnderTest, freshDatabase, type TestDatabase } from '../helpers/db.js';
import { installationId, seedOwnedLicense } from '../helpers/factories.js';
import { type ServerProcess, signIn, startServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { type Receiver, startReceiver } from '../webhooks/helpers.js';

// Stale activations with two server processes on one PostgreSQL database (docs/licensing.md,
// 'Last seen and stale activations'): both run the job at the same time, and each stale site is
// released once, with one audit entry and one webhook.

const ADMIN = { email: 'stale-root@example.com', password: 'stale processes password' };
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe.runIf(dialectUnderTest === 'postgres')('stale activations across two processes', () => {
  it('two processes release each stale site once: one audit entry and one webhook each', async () => {
    const receiver: Receiver = await startReceiver(200);
    cleanups.push(() => receiver.close());
    const database: TestDatabase = await freshDatabase();
    cleanups.push(() => database.drop());
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-stale-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = {
      DATA_DIR: dataDir,
      DATABASE_URL: (database.config as { url: string }).url,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      TEST_CLOCK: '1',
    };
    // One after the other: the first migrates the database.
    const servers: ServerProcess[] = [await startServer(env)];
    servers.push(await startServer(env));
    cleanups.push(() => Promise.all(servers.map((s) => s.stop())));
    const db = database.database.db;

    // 40 sites on 8 licenses, last seen 100 days ago, and one seen an hour ago.
    const old = new Date(Date.now() - 100 * 24 * 3600 * 1000).toISOString();
    const recent = new Date(Date.now() - 3600 * 1000).toISOString();
    const ids: number[] = [];
    let fresh = 0;
    for (let l = 0; l < 8; l++) {
      const license = await seedOwnedLicense(db, { limit: 0 });
      for (let a = 0; a < (l === 0 ? 6 : 5); a++) {
        const seenAt = l === 0 && a === 5 ? recent : old;
        const row = await db
          .insertInto('activations')
          .values({
            license_id: license.licenseId,
            identity_key: `stale-${l}-${a}-${installationId()}`,
            domain: `site-${l}-${a}.example`,
            domain_normalized: `site-${l}-${a}.example`,
            installation_id: installationId(),
            ip_address: '127.0.0.1',
            machine_id: null,
            user_agent: 'test',
            status: 'active',
            activated_at: old,
            deactivated_at: null,
            activation_revision: 1,
            updated_at: old,
            last_seen_at: seenAt,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        if (seenAt === recent) fresh = row.id;
        else ids.push(row.id);
      }
    }

    const headers = {
      ...(await signIn(servers[0]!.url, ADMIN.email, ADMIN.password)),
      'content-type': 'application/json',
    };
    const res = await fetch(`${servers[0]!.url}/v1/settings`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({
        webhook_url: receiver.url,
        webhook_secret: 'stale-processes',
        stale_activation_days: 30,
      }),
    });
    expect(res.status).toBe(200);

    await waitFor(
      async () =>
        (await db.selectFrom('activations').select('id').where('deactivation_reason', '=', 'stale').execute())
          .length === ids.length,
      'every stale site released',
      { timeoutMs: 30_000 },
    );
    const rows = await db.selectFrom('activations').select(['id', 'status', 'deactivation_reason']).execute();
    for (const r of rows) {
      if (r.id === fresh) expect(r).toMatchObject({ status: 'active', deactivation_reason: null });
      else expect(r).toMatchObject({ status: 'deactivated', deactivation_reason: 'stale' });
    }

    const audit = await db
      .selectFrom('audit_events')
      .select(['actor_kind', 'actor_email', 'changes'])
      .where('action', '=', 'deactivate_activation')
      .execute();
    expect(audit).toHaveLength(ids.length);
    const audited = audit
      .map((e) => JSON.parse(e.changes).activation_id.after as number)
      .sort((a, b) => a - b);
    expect(audited).toEqual([...ids].sort((a, b) => a - b));
    for (const e of audit)
      expect(e).toMatchObject({ actor_kind: 'system', actor_email: 'stale_activations' });

    const events = await db
      .selectFrom('webhook_events')
      .select('payload')
      .where('event', '=', 'activation.stale_deactivated')
      .execute();
    expect(events).toHaveLength(ids.length);
    await waitFor(() => receiver.requests.length >= ids.length, 'every webhook delivered', {
      timeoutMs: 30_000,
    });
    const delivered = receiver.requests.map((r) => JSON.parse(r.body).data.activation_id as number);
    expect(new Set(delivered).size).toBe(ids.length);
    expect([...new Set(delivered)].sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
  }, 120_000);
});
