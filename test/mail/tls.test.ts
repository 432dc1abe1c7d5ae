import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { createCustomer, uniqueEmail } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import { type MailMessage, type Smtp, startSmtp, waitForMail } from './helpers.js';

/**
 * smtps:// (docs/email.md, 'Connecting a mail server'): TLS from the first byte. A server whose
 * certificate does not verify is refused (the attempt fails and is retried), unless the URL says
 * `tls.rejectUnauthorized=false`.
 */
const OPENSSL = '/usr/bin/openssl';
let t: TestApp;
let smtp: Smtp;
beforeAll(async () => {
  if (!existsSync(OPENSSL)) return;
  // A self-signed certificate of the test's own: it does not verify, as a private server's may not.
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-smtps-'));
  execFileSync(
    OPENSSL,
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const key = readFileSync(join(dir, 'key.pem'));
  const cert = readFileSync(join(dir, 'cert.pem'));
  rmSync(dir, { recursive: true, force: true });
  smtp = await startSmtp(undefined, { secure: true, key, cert });
  t = await createTestApp();
  t.app.services.mailWorker.start();
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const forgot = (email: string) =>
  t.app.inject({ method: 'POST', url: '/v1/auth/password/forgot', payload: { email } });

// The certificate is made with openssl; a machine without it skips this file.
describe.skipIf(!existsSync(OPENSSL))('smtps://', () => {
  it('refuses a certificate that does not verify, and sends when the URL allows it', async () => {
    await setSettings(t, { smtp_url: smtp.url(), mail_from: 'Shop <shop@example.com>' });
    const refused = uniqueEmail('tls-refused');
    await createCustomer(t, refused);
    await forgot(refused);
    const failed = await waitFor(
      async () => {
        const all = await adminOk<MailMessage[]>(t, 'GET', '/mail/messages');
        const m = all.find((x) => x.recipient === refused);
        return m && m.attempts === 1 && m;
      },
      'the refused attempt',
      { timeoutMs: 20_000 },
    );
    expect(failed.status).toBe('pending');
    expect(failed.last_error).toBeTruthy();
    expect(smtp.received).toHaveLength(0);

    await setSettings(t, { smtp_url: `${smtp.url()}?tls.rejectUnauthorized=false` });
    const email = uniqueEmail('tls');
    await createCustomer(t, email);
    await forgot(email);
    const m = await waitForMail(smtp, email, /reset/i);
    expect(m.text).toContain('/account/reset-password?token=');
  });
});
