import { afterAll, describe, expect, it } from 'vitest';
import { makeZip } from '../helpers/factories.js';
import { type Smtp, startSmtp, waitForMail } from '../mail/helpers.js';
import { skipBrowserTests } from './chromium.js';
import {
  api,
  checkBothWidths,
  context,
  page,
  server,
  session,
  setUpConsole,
  signInInBrowser,
} from './console.js';

/**
 * A buyer is never locked out, and a product says what a license buys (docs/storefront.md), in a
 * real browser on the console's harness: a new buyer sets a password on the receipt and signs in
 * with it later; the sign-in link by email (a real SMTP server); the page that says email is not
 * available; the product page's sites, updates and requirements; and the console's one-form new
 * product (docs/admin.md). axe-core at 1280 and 390 px; SAVE_SCREENSHOTS=1 writes the pictures.
 */
describe.skipIf(skipBrowserTests)('buyers and software products in a real browser', () => {
  setUpConsole();
  let smtp: Smtp | undefined;
  afterAll(async () => smtp?.close());

  const buyer = { email: 'ada.buyer@example.com', password: 'ada-buyer-password-1' };
  let slug = '';

  it('the product page says what a license buys: sites, updates and requirements, dates in words', async () => {
    const product = await api<{ id: number; slug: string }>('POST', '/products', {
      name: 'Sites Kit',
      price: '29.00',
      short_description: 'Forms for busy sites.',
      activation_limit: 3,
      entitlement_policy: {
        usage: { mode: 'lifetime' },
        updates: { mode: 'days', days: 365 },
        support: { mode: 'days', days: 365 },
      },
    });
    expect(product.status).toBe(201);
    const id = product.body.id;
    expect((await api('POST', `/software/products/${id}/config`, { software_enabled: 'yes' })).status).toBe(
      200,
    );
    slug = product.body.slug;
    const form = new FormData();
    form.append('version', '2.4.0');
    form.append('file', new Blob([makeZip()]), 'sites-kit-2.4.0.zip');
    const upload = await fetch(`${server.url}/v1/software/products/${id}/versions`, {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-rest-nonce': session.nonce },
      body: form,
    });
    expect(upload.status).toBe(201);
    const release = (await upload.json()) as { version_id: number };
    const meta = await api('PUT', `/software/products/${id}/versions/${release.version_id}`, {
      requires: '6.3',
      requires_php: '7.4',
    });
    expect(meta.status).toBe(200);

    await page.goto(`${server.url}/products/${slug}`);
    await page.getByRole('heading', { level: 2, name: 'What a license includes' }).waitFor();
    const terms = page.locator('.license-terms');
    expect(await terms.locator('[data-term=sites]').textContent()).toBe('3 sites');
    expect(await terms.locator('[data-term=updates]').textContent()).toBe('1 year of updates and support');
    expect(await terms.locator('[data-term=requires]').textContent()).toBe(
      'WordPress 6.3 or later, PHP 7.4 or later',
    );
    expect(await terms.locator('[data-term=version]').textContent()).toMatch(
      /^2\.4\.0, released \d{1,2} [A-Z][a-z]+ \d{4}$/,
    );
    await checkBothWidths('product-license', 'store');
  }, 90_000);

  it('a new buyer pays with the test card, sets a password on the receipt, signs out and back in with it', async () => {
    expect((await api('PATCH', '/settings', { checkout_rate_limit: 1000 })).status).toBe(200);
    await page.goto(`${server.url}/products/${slug}`);
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${server.url}/cart`);
    await page.getByRole('link', { name: 'Proceed to checkout' }).click();
    await page.locator('#billing_first_name').waitFor();
    await page.fill('#billing_first_name', 'Ada');
    await page.fill('#billing_last_name', 'Buyer');
    await page.selectOption('#billing_country', 'GB');
    await page.fill('#billing_email', buyer.email);
    await page.getByLabel('Card (test gateway)').check();
    await page.fill('#card_number', '4242 4242 4242 4242');
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.waitForURL(/\/checkout\/order-received\/\d+\?key=/);
    await page.getByRole('heading', { level: 2, name: 'Set a password for your account' }).waitFor();
    await checkBothWidths('receipt-set-password', 'store');

    await page.fill('#new_password', buyer.password);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor();
    expect(await page.getByRole('status').first().textContent()).toContain('Your password is set');
    // Profile now asks for the current password to change it.
    await page.locator('#current_password').waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#email').waitFor();
    await page.fill('#email', buyer.email);
    await page.fill('#password', buyer.password);
    await page.locator('#password').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'My licenses' }).waitFor();
    expect(await page.locator('main').textContent()).toContain('Sites Kit');
    await context.clearCookies();
  }, 120_000);

  it('without a mail server, forgot password says email is not available and what to do', async () => {
    await page.goto(`${server.url}/account/sign-in`);
    expect(await page.getByRole('link', { name: 'Email me a sign-in link' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { level: 1, name: 'Email is not available' }).waitFor();
    expect(await page.locator('main').textContent()).not.toMatch(/check your email/i);
    await checkBothWidths('no-mail', 'store');
  }, 60_000);

  it('signs in with a one-time link from the email', async () => {
    smtp = await startSmtp();
    const mail = await api('PATCH', '/settings', { smtp_url: smtp.url(), mail_from: 'shop@example.com' });
    expect(mail.status).toBe(200);
    await page.goto(`${server.url}/account/sign-in`);
    await page.getByRole('link', { name: 'Email me a sign-in link' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in with a link' }).waitFor();
    await checkBothWidths('sign-in-link', 'store');
    await page.fill('#email', buyer.email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();
    const m = await waitForMail(smtp, buyer.email, /sign in/i, 30_000);
    const link = new URL(/https?:\/\/\S+\/account\/sign-in-link\/claim\?token=[0-9a-f]{64}/.exec(m.text)![0]);
    await page.goto(`${server.url}${link.pathname}${link.search}`);
    await page.getByRole('heading', { level: 1, name: 'My licenses' }).waitFor();
    expect(await page.locator('main').textContent()).toContain('Sites Kit');
    // Used once: the same link again signs nobody in.
    await context.clearCookies();
    await page.goto(`${server.url}${link.pathname}${link.search}`);
    await page
      .getByRole('heading', { level: 1, name: 'This sign-in link is invalid or has expired' })
      .waitFor();
  }, 90_000);

  it('the console creates a software product in one form, in plain words, and a taken download name shows at its field', async () => {
    await signInInBrowser('/admin/products/new');
    await page.getByRole('heading', { level: 1, name: 'New product' }).waitFor();
    const text = (await page.locator('main').textContent()) ?? '';
    for (const jargon of [/entitlement/i, /virtual/i, /licensing_enabled/i, /activation limit/i]) {
      expect(text).not.toMatch(jargon);
    }
    await page.getByLabel('Name', { exact: true }).fill('Gallery Pro');
    expect(await page.getByLabel('Download name').inputValue()).toBe('gallery-pro');
    await page.getByLabel('Price').fill('59.00');
    await page.getByLabel('Sites per license').fill('5');
    await page.getByLabel('Updates', { exact: true }).selectOption({ label: 'Lifetime updates' });
    await checkBothWidths('product-new-form');
    await page.getByRole('button', { name: 'Create product' }).click();
    await page.getByRole('heading', { level: 2, name: 'Software configuration' }).waitFor();
    const id = Number(/\/admin\/products\/(\d+)/.exec(page.url())?.[1]);
    const product = (await api<Record<string, unknown>>('GET', `/products/${id}`)).body;
    expect(product).toMatchObject({
      name: 'Gallery Pro',
      status: 'publish',
      activation_limit: 5,
      entitlement_policy: { usage: { mode: 'lifetime' }, updates: { mode: 'license' } },
    });
    expect((await api('GET', `/software/products/${id}/config`)).body).toMatchObject({
      slug: 'gallery-pro',
      software_enabled: 'yes',
      licensing_enabled: 'yes',
    });

    // A second product under the same download name: the failure is at the field, and the
    // product waits as a draft until the name is corrected.
    await page.goto(`${server.url}/admin/products/new`);
    await page.getByLabel('Name', { exact: true }).fill('Gallery Pro Agency');
    await page.getByLabel('Download name').fill('gallery-pro');
    await page.getByLabel('Price').fill('199.00');
    await page.getByLabel('Sites per license').fill('0');
    await page.getByRole('button', { name: 'Create product' }).click();
    const fieldError = page.locator('.field-error', { hasText: 'already uses this download name' });
    await fieldError.waitFor();
    expect(await page.getByLabel('Download name').getAttribute('aria-invalid')).toBe('true');
    await checkBothWidths('product-new-taken');
    const drafts = (
      await api<{ name: string; status: string }[]>('GET', '/products?per_page=100')
    ).body.filter((p) => p.name === 'Gallery Pro Agency');
    expect(drafts.map((p) => p.status)).toEqual(['draft']);
    await page.getByLabel('Download name').fill('gallery-pro-agency');
    await page.getByRole('button', { name: 'Create product' }).click();
    await page.getByRole('heading', { level: 2, name: 'Software configuration' }).waitFor();
    const all = (await api<{ name: string; status: string; slug: string }[]>('GET', '/products?per_page=100'))
      .body;
    expect(all.filter((p) => p.name === 'Gallery Pro Agency')).toEqual([
      expect.objectContaining({ status: 'publish', slug: 'gallery-pro-agency' }),
    ]);
  }, 120_000);
});
