import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';
import { dialectUnderTest, freshDatabase } from '../helpers/db.js';
import { type Cluster, type ServerProcess, signIn, startCluster, startServer } from '../helpers/server.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { type Smtp, startSmtp } from './helpers.js';

/**
 * Exactly once across server processes (docs/email.md, 'Delivery'): on PostgreSQL two real
 * server processes share the outbox and race to claim it; every message reaches the SMTP server
 * once. (On SQLite the cluster is one process, which serialises its own claims.)
 */
const MESSAGES = 40;
const ADMIN = { email: 'crash-admin@example.com', password: 'crash admin password' };
let cluster: Cluster;
let smtp: Smtp;
beforeAll(async () => {
  smtp = await startSmtp();
  cluster = await startCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
  await smtp?.close();
});

describe('the mail worker in several processes', () => {
  it(`sends each of ${MESSAGES} waiting messages exactly once`, async () => {
    if (dialectUnderTest === 'postgres') expect(cluster.servers).toHaveLength(2);
    const db = cluster.database.database.db;
    const now = new Date().toISOString();
    // Messages that waited while smtp_url was empty (as a store before it connects a mail server).
    for (let i = 0; i < MESSAGES; i++) {
      await db
        .insertInto('mail_messages')
        .values({
          kind: 'subscription_status',
          recipient: `once-${i}@example.com`,
          subject: 'Your subscription',
          data: JSON.stringify({
            subscription_id: i + 1,
            first_name: 'Ada',
            product: 'Plugin',
            status: 'active',
            reason: 'payment_received',
          }),
          dedupe_key: null,
          status: 'pending',
          attempts: 0,
          next_attempt_at: now,
          locked_until: null,
          last_error: null,
          sent_at: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
    const res = await fetch(`${cluster.servers[0]!.url}/v1/settings`, {
      method: 'PATCH',
      headers: { ...cluster.adminHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ smtp_url: smtp.url(), mail_from: 'Shop <shop@example.com>' }),
    });
    expect(res.status).toBe(200);
    await waitFor(() => smtp.received.length >= MESSAGES, `${MESSAGES} messages`, { timeoutMs: 30_000 });
    // Time for a duplicate to show up, were there one.
    await sleep(2500);
    const recipients = smtp.received.map((m) => m.to[0]);
    expect(recipients).toHaveLength(MESSAGES);
    expect(new Set(recipients).size).toBe(MESSAGES);
    const rows = await db.selectFrom('mail_messages').select(['status', 'attempts']).execute();
    expect(rows.every((r) => r.status === 'sent' && r.attempts === 1)).toBe(true);
  }, 60_000);
});

describe('a server process that crashes while sending', () => {
  it('leaves the message to the next process once its lease has run out; it is sent once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-mail-crash-'));
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      TEST_CLOCK: '1',
    };
    let database: Database;
    let drop: () => Promise<void>;
    if (process.env.DATABASE_URL) {
      const fresh = await freshDatabase();
      env.DATABASE_URL = (fresh.config as { url: string }).url;
      database = fresh.database;
      drop = () => fresh.drop();
    } else {
      database = openDatabase({
        kind: 'sqlite',
        file: join(dataDir, 'tollgate.sqlite'),
        synchronous: 'NORMAL',
      });
      drop = async () => database.close();
    }
    const first = await startServer(env);
    let second: ServerProcess | null = null;
    try {
      const headers = {
        ...(await signIn(first.url, ADMIN.email, ADMIN.password)),
        'content-type': 'application/json',
      };
      smtp.received.length = 0;
      smtp.hold = true;
      const set = await fetch(`${first.url}/v1/settings`, {
        method: 'PATCH',
        headers,
        body: JSON.stringify({ smtp_url: smtp.url(), mail_from: 'Shop <shop@example.com>' }),
      });
      expect(set.status).toBe(200);
      const forgot = await fetch(`${first.url}/v1/auth/password/forgot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: ADMIN.email }),
      });
      expect(forgot.status).toBe(202);
      await waitFor(() => smtp.held === 1, 'the send in flight', { timeoutMs: 15_000 });
      await first.kill('SIGKILL');
      smtp.hold = false;
      second = await startServer(env);
      // The message is still leased to the dead process: nothing is sent before the lease ends.
      await sleep(2500);
      expect(smtp.received).toHaveLength(0);
      const headers2 = {
        ...(await signIn(second.url, ADMIN.email, ADMIN.password)),
        'content-type': 'application/json',
      };
      const moved = await fetch(`${second.url}/v1/test-clock`, {
        method: 'POST',
        headers: headers2,
        body: JSON.stringify({ advance_seconds: 90 }),
      });
      expect(moved.status).toBe(200);
      await waitFor(() => smtp.received.length === 1, 'the message sent by the new process', {
        timeoutMs: 15_000,
      });
      await sleep(1500);
      expect(smtp.received).toHaveLength(1);
      expect(smtp.received[0]!.to).toEqual([ADMIN.email]);
      const rows = await database.db.selectFrom('mail_messages').select(['status', 'attempts']).execute();
      expect(rows).toEqual([{ status: 'sent', attempts: 1 }]);
    } finally {
      await first.kill('SIGKILL');
      await second?.stop();
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
