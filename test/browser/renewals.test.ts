import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Smtp, startSmtp, waitForMail } from '../mail/helpers.js';
import { skipBrowserTests } from './chromium.js';
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

const DAY = 86_400;
const term = { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 365 } };

/**
 * Renewals in a real browser (docs/selling.md, 'Renewals'): the buyer renews from the reminder
 * email's link, signed out and with the keyboard alone, at 1280 and 390 px, axe-core clean; the
 * console's renewal and trial fields save what is typed. SAVE_SCREENSHOTS=1 writes
 * docs/screenshots/store-renewal-*.png and admin-renewal-*.png.
 */
describe.skipIf(skipBrowserTests)('renewals in a real browser', () => {
  setUpConsole({ env: { TEST_CLOCK: '1' } });
  let smtp: Smtp;
  beforeAll(async () => {
    smtp = await startSmtp();
    const mail = await api('PATCH', '/settings', {
      smtp_url: smtp.url(),
      mail_from: 'Store <shop@example.com>',
    });
    expect(mail.status).toBe(200);
    const card = await api('PATCH', '/payment-gateways/test_card', { enabled: true });
    expect(card.status).toBe(200);
  });
  afterAll(() => smtp?.close());

  it('the reminder email’s link: renewed signed out with the keyboard; opened again, it says renewed', async () => {
    const product = await api<{ id: number }>('POST', '/products', {
      name: 'Forms Pro',
      price: '49.00',
      licensing_enabled: 'yes',
    });
    expect(product.status).toBe(201);
    const buyer = await api<{ id: number }>('POST', '/users', {
      email: 'renewing-buyer@example.com',
      password: 'buyer-password-1',
      role: 'customer',
    });
    expect(buyer.status, JSON.stringify(buyer.body)).toBe(201);
    const now = Date.parse((await api<{ now: string }>('GET', '/test-clock')).body.now);
    const ends = new Date(now + 10 * DAY * 1000).toISOString();
    const license = await api<{ id: number; license_key: string }>('POST', '/licenses', {
      product_id: product.body.id,
      user_id: buyer.body.id,
      entitlement_policy: term,
      usage_expires_at: ends,
    });
    expect(license.status).toBe(201);
    // 6 days before the end: the worker's scan sends the 7-day reminder.
    await api('POST', '/test-clock', { advance_seconds: 4 * DAY });
    const email = await waitForMail(
      smtp,
      'renewing-buyer@example.com',
      /Renew your Forms Pro license/,
      30_000,
    );
    const link = email.text.match(/http\S+\/renew\?token=\S+/)?.[0];
    expect(link).toBeTruthy();

    // A browser that never signed in: no cookies.
    await context.clearCookies();
    await page.goto(link!.replace(/^https?:\/\/[^/]+/, server.url));
    await page.getByRole('heading', { level: 1, name: /Pay for order #\d+/ }).waitFor();
    expect(await page.getByText('Renewal: Forms Pro').count()).toBeGreaterThan(0);
    const pay = page.getByRole('button', { name: /Pay .*49\.00/ });
    await expect.poll(() => pay.isVisible()).toBe(true);
    await checkBothWidths('renewal-pay', 'store');

    await page.goto(page.url());
    await pay.waitFor();
    await tabToSelector('input[name=payment_method][value=test_card]');
    await page.keyboard.press('Space');
    await tabToSelector('#card_number');
    await page.keyboard.type('4242424242424242');
    await tabToSelector('button[type=submit]');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Thank you. Your order is paid.' }).waitFor();
    await checkBothWidths('renewal-paid', 'store');
    const renewed = await api<{ expires_at?: string; usage_expires_at?: string }>(
      'GET',
      `/licenses/${license.body.id}`,
    );
    const end = renewed.body.usage_expires_at ?? renewed.body.expires_at;
    expect(Date.parse(String(end))).toBe(Date.parse(ends) + 365 * DAY * 1000);

    // The same link again: renewed, nothing to pay.
    await page.goto(link!.replace(/^https?:\/\/[^/]+/, server.url));
    await page.getByRole('heading', { level: 1, name: 'This license is already renewed' }).waitFor();
    expect(await page.locator('[data-state=renewed]').count()).toBe(1);
    await checkBothWidths('renewal-already', 'store');

    // An altered link: refused with its code.
    await page.goto(`${link!.replace(/^https?:\/\/[^/]+/, server.url).slice(0, -2)}xx`);
    await page.locator('[role=alert][data-code]').waitFor();
    expect(await alertCode()).toBe('invalid_renewal_link');
    await checkBothWidths('renewal-invalid', 'store');
  });

  it('Settings: the renewal discount and the reminder days; a refused day is shown on its field', async () => {
    await signInInBrowser('/admin/settings');
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const discount = page.getByLabel('Renewal discount (percent)');
    const days = page.getByLabel('Renewal reminder days');
    const save = () => page.getByRole('button', { name: 'Save settings' }).click();
    expect(await days.inputValue()).toBe('30, 7, 0, -7');
    expect(await discount.inputValue()).toBe('0');

    await days.fill('30, 7, soon');
    await save();
    await page.locator('[role=alert][data-code]').first().waitFor();
    expect(await alertCode()).toBe('rest_invalid_param');
    expect(await days.getAttribute('aria-invalid')).toBe('true');

    await days.fill('14 3 -2');
    await discount.fill('20');
    await save();
    await page.getByText('The settings are saved.').waitFor();
    const saved = (
      await api<{ renewal_reminder_days: number[]; renewal_discount_percent: number }>('GET', '/settings')
    ).body;
    expect(saved).toMatchObject({ renewal_reminder_days: [14, 3, -2], renewal_discount_percent: 20 });
    await page.reload();
    await page.getByLabel('Renewal reminder days').waitFor();
    expect(await days.inputValue()).toBe('14, 3, -2');
    await page.getByLabel('Renewal discount (percent)').scrollIntoViewIfNeeded();
    await checkBothWidths('settings-renewals');
  });

  it('a product’s trial length and sites: on the new product form and the software form', async () => {
    await page.goto(`${server.url}/admin/products/new`);
    await page.getByLabel('Name', { exact: true }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Trial Gallery');
    await page.getByLabel('Price').fill('29.00');
    await page.getByLabel('Trial length (days)').fill('14');
    await page.getByLabel('Trial sites').fill('2');
    await checkBothWidths('product-new-trial');
    await page.getByRole('button', { name: 'Create product' }).click();
    await page.waitForURL(/\/admin\/products\/\d+\?created=1/);
    const id = Number(/products\/(\d+)/.exec(page.url())![1]);
    const created = (await api<{ trial_days: number | null; trial_sites: number }>('GET', `/products/${id}`))
      .body;
    expect(created).toMatchObject({ trial_days: 14, trial_sites: 2 });

    const form = page.getByRole('form', { name: 'Software configuration' });
    const trialDays = form.getByLabel('Trial length (days)');
    await trialDays.waitFor();
    expect(await trialDays.inputValue()).toBe('14');
    await trialDays.fill('400');
    await form.getByRole('button', { name: 'Save software configuration' }).click();
    await form.getByText(/From 1 to 365 days/).waitFor();
    expect(await trialDays.getAttribute('aria-invalid')).toBe('true');
    await trialDays.fill('');
    await form.getByLabel('Trial sites').fill('3');
    await form.getByRole('button', { name: 'Save software configuration' }).click();
    await form.getByText('The software configuration is saved.').waitFor();
    const saved = (await api<{ trial_days: number | null; trial_sites: number }>('GET', `/products/${id}`))
      .body;
    expect(saved).toMatchObject({ trial_days: null, trial_sites: 3 });
    await form.scrollIntoViewIfNeeded();
    await checkBothWidths('product-trial');
  });
});
