import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { skipBrowserTests } from './chromium.js';
import {
  alertCode,
  api,
  expectAccessible,
  expectNoSidewaysScroll,
  NARROW,
  page,
  server,
  setUpConsole,
  shot,
  signInInBrowser,
  WIDE,
} from './console.js';

/**
 * The console's Mail screen (docs/email.md, 'The outbox') in a real browser: with no mail server
 * connected the messages wait and are listed with their status and attempts; Resend by keyboard;
 * a refused filter shown with its code; accessible and no wider than the screen at 1280 and 390 px.
 */
describe.skipIf(skipBrowserTests)("the console's Mail screen in a real browser", () => {
  setUpConsole();

  it('seeds waiting messages: two forgot-password requests while smtp_url is empty', async () => {
    for (const email of [
      'mail.reader@example.com',
      'a.very.long.address.for.the.narrow.screen@example.com',
    ]) {
      expect(
        (await api('POST', '/users', { email, password: 'reader-password-1', role: 'customer' })).status,
      ).toBe(201);
      const res = await fetch(`${server.url}/v1/auth/password/forgot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email }),
      });
      expect(res.status).toBe(202);
    }
  });

  it('lists the messages, resends one by keyboard, and is accessible at 1280 and 390 px', async () => {
    await signInInBrowser('/admin/mail');
    await page.getByRole('heading', { name: 'Mail', level: 1 }).waitFor();
    await waitFor(async () => (await page.locator('tbody tr').count()) === 2, 'the two messages');
    await expect(page.getByText('No mail server is connected').count()).resolves.toBe(1);
    await expectAccessible('the Mail screen');
    await shot('mail-1280');
    const resend = page.getByRole('button', { name: /Resend .*mail\.reader@example\.com/ });
    await resend.focus();
    await page.keyboard.press('Enter');
    await page.locator('[role=status].note.ok').waitFor();
    await page.setViewportSize(NARROW);
    await expectNoSidewaysScroll('the Mail screen at 390 px');
    await expectAccessible('the Mail screen at 390 px');
    await shot('mail-390');
    await page.setViewportSize(WIDE);
  });

  it('shows a refused filter in words with its code', async () => {
    await page.goto(`${server.url}/admin/mail?status=lost`);
    await page.locator('[role=alert][data-code]').first().waitFor();
    expect(await alertCode()).toBe('rest_invalid_param');
  });
});
