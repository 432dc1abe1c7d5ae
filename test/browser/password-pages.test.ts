import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Smtp, startSmtp, waitForMail } from '../mail/helpers.js';
import { skipPageBrowserTests } from './chromium.js';
import {
  api,
  expectAccessible,
  expectNoSidewaysScroll,
  NARROW,
  page,
  server,
  setUpConsole,
  shot,
  WIDE,
} from './console.js';

/**
 * The customer's password pages (docs/email.md, 'Passwords') in a real browser: "Forgot your
 * password?" from the sign-in page, the emailed link (received by a real SMTP server), a refused
 * form shown with its code, the new password set and used to sign in; axe-clean and no wider
 * than the screen at 1280 and 390 px.
 */
describe.skipIf(skipPageBrowserTests)('forgot password and reset by emailed link in a real browser', () => {
  setUpConsole();
  let smtp: Smtp;
  const email = 'forgetful@example.com';
  beforeAll(async () => {
    smtp = await startSmtp();
  });
  afterAll(async () => smtp?.close());

  const checkScreen = async (name: string) => {
    await expectAccessible(`${name} at 1280 px`);
    await shot(`${name}-1280`, true, 'store');
    await page.setViewportSize(NARROW);
    await expectNoSidewaysScroll(`${name} at 390 px`);
    await expectAccessible(`${name} at 390 px`);
    await shot(`${name}-390`, true, 'store');
    await page.setViewportSize(WIDE);
  };

  it('from the sign-in page to a new password, and signed in with it', async () => {
    expect(
      (await api('POST', '/users', { email, password: 'old-password-1', role: 'customer' })).status,
    ).toBe(201);
    expect(
      (await api('PATCH', '/settings', { smtp_url: smtp.url(), mail_from: 'Shop <shop@example.com>' }))
        .status,
    ).toBe(200);
    await page.goto(`${server.url}/account/sign-in`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
    await checkScreen('account-forgot-password');
    await page.fill('#email', email);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();

    const mail = await waitForMail(smtp, email, /reset/i, 20_000);
    const link = new URL(/https?:\/\/\S+\/account\/reset-password\?token=[0-9a-f]{64}/.exec(mail.text)![0]);
    await page.goto(`${server.url}${link.pathname}${link.search}`);
    await page.getByRole('heading', { name: 'Choose a new password', level: 1 }).waitFor();
    await checkScreen('account-reset-password');
    await page.fill('#password', 'new-password-1');
    await page.fill('#confirm', 'not-the-same-1');
    await page.getByRole('button', { name: 'Choose a new password' }).click();
    expect(await page.locator('[role=alert][data-code]').getAttribute('data-code')).toBe('password_mismatch');
    await page.fill('#password', 'new-password-1');
    await page.fill('#confirm', 'new-password-1');
    await page.getByRole('button', { name: 'Choose a new password' }).click();
    await page.getByRole('heading', { name: 'Your password is set' }).waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.fill('#email', email);
    await page.fill('#password', 'new-password-1');
    await page.click('button[type=submit]');
    await page.getByRole('heading', { name: 'My licenses' }).waitFor();

    // The link works once.
    await page.goto(`${server.url}${link.pathname}${link.search}`);
    expect(await page.locator('[role=alert][data-code]').getAttribute('data-code')).toBe(
      'invalid_password_token',
    );
  }, 120_000);
});
