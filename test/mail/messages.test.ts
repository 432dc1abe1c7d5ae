import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { licensesOfOrder, payOrder } from '../checkout/helpers.js';
import { adminOk, advanceClock, createTestApp, login, setSettings, type TestApp } from '../helpers/app.js';
import {
  BILLING,
  createCustomer,
  createLicense,
  createOrder,
  createProduct,
  enableOfflineGateways,
  OFFLINE_INSTRUCTIONS,
  uniqueEmail,
} from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import {
  connectMail,
  type MailMessage,
  type Received,
  type Smtp,
  startSmtp,
  waitForMail,
} from './helpers.js';

/**
 * Every message of docs/email.md, 'Messages', sent by the mail worker through a real SMTP server
 * (the smtp-server package on 127.0.0.1): recipient, subject, text and HTML parts, and what each
 * must carry (license keys, working links).
 */
let t: TestApp;
let smtp: Smtp;
beforeAll(async () => {
  smtp = await startSmtp();
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  // Orders here are paid by bank transfer or cheque, which a new store starts without.
  await enableOfflineGateways(t);
  await setSettings(t, { checkout_rate_limit: 1000, store_name: 'Acme <Plugins>' });
  await connectMail(t, smtp.url());
  t.app.services.mailWorker.start();
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const origin = () => t.app.services.urls.origin;

/** Pays an order with the test card, as the pay-order page does with the order key. */
async function pay(
  out: { order_id: number; order_key: string },
  card = '4242424242424242',
  b = new Browser(t),
) {
  return payOrder(b, out.order_id, {
    key: out.order_key,
    payment_method: 'test_card',
    payment_data: { card_number: card },
  });
}

function expectWellFormed(m: Received) {
  expect(m.subject.length).toBeGreaterThan(0);
  expect(m.text.length).toBeGreaterThan(0);
  expect(m.html).toContain('<html');
  // The store's identity, escaped in HTML.
  expect(m.html).toContain('Acme &lt;Plugins&gt;');
  expect(m.html).not.toContain('Acme <Plugins>');
  expect(m.text).toContain('Acme <Plugins>');
}

/** The first absolute link to `path` in the text part. */
function linkTo(m: Received, path: string): string {
  const found = m.text.match(new RegExp(`${origin().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${path}\\S*`));
  if (!found) throw new Error(`no link to ${path} in:\n${m.text}`);
  return found[0];
}

async function messagesTo(email: string): Promise<MailMessage[]> {
  const all = await adminOk<MailMessage[]>(t, 'GET', '/mail/messages?per_page=100');
  return all.filter((m) => m.recipient === email);
}

describe('messages', () => {
  it('a guest checkout sends the receipt with the license key and links, and "set your password" that works', async () => {
    const product = await createProduct(t);
    const email = uniqueEmail('guest');
    const out = await createOrder(t, {
      items: [{ product_id: product.id, qty: 1 }],
      billing: { ...BILLING, email },
    });
    expect((await pay(out)).statusCode).toBe(200);
    const [license] = await licensesOfOrder(t, out.order_id);
    expect(license).toBeTruthy();
    const receipt = await waitForMail(smtp, email, /order/i);
    expectWellFormed(receipt);
    const key = (license as { license_key: string }).license_key;
    expect(receipt.text).toContain(key);
    expect(receipt.html).toContain(key);
    const receiptUrl = `${origin()}/checkout/order-received/${out.order_id}?key=${out.order_key}`;
    expect(receipt.text).toContain(receiptUrl);
    expect(receipt.html).toContain(`${origin()}/account/downloads`);

    const welcome = await waitForMail(smtp, email, /account/i);
    expectWellFormed(welcome);
    const link = linkTo(welcome, '/account/reset-password');
    const token = new URL(link).searchParams.get('token')!;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    // The page the link opens: "set your password" for a new account.
    const page = await t.app.inject({ method: 'GET', url: `/account/reset-password?token=${token}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-purpose="welcome"');
    // No usable token is stored: only its SHA-256.
    const stored = await t.app.services.database.db
      .selectFrom('password_tokens')
      .select('token_hash')
      .execute();
    expect(stored.some((r) => r.token_hash === token)).toBe(false);
    const mailRows = await t.app.services.database.db.selectFrom('mail_messages').select('data').execute();
    expect(mailRows.some((r) => r.data.includes(token))).toBe(false);

    const set = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/password/reset',
      payload: { token, password: 'a brand new password' },
    });
    expect(set.statusCode).toBe(200);
    await login(t.app, email, 'a brand new password');
    // Single use.
    const again = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/password/reset',
      payload: { token, password: 'another new password' },
    });
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('invalid_password_token');
    const sent = await messagesTo(email);
    expect(sent.map((m) => m.kind).sort()).toEqual(['account_created', 'order_receipt']);
    expect(sent.every((m) => m.status === 'sent' && m.attempts === 1)).toBe(true);
  });

  it('forgot password: 202 for any address; the emailed link resets the password once, within the hour', async () => {
    const email = uniqueEmail('forgot');
    await createCustomer(t, email);
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/password/forgot',
      payload: { email: uniqueEmail('nobody') },
    });
    expect(unknown.statusCode).toBe(202);
    const known = await t.app.inject({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email } });
    expect(known.statusCode).toBe(202);
    const m = await waitForMail(smtp, email, /reset/i);
    expectWellFormed(m);
    const token = new URL(linkTo(m, '/account/reset-password')).searchParams.get('token')!;
    const page = await t.app.inject({ method: 'GET', url: `/account/reset-password?token=${token}` });
    expect(page.body).toContain('data-purpose="reset"');
    // An hour and a bit later the link has expired.
    await advanceClock(t, 3601);
    const late = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/password/reset',
      payload: { token, password: 'too late password' },
    });
    expect(late.statusCode).toBe(400);
    expect(late.json().code).toBe('invalid_password_token');
    // A fresh request, used in time.
    smtp.received.length = 0;
    await t.app.inject({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email } });
    const m2 = await waitForMail(smtp, email, /reset/i);
    const token2 = new URL(linkTo(m2, '/account/reset-password')).searchParams.get('token')!;
    const ok = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/password/reset',
      payload: { token: token2, password: 'reset password ok' },
    });
    expect(ok.statusCode).toBe(200);
    await login(t.app, email, 'reset password ok');
  });

  it('a bank transfer order marked paid by the administrator sends "payment received" with the key', async () => {
    // A hostile product name reaches the HTML part escaped.
    const product = await createProduct(t, { name: 'Evil <img src=x onerror=alert(1)> & "co"' });
    const email = uniqueEmail('bacs');
    const out = await createOrder(t, {
      items: [{ product_id: product.id, qty: 1 }],
      billing: { ...BILLING, email },
      payment_method: 'bacs',
    });
    await adminOk(t, 'POST', `/orders/${out.order_id}/status`, { status: 'processing' });
    const m = await waitForMail(smtp, email, /payment received/i);
    expectWellFormed(m);
    expect(m.html).not.toContain('<img src=x');
    expect(m.html).toContain('Evil &lt;img src=x onerror=alert(1)&gt; &amp; &quot;co&quot;');
    expect(m.text).toContain('Evil <img src=x onerror=alert(1)> & "co"');
    const [license] = await licensesOfOrder(t, out.order_id);
    expect(m.text).toContain((license as { license_key: string }).license_key);
    expect(m.html).toContain(`${origin()}/account/downloads`);
    expect((await messagesTo(email)).map((x) => x.kind)).toContain('payment_received');
    expect((await messagesTo(email)).map((x) => x.kind)).not.toContain('order_receipt');
  });

  /** The customer pays a placed order by transfer or cheque: it waits on hold. */
  async function holdOrder(out: { order_id: number; order_key: string }, method: string) {
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/checkout/pay-order/${out.order_id}`,
      payload: { key: out.order_key, payment_method: method },
    });
    expect(res.statusCode, res.body).toBe(200);
  }

  it('a bank transfer order on hold sends "waiting for payment" with the gateway’s instructions, escaped, and no key', async () => {
    await adminOk(t, 'PATCH', '/payment-gateways/bacs', {
      instructions: 'Pay to Northwind Ltd\nIBAN DE89 3704 0044 0532 0130 00 <b>now</b>',
    });
    const product = await createProduct(t, { name: 'Transfer Tool' });
    const email = uniqueEmail('onhold');
    const out = await createOrder(t, {
      items: [{ product_id: product.id, qty: 1 }],
      billing: { ...BILLING, email },
      payment_method: 'bacs',
    });
    const kinds = async (to: string) => (await messagesTo(to)).map((x) => x.kind);
    // Submitted, the order is pending: nothing to pay yet. Paying by transfer puts it on hold.
    expect(await kinds(email)).not.toContain('order_on_hold');
    await holdOrder(out, 'bacs');
    const m = await waitForMail(smtp, email, /waiting for payment/i);
    expectWellFormed(m);
    expect(m.text.replace(/\r\n/g, '\n')).toContain(
      'Pay to Northwind Ltd\nIBAN DE89 3704 0044 0532 0130 00 <b>now</b>',
    );
    expect(m.html).toContain('IBAN DE89 3704 0044 0532 0130 00 &lt;b&gt;now&lt;/b&gt;');
    expect(m.text).toContain(`order #${out.order_id} as the payment reference`);
    expect(linkTo(m, `/checkout/order-received/${out.order_id}`)).toContain(`key=${out.order_key}`);
    // Not paid yet: no license exists, so no key can be in it.
    expect(await licensesOfOrder(t, out.order_id)).toEqual([]);
    expect((await kinds(email)).filter((k) => k.startsWith('order_'))).toEqual(['order_on_hold']);

    // Switched off: the next order on hold adds no message.
    await setSettings(t, { mail_order_on_hold: false });
    const quiet = uniqueEmail('onhold-off');
    const second = await createOrder(t, {
      items: [{ product_id: product.id, qty: 1 }],
      billing: { ...BILLING, email: quiet },
      payment_method: 'cheque',
    });
    await holdOrder(second, 'cheque');
    expect(await kinds(quiet)).not.toContain('order_on_hold');
    await setSettings(t, { mail_order_on_hold: true });
    await adminOk(t, 'PATCH', '/payment-gateways/bacs', { instructions: OFFLINE_INSTRUCTIONS.bacs });
  });

  it('subscriptions: status changed, renewal due, renewal failed, renewal paid', async () => {
    const product = await createProduct(t, {
      type: 'subscription',
      price: '10.00',
      subscription: { period: 'month', interval: 1 },
      entitlement_policy: { usage: { mode: 'days', days: 30 }, updates: { mode: 'license' } },
    });
    const email = uniqueEmail('sub');
    const customer = await createCustomer(t, email);
    const b = new Browser(t);
    await b.login(email, customer.password);
    const first = await createOrder(
      t,
      {
        items: [{ product_id: product.id, qty: 1 }],
        billing: { ...BILLING, email },
      },
      b,
    );
    const paidFirst = await pay(first, undefined, b);
    expect(paidFirst.statusCode, paidFirst.body).toBe(200);
    const active = await waitForMail(smtp, email, /subscription is active/i);
    expectWellFormed(active);
    const subs = await adminOk<{ id: number }[]>(t, 'GET', `/subscriptions?user_id=${customer.id}`);
    const subId = subs[0]!.id;
    const renewal = await adminOk<{ id: number; order_key: string }>(
      t,
      'POST',
      `/subscriptions/${subId}/renewal-orders`,
      {},
    );
    const due = await waitForMail(smtp, email, /renewal is due/i);
    expectWellFormed(due);
    expect(due.text).toContain(`${origin()}/checkout/pay/${renewal.id}?key=${renewal.order_key}`);
    const declined = await pay({ order_id: renewal.id, order_key: renewal.order_key }, '4000000000000002');
    expect(declined.statusCode).toBeGreaterThanOrEqual(400);
    const failed = await waitForMail(smtp, email, /renewal failed/i);
    expectWellFormed(failed);
    const paid = await pay({ order_id: renewal.id, order_key: renewal.order_key });
    expect(paid.statusCode).toBe(200);
    const renewed = await waitForMail(smtp, email, /is renewed/i);
    expectWellFormed(renewed);
    const kinds = (await messagesTo(email)).map((m) => m.kind);
    for (const kind of [
      'subscription_status',
      'renewal_due',
      'renewal_failed',
      'renewal_paid',
      'order_receipt',
    ]) {
      expect(kinds).toContain(kind);
    }
  });

  it('license expiring in N days and expired: each sent once, driven by the test clock', async () => {
    await setSettings(t, { license_expiring_days: 5 });
    const email = uniqueEmail('expiry');
    const customer = await createCustomer(t, email);
    const product = await createProduct(t);
    const now = Date.parse(String((await adminOk(t, 'GET', '/test-clock')).now));
    const expires = new Date(now + 3 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const license = await createLicense(t, {
      product_id: product.id,
      user_id: customer.id,
      usage_expires_at: expires,
    });
    await t.app.services.expiryScan.run();
    const expiring = await waitForMail(smtp, email, /expires on/i);
    expectWellFormed(expiring);
    expect(expiring.text).toContain(license.license_key.slice(-4));
    await t.app.services.expiryScan.run();
    await advanceClock(t, 4 * 86_400);
    await t.app.services.expiryScan.run();
    const expired = await waitForMail(smtp, email, /has expired/i);
    expectWellFormed(expired);
    await t.app.services.expiryScan.run();
    const kinds = (await messagesTo(email)).map((m) => m.kind).sort();
    expect(kinds).toEqual(['license_expired', 'license_expiring']);
  });

  it('a message switched off in the settings is not written', async () => {
    await setSettings(t, { mail_order_receipt: false });
    try {
      const product = await createProduct(t);
      const email = uniqueEmail('off');
      const out = await createOrder(t, {
        items: [{ product_id: product.id, qty: 1 }],
        billing: { ...BILLING, email },
      });
      expect((await pay(out)).statusCode).toBe(200);
      await waitForMail(smtp, email, /account/i);
      expect((await messagesTo(email)).map((m) => m.kind)).toEqual(['account_created']);
    } finally {
      await setSettings(t, { mail_order_receipt: true });
    }
  });
});

describe('delivery', () => {
  it('retries with backoff while the SMTP server refuses (4xx, then 5xx), then sends', async () => {
    const email = uniqueEmail('retry');
    await createCustomer(t, email);
    smtp.refuseWith = 451;
    const before = smtp.attempts;
    await t.app.inject({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email } });
    const first = await waitFor(async () => {
      const [m] = await messagesTo(email);
      return m && m.attempts === 1 && m;
    }, 'the first refused attempt');
    expect(first.status).toBe('pending');
    expect(first.last_error).toContain('451');
    expect(smtp.attempts).toBe(before + 1);
    smtp.refuseWith = 554;
    await advanceClock(t, 61);
    const second = await waitFor(async () => {
      const [m] = await messagesTo(email);
      return m && m.attempts === 2 && m;
    }, 'the second refused attempt');
    expect(second.last_error).toContain('554');
    smtp.refuseWith = null;
    await advanceClock(t, 301);
    await waitForMail(smtp, email, /reset/i);
    // The SMTP server has the mail a moment before the worker records it sent.
    const done = await waitFor(async () => {
      const [m] = await messagesTo(email);
      return m?.status === 'sent' && m;
    }, 'the message recorded sent');
    expect(done).toMatchObject({ status: 'sent', attempts: 3, last_error: null });
  });
});
