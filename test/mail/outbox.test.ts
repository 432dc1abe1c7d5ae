import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, adminOk, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { createCustomer, uniqueEmail } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { type MailMessage, type Smtp, startSmtp, waitForMail } from './helpers.js';

/**
 * The outbox as the administrator sees it (docs/email.md, 'The outbox'): with smtp_url empty
 * messages wait and are listed; resend; the SMTP password never in an answer, the audit trail or
 * a log line; and every refusal of the new routes with its status and code.
 */
const SMTP_USER = 'mailer';
const SMTP_PASS = 'S3cr3t-smtp-pa55';
let t: TestApp;
let smtp: Smtp;
beforeAll(async () => {
  smtp = await startSmtp({ user: SMTP_USER, pass: SMTP_PASS });
  t = await createTestApp({ captureLogs: true });
  t.app.services.mailWorker.start();
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const forgot = (email: string, ip = '10.0.0.1') =>
  t.app.inject({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email }, remoteAddress: ip });

async function list(query = ''): Promise<{ items: MailMessage[]; total: string; pages: string }> {
  const res = await admin(t, 'GET', `/mail/messages${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return {
    items: res.json() as MailMessage[],
    total: String(res.headers['x-wp-total']),
    pages: String(res.headers['x-wp-totalpages']),
  };
}

describe('with smtp_url empty', () => {
  it('messages wait in the outbox, listed newest first, paginated and filtered by status', async () => {
    const emails = [uniqueEmail('w1'), uniqueEmail('w2'), uniqueEmail('w3')];
    for (const e of emails) await createCustomer(t, e);
    for (const e of emails) expect((await forgot(e)).statusCode).toBe(202);
    await new Promise((r) => setTimeout(r, 1500));
    const pending = await list('?status=pending&per_page=2');
    expect(pending.total).toBe('3');
    expect(pending.pages).toBe('2');
    expect(pending.items.map((m) => m.recipient)).toEqual([emails[2], emails[1]]);
    expect(pending.items[0]).toMatchObject({
      kind: 'password_reset',
      status: 'pending',
      attempts: 0,
      last_error: null,
    });
    expect(pending.items[0]!.subject.length).toBeGreaterThan(0);
    const page2 = await list('?status=pending&per_page=2&page=2');
    expect(page2.items.map((m) => m.recipient)).toEqual([emails[0]]);
    expect((await list('?status=sent')).total).toBe('0');
    expect(smtp.received).toHaveLength(0);
  });
});

describe('the SMTP password', () => {
  it('is masked in GET and PATCH answers, kept when the mask is sent back, and absent from the audit trail and logs', async () => {
    const url = smtp.url(SMTP_USER, SMTP_PASS);
    const patched = await adminOk<{ smtp_url: string }>(t, 'PATCH', '/settings', {
      smtp_url: url,
      mail_from: 'Shop <shop@example.com>',
    });
    expect(patched.smtp_url).not.toContain(SMTP_PASS);
    expect(patched.smtp_url).toBe(`smtp://${SMTP_USER}:********@127.0.0.1:${smtp.port}`);
    const read = await adminOk<{ smtp_url: string }>(t, 'GET', '/settings');
    expect(read.smtp_url).toBe(patched.smtp_url);
    // The console sends back what it was shown: the stored password stays.
    await adminOk(t, 'PATCH', '/settings', { smtp_url: read.smtp_url, store_name: 'Masked store' });
    const stored = await t.app.services.settings.get();
    expect(stored.smtp_url).toBe(url);
    // The waiting messages go out, authenticated with the kept password.
    const first = await waitForMail(smtp, (await list('?per_page=1')).items[0]!.recipient);
    expect(first.user).toBe(SMTP_USER);
    await waitFor(async () => (await list('?status=pending')).total === '0', 'the outbox to drain');
    const audit = await admin(t, 'GET', '/audit-events?entity_type=settings&per_page=100');
    expect(audit.body).not.toContain(SMTP_PASS);
    expect(audit.body).toContain('********');
    // A wrong password: the failure is recorded, without any password in it.
    await adminOk(t, 'PATCH', '/settings', { smtp_url: smtp.url(SMTP_USER, 'wrong-Pa55word-xyz') });
    const email = uniqueEmail('badauth');
    await createCustomer(t, email);
    await forgot(email);
    const failed = await waitFor(async () => {
      const m = (await list()).items.find((x) => x.recipient === email);
      return m && m.attempts === 1 && m;
    }, 'the refused attempt');
    expect(failed.last_error).toBeTruthy();
    expect(failed.last_error).not.toContain('wrong-Pa55word-xyz');
    const all = JSON.stringify(await list('?per_page=100'));
    expect(all).not.toContain(SMTP_PASS);
    expect(t.logs()).not.toContain(SMTP_PASS);
    expect(t.logs()).not.toContain('wrong-Pa55word-xyz');
    await adminOk(t, 'PATCH', '/settings', { smtp_url: url });
  });

  it('a smtp_url that is not smtp:// or smtps:// is refused', async () => {
    expectError(
      await admin(t, 'PATCH', '/settings', { smtp_url: 'http://example.com' }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await admin(t, 'PATCH', '/settings', { license_expiring_days: 0 }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await admin(t, 'PATCH', '/settings', { mail_order_receipt: 'yes' }),
      400,
      'rest_invalid_param',
    );
  });
});

describe('resend', () => {
  it('sends a sent message again, and is recorded in the audit trail', async () => {
    await setSettings(t, { smtp_url: smtp.url(SMTP_USER, SMTP_PASS) });
    const email = uniqueEmail('resend');
    await createCustomer(t, email);
    await forgot(email);
    await waitForMail(smtp, email);
    const sent = await waitFor(async () => {
      const m = (await list('?status=sent&per_page=100')).items.find((x) => x.recipient === email);
      return m;
    }, 'the message sent');
    const res = await admin(t, 'POST', `/mail/messages/${sent.id}/resend`, {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: sent.id, status: 'pending', attempts: 0 });
    await waitFor(() => smtp.received.filter((m) => m.to.includes(email)).length === 2, 'the second copy');
    const audit = await adminOk<{ entity_type: string; entity_id: number; action: string }[]>(
      t,
      'GET',
      '/audit-events?entity_type=mail_message',
    );
    expect(audit[0]).toMatchObject({ entity_type: 'mail_message', entity_id: sent.id, action: 'resend' });
  });

  it('refuses an unknown message, bad ids, unknown fields, malformed JSON; anonymous 401, customer 403', async () => {
    expectError(await admin(t, 'POST', '/mail/messages/999999/resend', {}), 404, 'mail_message_not_found');
    expectError(await admin(t, 'POST', '/mail/messages/abc/resend', {}), 400, 'rest_invalid_param');
    expectError(await admin(t, 'POST', '/mail/messages/0/resend', {}), 400, 'rest_invalid_param');
    expectError(
      await admin(t, 'POST', '/mail/messages/1/resend', { force: true }),
      400,
      'invalid_parameters',
    );
    const bad = await t.app.inject({
      method: 'POST',
      url: '/v1/mail/messages/1/resend',
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"x":',
    });
    expectError(bad, 400, 'rest_invalid_json');
    expectError(await admin(t, 'GET', '/mail/messages?status=lost'), 400, 'rest_invalid_param');
    expectError(await admin(t, 'GET', '/mail/messages?per_page=101'), 400, 'rest_invalid_param');
    expectError(await admin(t, 'GET', '/mail/messages?sort=id'), 400, 'invalid_parameters');
    const anon = await t.app.inject({ method: 'GET', url: '/v1/mail/messages' });
    expectError(anon, 401, 'rest_not_logged_in');
    const anonResend = await t.app.inject({ method: 'POST', url: '/v1/mail/messages/1/resend', payload: {} });
    expectError(anonResend, 401, 'rest_not_logged_in');
    const customer = await createCustomer(t);
    const asCustomer = await t.app.inject({
      method: 'GET',
      url: '/v1/mail/messages',
      headers: customer.headers,
    });
    expectError(asCustomer, 403, 'rest_forbidden');
    const resendAsCustomer = await t.app.inject({
      method: 'POST',
      url: '/v1/mail/messages/1/resend',
      headers: customer.headers,
      payload: {},
    });
    expectError(resendAsCustomer, 403, 'rest_forbidden');
  });
});

describe('password routes', () => {
  const reset = (payload: unknown) =>
    t.app.inject({ method: 'POST', url: '/v1/auth/password/reset', payload: payload as object });

  it('refuse bad tokens, short passwords, wrong types, unknown fields and hostile strings, changing nothing', async () => {
    const before = await t.app.services.database.db
      .selectFrom('users')
      .select(['id', 'password_hash'])
      .execute();
    expectError(
      await reset({ token: 'f'.repeat(64), password: 'long enough pw' }),
      400,
      'invalid_password_token',
    );
    expectError(
      await reset({ token: "'; drop table users; --", password: 'long enough pw' }),
      400,
      'invalid_password_token',
    );
    expectError(await reset({ token: 'f'.repeat(64), password: 'short' }), 400, 'invalid_password');
    expectError(await reset({ token: 'f'.repeat(64), password: 12345678 }), 400, 'invalid_password');
    expectError(await reset({ token: 5, password: 'long enough pw' }), 400, 'rest_invalid_param');
    expectError(await reset({ token: 'f'.repeat(64) }), 400, 'rest_missing_param');
    expectError(
      await reset({ token: 'f'.repeat(64), password: 'long enough pw', admin: true }),
      400,
      'invalid_parameters',
    );
    expectError(
      await reset({ token: 'f\u0000'.repeat(10), password: 'long enough pw' }),
      400,
      'rest_invalid_param',
    );
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/password/reset',
      headers: { 'content-type': 'application/json' },
      payload: '{"token":',
    });
    expectError(malformed, 400, 'rest_invalid_json');
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email: 42 } }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/auth/password/forgot',
        payload: { email: 'a@b.c', x: 1 },
      }),
      400,
      'invalid_parameters',
    );
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/auth/password/forgot', payload: {} }),
      400,
      'rest_missing_param',
    );
    const malformedForgot = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/password/forgot',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":',
    });
    expectError(malformedForgot, 400, 'rest_invalid_json');
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/auth/password/forgot',
        payload: { email: 'a\u0000@b.c' },
      }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/v1/auth/password/forgot',
        payload: { email: `${'x'.repeat(300)}@example.com` },
      }),
      400,
      'rest_invalid_param',
    );
    const messagesBefore = (await list()).total;
    const hostile = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/password/forgot',
      payload: { email: "' or 1=1 --" },
      remoteAddress: '10.7.7.7',
    });
    expect(hostile.statusCode).toBe(202);
    expect((await list()).total).toBe(messagesBefore);
    const after = await t.app.services.database.db
      .selectFrom('users')
      .select(['id', 'password_hash'])
      .execute();
    expect(after).toEqual(before);
  });

  it('forgot password is rate limited per IP (429 too_many_password_requests) and silently per address', async () => {
    const email = uniqueEmail('flood');
    await createCustomer(t, email);
    for (let i = 0; i < 10; i++) expect((await forgot(email, '10.9.9.9')).statusCode).toBe(202);
    expectError(await forgot(email, '10.9.9.9'), 429, 'too_many_password_requests');
    const rows = await t.app.services.database.db
      .selectFrom('mail_messages')
      .select('id')
      .where('recipient', '=', email)
      .execute();
    expect(rows).toHaveLength(3);
  });
});

describe('password pages', () => {
  it('forgot-password and reset-password work as plain forms; an invalid link says so with its code', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/account/forgot-password' });
    expect(page.statusCode).toBe(200);
    const csrf = /name="_csrf" value="([0-9a-f]{32})"/.exec(page.body)![1]!;
    const cookie = page.cookies.find((c) => c.name === 'tollgate_form')!.value;
    const email = uniqueEmail('page');
    await createCustomer(t, email);
    const posted = await t.app.inject({
      method: 'POST',
      url: '/account/forgot-password',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `tollgate_form=${cookie}` },
      payload: new URLSearchParams({ _csrf: csrf, email }).toString(),
      remoteAddress: '10.1.2.3',
    });
    expect(posted.statusCode).toBe(202);
    const noCsrf = await t.app.inject({
      method: 'POST',
      url: '/account/forgot-password',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email }).toString(),
    });
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.body).toContain('data-code="rest_cookie_invalid_nonce"');
    const m = await waitForMail(smtp, email);
    const token = /token=([0-9a-f]{64})/.exec(m.text)![1]!;
    const form = await t.app.inject({ method: 'GET', url: `/account/reset-password?token=${token}` });
    expect(form.statusCode).toBe(200);
    const csrf2 = /name="_csrf" value="([0-9a-f]{32})"/.exec(form.body)![1]!;
    const cookie2 = form.cookies.find((c) => c.name === 'tollgate_form')?.value ?? cookie;
    const post = (fields: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/account/reset-password',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `tollgate_form=${cookie2}` },
        payload: new URLSearchParams({ _csrf: csrf2, token, ...fields }).toString(),
      });
    const mismatch = await post({ password: 'page password 1', confirm: 'page password 2' });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.body).toContain('data-code="password_mismatch"');
    const short = await post({ password: 'short', confirm: 'short' });
    expect(short.body).toContain('data-code="invalid_password"');
    const done = await post({ password: 'page password 1', confirm: 'page password 1' });
    expect(done.statusCode).toBe(200);
    const signIn = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { email, password: 'page password 1' },
    });
    expect(signIn.statusCode).toBe(200);
    const used = await t.app.inject({ method: 'GET', url: `/account/reset-password?token=${token}` });
    expect(used.statusCode).toBe(400);
    expect(used.body).toContain('data-code="invalid_password_token"');
    const hostile = await t.app.inject({ method: 'GET', url: '/account/reset-password?token=%3Cscript%3E' });
    expect(hostile.statusCode).toBe(400);
    expect(hostile.body).not.toContain('<script>');
    // The sign-in page links here.
    const signInPage = await t.app.inject({ method: 'GET', url: '/account/sign-in' });
    expect(signInPage.body).toContain('href="/account/forgot-password"');
  });
});
