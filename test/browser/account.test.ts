import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/random.js';
import { makeZip } from '../helpers/factories.js';
import { skipBrowserTests } from './chromium.js';
import {
  api,
  checkBothWidths as checkStoreWidths,
  context,
  page,
  server,
  session,
  setUpConsole,
} from './console.js';

/**
 * The customer's account pages (docs/storefront.md, 'Your account') in a real browser, on the
 * console's harness: Subscriptions (with a renewal order to pay, and Cancel), Profile (a wrong
 * current password, then a change) and Downloads (a file received by the browser), axe-core at 1280 and 390 px, nothing wider than 390 px.
 * SAVE_SCREENSHOTS=1 writes docs/screenshots/store-account-*.png.
 */
const checkBothWidths = (name: string) => checkStoreWidths(name, 'store');

const CUSTOMER = { email: 'ada.account@example.com', password: 'ada-password-1' };
let customerId = 0;

/** A protected product distributing one uploaded release (multipart, as a script or CI would). */
async function softwareWithRelease(name: string, slug: string, version: string, zip: Buffer) {
  const product = await api<{ id: number }>('POST', '/products', { name, price: '29.00' });
  expect(product.status).toBe(201);
  const id = product.body.id;
  expect(
    (await api('POST', `/software/products/${id}/config`, { slug, software_enabled: 'yes' })).status,
  ).toBe(200);
  const form = new FormData();
  form.append('version', version);
  form.append('file', new Blob([zip], { type: 'application/zip' }), `${slug}.zip`);
  const res = await fetch(`${server.url}/v1/software/products/${id}/versions`, {
    method: 'POST',
    headers: { cookie: session.cookie, 'x-rest-nonce': session.nonce },
    body: form,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return id;
}

describe.skipIf(skipBrowserTests)('the customer’s account pages in a real browser', () => {
  setUpConsole();

  it('Subscriptions: the renewal order to pay, and Cancel', async () => {
    await api('PATCH', '/settings', { store_name: 'Northwind Plugins', store_accent_color: '#0f766e' });
    const customer = await api<{ id: number }>('POST', '/users', {
      ...CUSTOMER,
      role: 'customer',
      first_name: 'Ada',
      last_name: 'Lovelace',
    });
    expect(customer.status).toBe(201);
    customerId = customer.body.id;
    const subscribe = async (name: string) => {
      const product = await api<{ id: number }>('POST', '/products', {
        name,
        type: 'subscription',
        price: '12.00',
        subscription: { period: 'month', interval: 1 },
      });
      expect(product.status).toBe(201);
      const sub = await api<{ id: number }>('POST', '/subscriptions', {
        user_id: customer.body.id,
        product_id: product.body.id,
      });
      expect(sub.status).toBe(201);
      return sub.body.id;
    };
    const cloud = await subscribe('Cloud Sync');
    await subscribe('Backup Buddy with a rather long name that must wrap');
    const order = await api<{ id: number }>('POST', `/subscriptions/${cloud}/renewal-orders`);
    expect(order.status).toBe(201);

    await context.clearCookies();
    await page.goto(`${server.url}/account/subscriptions`);
    await page.locator('#email').waitFor();
    await page.fill('#email', CUSTOMER.email);
    await page.fill('#password', CUSTOMER.password);
    await page.locator('#password').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Subscriptions' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Your account' });
    expect(await nav.getByRole('link', { name: 'Subscriptions' }).getAttribute('aria-current')).toBe('page');
    expect(
      await page.getByRole('link', { name: `Pay renewal order #${order.body.id}` }).getAttribute('href'),
    ).toMatch(new RegExp(`^/checkout/pay/${order.body.id}\\?key=`));
    await checkBothWidths('account-subscriptions');

    await page.getByRole('button', { name: `Cancel subscription #${cloud}` }).click();
    await page.getByRole('status').waitFor();
    expect(await page.getByRole('status').textContent()).toContain('will not renew');
    // The list is read again after the notice: wait for the button to go, not count at once.
    await page.getByRole('button', { name: `Cancel subscription #${cloud}` }).waitFor({ state: 'detached' });
  });

  it('Profile: a wrong current password is refused with its code, then the password changes', async () => {
    await page
      .getByRole('navigation', { name: 'Your account' })
      .getByRole('link', { name: 'Profile' })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor();
    expect(await page.inputValue('#first_name')).toBe('Ada');
    await checkBothWidths('account-profile');

    await page.fill('#current_password', 'not-my-password');
    await page.fill('#new_password', 'a-new-password-1');
    await page.getByRole('button', { name: 'Change password' }).click();
    const alert = page.locator('[role=alert][data-code]');
    await alert.waitFor();
    expect(await alert.getAttribute('data-code')).toBe('incorrect_current_password');
    await checkBothWidths('account-profile-refused');

    await page.fill('#current_password', CUSTOMER.password);
    await page.fill('#new_password', 'a-new-password-1');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').waitFor();
    expect(await page.getByRole('status').textContent()).toContain('password was changed');
  });

  it('Downloads: a row per license, the reason in words, and Download hands the browser the file', async () => {
    const zip = makeZip(40_000);
    const forms = await softwareWithRelease('Forms Pro', 'forms-pro', '2.1.0', zip);
    const seo = await softwareWithRelease(
      'SEO Toolkit with a rather long name that must wrap',
      'seo-kit',
      '1.4.0',
      makeZip(9000),
    );
    expect((await api('POST', '/licenses', { product_id: forms, user_id: customerId })).status).toBe(201);
    expect(
      (
        await api('POST', '/licenses', {
          product_id: seo,
          user_id: customerId,
          usage_expires_at: '2026-01-01T00:00:00Z',
        })
      ).status,
    ).toBe(201);

    await page
      .getByRole('navigation', { name: 'Your account' })
      .getByRole('link', { name: 'Downloads' })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Downloads' }).waitFor();
    expect(await page.locator('[data-code="expired"]').count()).toBe(1);
    await checkBothWidths('account-downloads');

    const button = page.getByRole('button', { name: 'Download Forms Pro 2.1.0' });
    // By keyboard: the button takes the focus and Enter submits its form.
    await button.focus();
    const [received] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    expect(received.suggestedFilename()).toMatch(/\.zip$/);
    const path = await received.path();
    expect(sha256(readFileSync(path))).toBe(sha256(zip));
    // The page stays as it was: the bearer URL is never shown.
    expect(await page.content()).not.toContain('token=');
  });
});
