import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectUnderTest } from '../helpers/db.js';
import { type Cluster, startCluster } from '../helpers/server.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { type Smtp, startSmtp } from './helpers.js';

/**
 * Exactly once across server processes (docs/email.md, 'Delivery'): on PostgreSQL two real
 * server processes share the outbox and race to claim it; every message reaches the SMTP server
 * once. (On SQLite the cluster is one process, which serialises its own claims.)
 */
const MESSAGES = 40;
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
