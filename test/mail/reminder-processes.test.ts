import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectUnderTest } from '../helpers/db.js';
import { type Cluster, startCluster } from '../helpers/server.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { type Smtp, startSmtp } from './helpers.js';

/**
 * Renewal reminders from several server processes (docs/selling.md, 'Renewals'): on PostgreSQL
 * two real processes run the expiry scan on the moved test clock at once; each reminder is one row
 * and reaches the SMTP server once. (On SQLite the cluster is one process.)
 */
const LICENSES = 12;
const DAY = 86_400;
let cluster: Cluster;
let smtp: Smtp;
beforeAll(async () => {
  smtp = await startSmtp();
  cluster = await startCluster(undefined, { TEST_CLOCK: '1' });
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
  await smtp?.close();
});

async function send(method: string, path: string, body?: unknown) {
  const res = await fetch(`${cluster.servers[0]!.url}/v1${path}`, {
    method,
    headers: { ...cluster.adminHeaders, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  expect(res.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

describe('renewal reminders in several processes', () => {
  it(`sends the 7-day reminder of ${LICENSES} term licenses once each`, async () => {
    if (dialectUnderTest === 'postgres') expect(cluster.servers).toHaveLength(2);
    await send('PATCH', '/settings', { smtp_url: smtp.url(), mail_from: 'Shop <shop@example.com>' });
    const product = await send('POST', '/products', {
      name: 'Raced',
      price: '10.00',
      licensing_enabled: 'yes',
    });
    const now = Date.parse(String((await send('GET', '/test-clock')).now));
    for (let i = 0; i < LICENSES; i++) {
      const user = await send('POST', '/users', {
        email: `reminded-${i}@example.com`,
        password: 'reminded-password-1',
        role: 'customer',
      });
      await send('POST', '/licenses', {
        product_id: product.id,
        user_id: user.id,
        entitlement_policy: { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 365 } },
        usage_expires_at: new Date(now + 8 * DAY * 1000).toISOString(),
      });
    }
    // A day and a half on, every license is within 7 days of its end in both processes' next scan.
    await send('POST', '/test-clock', { advance_seconds: 1.5 * DAY });
    await waitFor(() => smtp.received.length >= LICENSES, `${LICENSES} reminders`, { timeoutMs: 30_000 });
    // Time for a duplicate to show up, were there one (each process scans again on later ticks).
    await sleep(2500);
    const recipients = smtp.received.map((m) => m.to[0]);
    expect(recipients).toHaveLength(LICENSES);
    expect(new Set(recipients).size).toBe(LICENSES);
    expect(smtp.received.every((m) => /Renew your Raced license/.test(m.subject))).toBe(true);
    const rows = await cluster.database.database.db
      .selectFrom('mail_messages')
      .select(['kind', 'status'])
      .execute();
    expect(rows).toHaveLength(LICENSES);
    expect(rows.every((r) => r.kind === 'renewal_reminder' && r.status === 'sent')).toBe(true);
  }, 60_000);
});
