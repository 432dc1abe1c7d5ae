import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/random.js';
import { createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { createCustomer, uniqueEmail } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { connectMail, type Smtp, startSmtp, waitForMail } from './helpers.js';

/**
 * The sign-in link email (docs/email.md, 'Messages') through a real SMTP server: its link signs in
 * once, its token is stored only as a SHA-256; and the pages that would say "check your email"
 * tell the truth when the store's last sending failed (docs/email.md, 'When mail is not available').
 */
let t: TestApp;
let smtp: Smtp;
beforeAll(async () => {
  smtp = await startSmtp();
  t = await createTestApp({ env: { TEST_CLOCK: '1' } });
  await setSettings(t, { store_name: 'Acme Plugins' });
  await connectMail(t, smtp.url());
  t.app.services.mailWorker.start();
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const ask = (email: string, ip = '10.9.0.1') =>
  t.app.inject({ method: 'POST', url: '/v1/auth/sign-in-link', payload: { email }, remoteAddress: ip });

describe('the sign-in link email', () => {
  it('arrives at the customer with a link that signs in once and lands on the account', async () => {
    const email = uniqueEmail('link-mail');
    await createCustomer(t, email);
    expect((await ask(email)).statusCode).toBe(202);
    const m = await waitForMail(smtp, email, /sign in/i);
    expect(m.subject).toBe('Sign in to Acme Plugins');
    const origin = t.app.services.urls.origin;
    const link = new RegExp(
      `${origin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/account/sign-in-link/claim\\?token=[0-9a-f]{64}`,
    ).exec(m.text)?.[0];
    expect(link, m.text).toBeTruthy();
    expect(m.html).toContain(link!);
    expect(m.text).toMatch(/15 minutes/);
    const token = new URL(link!).searchParams.get('token')!;
    // Only its SHA-256 is stored; the outbox row holds no token.
    const stored = await t.app.services.database.db
      .selectFrom('password_tokens')
      .select(['token_hash', 'purpose'])
      .execute();
    expect(stored).toContainEqual({ token_hash: sha256(token), purpose: 'signin' });
    expect(stored.some((r) => r.token_hash === token)).toBe(false);
    const rows = await t.app.services.database.db.selectFrom('mail_messages').select('data').execute();
    expect(rows.some((r) => r.data.includes(token))).toBe(false);

    const opened = await t.app.inject({ method: 'GET', url: `/account/sign-in-link/claim?token=${token}` });
    expect(opened.statusCode).toBe(303);
    expect(opened.headers.location).toBe('/account/licenses');
    const session = opened.cookies.find((c) => c.name === 'tollgate_session')!.value;
    const me = await t.app.inject({
      method: 'GET',
      url: '/v1/auth/me',
      headers: { cookie: `tollgate_session=${session}` },
    });
    expect(me.json().user.email).toBe(email);
    const again = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/sign-in-link/claim',
      payload: { token },
    });
    expectError(again, 400, 'invalid_sign_in_token');
  });

  it('nothing is sent for an address without an account', async () => {
    const email = uniqueEmail('link-nobody');
    expect((await ask(email, '10.9.0.2')).statusCode).toBe(202);
    // A message to a customer asked for after it is sent first: the worker has passed the other by.
    const later = uniqueEmail('link-after');
    await createCustomer(t, later);
    expect((await ask(later, '10.9.0.2')).statusCode).toBe(202);
    await waitForMail(smtp, later, /sign in/i);
    expect(smtp.received.some((m) => m.to.includes(email))).toBe(false);
  });
});

describe('a failing mail server', () => {
  it('turns the forgot-password and sign-in link pages into "email is not available", until mail goes out again', async () => {
    const email = uniqueEmail('link-refused');
    await createCustomer(t, email);
    const page = async (path: string) => (await t.app.inject({ method: 'GET', url: path })).body;
    expect(await page('/account/sign-in-link')).toContain('action="/account/sign-in-link"');
    expect(await page('/account/sign-in')).toContain('href="/account/sign-in-link"');
    smtp.refuseWith = 554;
    const before = smtp.attempts;
    expect((await ask(email, '10.9.0.3')).statusCode).toBe(202);
    await waitFor(() => smtp.attempts > before, 'an attempt refused');
    await waitFor(
      async () => (await page('/account/forgot-password')).includes('data-mail="unavailable"'),
      'the page to say so',
    );
    for (const path of ['/account/forgot-password', '/account/sign-in-link']) {
      const body = await page(path);
      expect(body).toContain('data-mail="unavailable"');
      expect(body).not.toMatch(/check your email/i);
    }
    expect(await page('/account/sign-in')).not.toContain('href="/account/sign-in-link"');
    // The server accepts again: the retry goes out, and the pages offer email once more.
    smtp.refuseWith = null;
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/test-clock',
      headers: t.adminAuth,
      payload: { advance_seconds: 120 },
    });
    expect(res.statusCode).toBe(200);
    await waitForMail(smtp, email, /sign in/i);
    await waitFor(
      async () => !(await page('/account/sign-in-link')).includes('data-mail="unavailable"'),
      'email offered again',
    );
  });
});
