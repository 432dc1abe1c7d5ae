import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Smtp, startSmtp, waitForMail } from '../mail/helpers.js';
import { skipPageBrowserTests } from './chromium.js';
import {
  alertCode,
  api,
  checkBothWidths,
  context,
  page,
  server,
  setUpConsole,
  signInInBrowser,
  tabToSelector,
} from './console.js';

/**
 * A license transfer in a real browser, by keyboard only (docs/selling.md, 'Transfers'): the
 * customer sends it from My licenses, the receiver (who has no account yet) opens the emailed link
 * (received by a real SMTP server), accepts, and lands signed in on their own My licenses with the
 * license; axe-clean and no wider than the screen at 1280 and 390 px.
 * SAVE_SCREENSHOTS=1 writes docs/screenshots/store-account-transfer-*.png.
 */
describe.skipIf(skipPageBrowserTests)(
  'a license transfer sent from My licenses and accepted by the link',
  () => {
    setUpConsole();
    let smtp: Smtp;
    const sender = { email: 'grace.sender@example.com', password: 'grace-password-1' };
    const receiver = 'linus.receiver@example.com';
    beforeAll(async () => {
      smtp = await startSmtp();
    });
    afterAll(async () => smtp?.close());

    it('sends, shows the pending transfer, and the receiver accepts and is signed in with the license', async () => {
      expect(
        (await api('PATCH', '/settings', { smtp_url: smtp.url(), store_name: 'Northwind Plugins' })).status,
      ).toBe(200);
      const user = await api<{ id: number }>('POST', '/users', { ...sender, role: 'customer' });
      expect(user.status).toBe(201);
      const product = await api<{ id: number }>('POST', '/products', { name: 'Sitemap Pro', price: '39.00' });
      const license = await api<{ id: number; license_key: string }>('POST', '/licenses', {
        product_id: product.body.id,
        user_id: user.body.id,
        activation_limit: 2,
      });
      expect(license.status).toBe(201);
      const activated = await fetch(`${server.url}/v1/licenses/activate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          license_key: license.body.license_key,
          domain: 'grace.example',
          installation_id: '7d0c1c3e-3b8a-4d43-9d0e-6f1f5b1a2c3d',
        }),
      });
      expect(activated.status).toBe(200);

      // The sender signs in and opens the transfer form, by keyboard.
      await page.goto(`${server.url}/account/sign-in`);
      await tabToSelector('#email');
      await page.keyboard.type(sender.email);
      await tabToSelector('#password');
      await page.keyboard.type(sender.password);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'My licenses' }).waitFor();
      await tabToSelector('details.transfer summary');
      await page.keyboard.press('Enter');
      await tabToSelector('input[name=email][type=email]');
      await page.keyboard.type(receiver);
      await tabToSelector('input[name=keep_activations]');
      await page.keyboard.press('Space');
      expect(await page.isChecked('input[name=keep_activations]')).toBe(false);
      await checkBothWidths('account-transfer-form', 'store');
      await tabToSelector('details.transfer button[type=submit]');
      await page.keyboard.press('Enter');
      await page.getByRole('status').filter({ hasText: 'The transfer was sent' }).waitFor();
      await page.getByText(`Transfer to ${receiver} pending until`).waitFor();
      await checkBothWidths('account-transfer-pending', 'store');

      // The receiver, signed out in this browser, opens the emailed link.
      const mail = await waitForMail(smtp, receiver, /Sitemap Pro/, 20_000);
      const link = new URL(
        /https?:\/\/\S+\/account\/transfers\/accept\?token=[0-9a-f]{64}/.exec(mail.text)![0],
      );
      await context.clearCookies();
      await page.goto(`${server.url}${link.pathname}${link.search}`);
      await page.getByRole('heading', { name: 'Accept a Sitemap Pro license' }).waitFor();
      await checkBothWidths('account-transfer-accept', 'store');
      await tabToSelector('button[type=submit].primary');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'My licenses' }).waitFor();
      await page.getByRole('status').filter({ hasText: 'transferred to this account' }).waitFor();
      expect(await page.getByText(license.body.license_key).count()).toBe(1);
      expect(await page.getByText(`Signed in as ${receiver}`).count()).toBe(1);
      // The sender chose not to keep the sites: the license arrives with none active.
      expect(await page.locator('tbody .badge', { hasText: /^Active$/ }).count()).toBe(0);
      await checkBothWidths('account-transfer-accepted', 'store');

      // The link works once.
      await page.goto(`${server.url}${link.pathname}${link.search}`);
      expect(await alertCode()).toBe('transfer_already_accepted');
    }, 180_000);

    it('the console: Transfer on the license screen sends one, and Cancel takes it back', async () => {
      const owner = await api<{ id: number }>('POST', '/users', {
        email: 'ada.console@example.com',
        password: 'ada-password-1',
        role: 'customer',
      });
      const product = await api<{ id: number }>('POST', '/products', { name: 'Forms Pro', price: '19.00' });
      const license = await api<{ id: number }>('POST', '/licenses', {
        product_id: product.body.id,
        user_id: owner.body.id,
      });
      expect(license.status).toBe(201);
      await context.clearCookies();
      await signInInBrowser(`/admin/licenses/${license.body.id}`);
      await page.getByRole('heading', { name: 'Transfers' }).waitFor();
      await page.getByRole('button', { name: 'Transfer', exact: true }).focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Transfer this license' });
      await dialog.waitFor();
      await page.keyboard.type('new.owner@example.com');
      await checkBothWidths('license-transfer-dialog');
      await dialog.getByRole('button', { name: 'Send transfer' }).focus();
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'hidden' });
      const row = page.getByRole('region', { name: 'Transfers' }).locator('tbody tr').first();
      await row.filter({ hasText: 'new.owner@example.com' }).waitFor();
      expect(await row.locator('.badge-pending').count()).toBe(1);
      await checkBothWidths('license-transfers');
      await row.getByRole('button', { name: /^Cancel/ }).focus();
      await page.keyboard.press('Enter');
      const confirm = page.getByRole('dialog', { name: 'Cancel the transfer to new.owner@example.com?' });
      await confirm.getByRole('button', { name: 'Cancel transfer' }).focus();
      await page.keyboard.press('Enter');
      await row.locator('.badge-cancelled').waitFor();
      const listed = await api<{ status: string }[]>('GET', `/licenses/${license.body.id}/transfers`);
      expect(listed.body.map((t) => t.status)).toEqual(['cancelled']);
    }, 180_000);
  },
);
