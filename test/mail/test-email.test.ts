import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  admin,
  adminOk,
  createTestApp,
  expectError,
  setSettings,
  type TestApp,
} from '../helpers/app.js';
import { createCustomer } from '../helpers/factories.js';
import { connectMail, type Smtp, startSmtp } from './helpers.js';

/** POST /v1/mail/test (docs/email.md, 'Checking the mail server'): the console's "send a test email". */
let t: TestApp;
let smtp: Smtp;
beforeAll(async () => {
  smtp = await startSmtp({ user: 'shop', pass: 'p@ss word' });
  t = await createTestApp({ captureLogs: true });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

describe('POST /mail/test', () => {
  it('without a mail server is 409 mail_not_configured', async () => {
    expectError(await admin(t, 'POST', '/mail/test', {}), 409, 'mail_not_configured');
  });

  it('sends one message now, to the administrator unless told, from the store’s From', async () => {
    await connectMail(t, smtp.url('shop', 'p@ss word'));
    expect(await adminOk(t, 'POST', '/mail/test', {})).toEqual({ sent: true, to: ADMIN.email });
    expect(await adminOk(t, 'POST', '/mail/test', { to: 'owner@example.com' })).toEqual({
      sent: true,
      to: 'owner@example.com',
    });
    const [first, second] = smtp.received.slice(-2);
    expect(first).toMatchObject({ to: [ADMIN.email], from: 'shop@example.com', user: 'shop' });
    expect(first!.subject).toMatch(/test email/i);
    expect(second!.to).toEqual(['owner@example.com']);
    // Nothing queued: the outbox is for the store's own messages.
    expect(await adminOk<unknown[]>(t, 'GET', '/mail/messages')).toEqual([]);
  });

  it('answers the SMTP error: 502 mail_test_failed with its code and reply, the password never shown', async () => {
    smtp.refuseWith = 550;
    const refused = await admin(t, 'POST', '/mail/test', {});
    smtp.refuseWith = null;
    expectError(refused, 502, 'mail_test_failed');
    expect(refused.json().data.smtp_error).toMatch(/550/);
    await setSettings(t, { smtp_url: 'smtp://shop:s3cret-pw@127.0.0.1:1' });
    const unreachable = await admin(t, 'POST', '/mail/test', {});
    expectError(unreachable, 502, 'mail_test_failed');
    expect(unreachable.json().data.smtp_error).toMatch(/ECONNREFUSED/);
    expect(unreachable.body).not.toContain('s3cret-pw');
    expect(t.logs()).not.toContain('s3cret-pw');
  });

  it('bad input is a specific 4xx; a customer is refused', async () => {
    expectError(await admin(t, 'POST', '/mail/test', { to: 'not an address' }), 400, 'rest_invalid_param');
    expectError(
      await admin(t, 'POST', '/mail/test', { to: 'a@example.com', cc: 'b@example.com' }),
      400,
      'invalid_parameters',
    );
    expectError(await admin(t, 'POST', '/mail/test', { to: 42 }), 400, 'rest_invalid_param');
    expectError(
      await admin(t, 'POST', '/mail/test', { to: `${'a'.repeat(300)}@example.com` }),
      400,
      'rest_invalid_param',
    );
    const bad = await t.app.inject({
      method: 'POST',
      url: '/v1/mail/test',
      headers: { ...t.adminAuth, 'content-type': 'application/json' },
      payload: '{"to":',
    });
    expect(bad.statusCode).toBe(400);
    const customer = await createCustomer(t);
    expectError(
      await t.app.inject({ method: 'POST', url: '/v1/mail/test', headers: customer.headers, payload: {} }),
      403,
      'rest_forbidden',
    );
  });
});
