import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { payOrder } from '../checkout/helpers.js';
import {
  admin,
  adminOk,
  advanceClock,
  createTestApp,
  expectError,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import { createCustomer, createLicense, createProduct, uniqueEmail } from '../helpers/factories.js';
import {
  connectMail,
  type MailMessage,
  type Received,
  type Smtp,
  startSmtp,
  waitForMail,
} from './helpers.js';

/**
 * Renewal reminders (docs/selling.md, 'Renewals'; docs/email.md, 'Messages'): on each of
 * renewal_reminder_days around a term license's end, one email through the real SMTP test server,
 * driven by the test clock, each carrying the one-click renewal link that works signed out.
 */
let t: TestApp;
let smtp: Smtp;
const DAY = 86_400;
const term = { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 365 } };

beforeAll(async () => {
  smtp = await startSmtp();
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  const res = await admin(t, 'PATCH', '/payment-gateways/test_card', { enabled: true });
  expect(res.statusCode, res.body).toBe(200);
  await connectMail(t, smtp.url());
  // The first scan: licenses whose reminder came before it are never reminded late.
  await t.app.services.expiryScan.run();
  t.app.services.mailWorker.start();
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const nowMs = async () => Date.parse(String((await adminOk(t, 'GET', '/test-clock')).now));
const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** Two scans at once, as two server processes run them: each message is still one row. */
const scanTwice = () => Promise.all([t.app.services.expiryScan.run(), t.app.services.expiryScan.run()]);
const kindsTo = async (email: string) =>
  (await adminOk<MailMessage[]>(t, 'GET', '/mail/messages?per_page=100'))
    .filter((m) => m.recipient === email)
    .map((m) => m.kind)
    .sort();
const receivedBy = (email: string) => smtp.received.filter((m) => m.to.includes(email));

function renewLink(m: Received): string {
  const origin = t.app.services.urls.origin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const found = m.text.match(new RegExp(`${origin}/renew\\?token=\\S+`));
  if (!found) throw new Error(`no renewal link in:\n${m.text}`);
  // The HTML part's button carries the same link.
  expect(m.html).toContain(`href="${found[0]}"`);
  const u = new URL(found[0]);
  return u.pathname + u.search;
}

describe('renewal reminders', () => {
  it('30, 7, 0 and -7 days: each sent once, with a link that renews signed out', async () => {
    const email = uniqueEmail('remind');
    const customer = await createCustomer(t, email);
    const product = await createProduct(t, { name: 'Reminder Pro', price: '30.00' });
    const license = await createLicense(t, {
      product_id: product.id,
      user_id: customer.id,
      entitlement_policy: term,
      usage_expires_at: at((await nowMs()) + 40 * DAY * 1000),
    });
    await scanTwice();
    expect(await kindsTo(email)).toEqual([]);

    const steps: [number, RegExp][] = [
      [10 * DAY + 3600, /Renew your Reminder Pro license: it ends on/],
      [23 * DAY, /Renew your Reminder Pro license: it ends on/],
      [7 * DAY, /Reminder Pro license ends today/],
      [7 * DAY, /Reminder Pro license ended on/],
    ];
    let last: Received | undefined;
    for (const [i, [seconds, subject]] of steps.entries()) {
      await advanceClock(t, seconds);
      await scanTwice();
      await scanTwice();
      last = await waitFor(email, i + 1);
      expect(last.subject).toMatch(subject);
      expect(last.text).toContain(license.license_key.slice(-4));
      // Never the whole key in an email that anyone it is forwarded to can read.
      expect(last.text).not.toContain(license.license_key);
    }
    expect(receivedBy(email).map((m) => m.subject)[0]).toMatch(/30 day|ends on/);
    expect(receivedBy(email)[0]!.text).toContain('in 30 days');
    expect(receivedBy(email)[1]!.text).toContain('in 7 days');
    // Reminders instead of the expiring/expired notices, one row each.
    expect(await kindsTo(email)).toEqual(Array(4).fill('renewal_reminder'));
    await new Promise((r) => setTimeout(r, 1500));
    expect(receivedBy(email)).toHaveLength(4);

    // The -7 email's link, opened by a browser that never signed in.
    const path = renewLink(last!);
    const opened = await t.app.inject({ method: 'GET', url: path });
    expect(opened.statusCode, opened.body).toBe(303);
    const [, id, key] = /^\/checkout\/pay\/(\d+)\?key=(.+)$/.exec(String(opened.headers.location))!;
    const paid = await payOrder(new Browser(t), Number(id), {
      key: decodeURIComponent(key!),
      payment_method: 'test_card',
      payment_data: { card_number: '4242424242424242' },
    });
    expect(paid.statusCode, paid.body).toBe(200);
    const again = await t.app.inject({ method: 'GET', url: path });
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('data-state="renewed"');
    // Renewed: the payment's receipt, and the new period's reminders are a year away.
    await scanTwice();
    expect(await kindsTo(email)).toEqual(['order_receipt', ...Array(4).fill('renewal_reminder')]);
  });

  it('a license that is not a term license keeps the expiring and expired notices', async () => {
    await setSettings(t, { license_expiring_days: 5 });
    const email = uniqueEmail('plain');
    const customer = await createCustomer(t, email);
    const product = await createProduct(t);
    await createLicense(t, {
      product_id: product.id,
      user_id: customer.id,
      usage_expires_at: at((await nowMs()) + 3 * DAY * 1000),
    });
    await scanTwice();
    await waitForMail(smtp, email, /expires on/i);
    expect(await kindsTo(email)).toEqual(['license_expiring']);
  });

  it('after a pause, only the reminder now due is sent; switched off, the plain notice', async () => {
    const email = uniqueEmail('pause');
    const customer = await createCustomer(t, email);
    const product = await createProduct(t, { name: 'Paused' });
    await createLicense(t, {
      product_id: product.id,
      user_id: customer.id,
      entitlement_policy: term,
      usage_expires_at: at((await nowMs()) + 40 * DAY * 1000),
    });
    // No scan while the 30-day reminder comes and goes: at 5 days left only the 7-day one is due.
    await advanceClock(t, 35 * DAY);
    await scanTwice();
    const m = await waitForMail(smtp, email, /Paused license: it ends on/);
    expect(m.text).toContain('in 5 days');
    expect(await kindsTo(email)).toEqual(['renewal_reminder']);
    // Switched off, no more reminders: the license gets the plain "expired" notice instead.
    await setSettings(t, { mail_renewal_reminder: false });
    try {
      await advanceClock(t, 6 * DAY);
      await scanTwice();
      expect(await kindsTo(email)).toEqual(['license_expired', 'renewal_reminder']);
    } finally {
      await setSettings(t, { mail_renewal_reminder: true });
    }
  });

  it('renewal_reminder_days: each day once, highest first, within -60 to 365', async () => {
    await setSettings(t, { renewal_reminder_days: [7, 30, 7, -3] });
    expect((await adminOk(t, 'GET', '/settings')).renewal_reminder_days).toEqual([30, 7, -3]);
    for (const bad of [[-61], [366], [1.5], ['7'], Array(11).fill(1)]) {
      expectError(
        await admin(t, 'PATCH', '/settings', { renewal_reminder_days: bad }),
        400,
        'rest_invalid_param',
      );
    }
    expect((await adminOk(t, 'GET', '/settings')).renewal_reminder_days).toEqual([30, 7, -3]);
    await setSettings(t, { renewal_reminder_days: [30, 7, 0, -7] });
  });
});

/** Waits until this address has received `n` messages; answers the last. */
async function waitFor(email: string, n: number): Promise<Received> {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    const got = receivedBy(email);
    if (got.length >= n) {
      expect(got).toHaveLength(n);
      return got[n - 1]!;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${email} received ${receivedBy(email).length} of ${n} messages`);
}
