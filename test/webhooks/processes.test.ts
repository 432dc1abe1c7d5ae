import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';
import { dialectUnderTest, freshDatabase, type TestDatabase } from '../helpers/db.js';
import { type ServerProcess, signIn, startServer } from '../helpers/server.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { type Receiver, recordEvent, startReceiver } from './helpers.js';

const ADMIN = { email: 'root@example.com', password: 'server-test-pw' };
const SECRET = 'process-test-secret';

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});
const running: ServerProcess[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.kill('SIGKILL');
});

/** Environment for server processes sharing one database, and a handle on it for the test. */
async function sharedDatabase(): Promise<{ env: Record<string, string>; open: () => Database }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-wh-srv-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    TEST_CLOCK: '1',
  };
  if (process.env.DATABASE_URL) {
    const db: TestDatabase = await freshDatabase();
    cleanups.push(() => db.drop());
    env.DATABASE_URL = (db.config as { url: string }).url;
    return { env, open: () => db.database };
  }
  return {
    env,
    open: () => {
      const database = openDatabase({
        kind: 'sqlite',
        file: join(dataDir, 'tollgate.sqlite'),
        synchronous: 'NORMAL',
      });
      cleanups.push(() => database.close());
      return database;
    },
  };
}

async function serve(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServer(env);
  running.push(server);
  return server;
}

async function adminCall(server: ServerProcess, method: string, path: string, body: unknown) {
  const res = await fetch(`${server.url}/v1${path}`, {
    method,
    headers: {
      ...(await signIn(server.url, ADMIN.email, ADMIN.password)),
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

let receiver: Receiver;
afterEach(async () => receiver?.close());

const hits = (eventId: string) =>
  receiver.requests.filter((r) => r.headers['x-tollgate-event-id'] === eventId);

describe('delivery across server processes', () => {
  it('a server killed with SIGKILL leaves nothing behind: after restart due and in-flight events are delivered', async () => {
    receiver = await startReceiver(503);
    const { env, open } = await sharedDatabase();
    const first = await serve(env);
    const database = open();
    const db = database.db;
    await adminCall(first, 'PATCH', '/settings', { webhook_url: receiver.url, webhook_secret: SECRET });

    const e1 = await recordEvent(db, 'license.revoked', { license_id: 1 });
    const e2 = await recordEvent(db, 'subscription.status_changed', {
      subscription_id: 3,
      status: 'on-hold',
      reason: 'x',
    });
    await waitFor(() => hits(e1).length === 1 && hits(e2).length === 1, 'first attempts (503)');
    await waitFor(
      async () => (await db.selectFrom('webhook_attempts').select('id').execute()).length === 2,
      'first attempts logged',
    );

    // The retries are in flight (the receiver does not answer) when the process is killed.
    receiver.reply = 'hang';
    await adminCall(first, 'POST', '/test-clock', { advance_seconds: 60 });
    await waitFor(() => hits(e1).length === 2 && hits(e2).length === 2, 'second attempts in flight');
    await first.kill('SIGKILL');
    running.splice(running.indexOf(first), 1);
    // An event recorded while no server runs.
    const e3 = await recordEvent(db, 'license.revoked', { license_id: 3 });

    receiver.reply = 200;
    const second = await serve(env);
    await waitFor(() => hits(e3).length === 1, 'the due event after restart');
    // The in-flight ones are still leased; once the lease runs out they are taken again.
    expect(hits(e1)).toHaveLength(2);
    await adminCall(second, 'POST', '/test-clock', { advance_seconds: 31 });
    await waitFor(async () => {
      const rows = await db.selectFrom('webhook_events').select('status').execute();
      return rows.length === 3 && rows.every((r) => r.status === 'delivered');
    }, 'every event delivered');
    expect(hits(e1)).toHaveLength(3);
    expect(hits(e2)).toHaveLength(3);

    const log = await db
      .selectFrom('webhook_attempts')
      .select(['event_id', 'attempt', 'delivered', 'response_code'])
      .orderBy('id')
      .execute();
    // The attempt cut short by the crash was never recorded, so the retry counts as attempt 2.
    expect(log.filter((a) => a.event_id === e1)).toEqual([
      { event_id: e1, attempt: 1, delivered: 0, response_code: 503 },
      { event_id: e1, attempt: 2, delivered: 1, response_code: 200 },
    ]);
    expect(await second.stop()).toBe(0);
    running.splice(running.indexOf(second), 1);
  }, 90_000);

  // PostgreSQL: two processes share the work. SQLite is served by one process, so there the same
  // load runs through one (its claim is the conditional UPDATE); the test runs on both.
  const processes = dialectUnderTest === 'postgres' ? 2 : 1;
  it(`${processes} server process(es) on ${dialectUnderTest} deliver each of 80 events exactly once`, async () => {
    receiver = await startReceiver(200);
    receiver.delayMs = 20;
    const { env, open } = await sharedDatabase();
    const servers: ServerProcess[] = [];
    for (let i = 0; i < processes; i++) servers.push(await serve(env));
    const db = open().db;
    await adminCall(servers[0]!, 'PATCH', '/settings', { webhook_url: receiver.url, webhook_secret: SECRET });

    const ids: string[] = [];
    for (let i = 1; i <= 80; i++) ids.push(await recordEvent(db, 'license.revoked', { license_id: i }));
    await waitFor(
      async () =>
        (await db.selectFrom('webhook_events').select('id').where('status', '=', 'delivered').execute())
          .length === 80,
      'all delivered',
      { timeoutMs: 40_000 },
    );
    await sleep(1500);
    for (const id of ids) expect(hits(id), id).toHaveLength(1);
    expect(receiver.requests).toHaveLength(80);
    const attempts = await db.selectFrom('webhook_attempts').select(['attempt', 'delivered']).execute();
    expect(attempts).toHaveLength(80);
    expect(attempts.every((a) => a.attempt === 1 && a.delivered === 1)).toBe(true);
  }, 90_000);
});
