import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { type Smtp, startSmtp, waitForMail } from '../mail/helpers.js';
import { skipBrowserTests } from './chromium.js';
import {
  api,
  checkBothWidths as checkStoreWidths,
  shot as consoleShot,
  context,
  enableOfflineGateways,
  expectAccessible,
  expectNoSidewaysScroll,
  NARROW,
  page,
  server,
  session,
  setUpConsole,
  WIDE,
} from './console.js';

/**
 * The storefront's pages (docs/storefront.md) in a real browser, on the console's harness
 * (test/browser/console.ts: one server, one chromium): the catalogue and a product page, branded
 * with a logo, an accent colour and a terms link; axe-core at 1280 and 390 px, nothing wider than
 * the screen, reachable by keyboard. SAVE_SCREENSHOTS=1 writes docs/screenshots/store-*.png.
 */
const shot = (name: string) => consoleShot(name, true, 'store');

/** A picture to upload: a coloured gradient-ish card (a real PNG, as a store owner's screenshot). */
async function picture(width: number, height: number, rgb: [number, number, number], label: string) {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="100%" height="100%" fill="rgb(${rgb.join(',')})"/>
    <rect x="8%" y="12%" width="84%" height="76%" rx="24" fill="#ffffff" fill-opacity="0.88"/>
    <text x="50%" y="56%" font-family="sans-serif" font-size="${Math.round(height / 7)}" text-anchor="middle"
      fill="rgb(${rgb.join(',')})">${label}</text></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

async function upload(path: string, bytes: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'image/png' }), 'picture.png');
  const res = await fetch(`${server.url}/v1${path}`, {
    method: 'POST',
    headers: { cookie: session.cookie, 'x-rest-nonce': session.nonce },
    body: form,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

const checkBothWidths = (name: string) => checkStoreWidths(name, 'store');

describe.skipIf(skipBrowserTests)('the storefront in a real browser', () => {
  setUpConsole();
  let smtp: Smtp | undefined;
  afterAll(async () => smtp?.close());

  it('a visitor browses the branded catalogue and opens a product page by keyboard', async () => {
    // Bank transfer and cheque on (with instructions), as the checkout here offers them; a new store starts without.
    await enableOfflineGateways();
    const settings = await api('PATCH', '/settings', {
      store_name: 'Northwind Plugins',
      store_accent_color: '#0f766e',
      store_terms_url: 'https://example.com/terms',
      currencies: [
        { code: 'EUR', symbol: '€', decimals: 2, rate: '0.92', rate_updated_at: new Date().toISOString() },
      ],
    });
    expect(settings.status).toBe(200);
    await upload('/settings/logo', await picture(480, 120, [15, 118, 110], 'Northwind'));

    const forms = await api<{ id: number; slug: string }>('POST', '/products', {
      name: 'Forms Pro',
      type: 'variable',
      short_description: 'Drag-and-drop forms for WordPress sites, with spam protection built in.',
      description:
        'Build contact forms, surveys and payment forms in minutes.\n\nEvery licence includes a year of updates and support.',
      licensing_enabled: 'yes',
      variations: [
        { name: 'Single site', price: '49.00', attributes: { Sites: '1' } },
        { name: 'Five sites', price: '99.00', attributes: { Sites: '5' } },
        { name: 'Agency', price: '249.00', attributes: { Sites: 'Unlimited' } },
      ],
    });
    expect(forms.status).toBe(201);
    await upload(`/products/${forms.body.id}/image`, await picture(1600, 1200, [37, 99, 235], 'Forms Pro'));
    const seo = await api<{ id: number }>('POST', '/products', {
      name: 'SEO Toolkit',
      price: '29.00',
      short_description: 'Sitemaps, meta tags and redirects.',
      subscription: { period: 'year', interval: 1 },
      type: 'subscription',
    });
    expect(seo.status).toBe(201);
    await upload(`/products/${seo.body.id}/image`, await picture(1600, 1200, [190, 24, 93], 'SEO'));
    await api('POST', '/products', {
      name: 'Backup Buddy with a rather long name that must wrap',
      price: '19.00',
    });

    await page.goto(`${server.url}/`);
    await page.getByRole('heading', { level: 1, name: 'Products' }).waitFor();
    expect(await page.locator('.store-brand').textContent()).toContain('Northwind Plugins');
    expect(await page.getByRole('link', { name: 'Terms and conditions' }).getAttribute('href')).toBe(
      'https://example.com/terms',
    );
    await checkBothWidths('catalogue');

    // Keyboard: Tab from the top of the page reaches the product's link; Enter opens its page.
    await page.goto(`${server.url}/`);
    let focused = '';
    for (let i = 0; i < 12 && focused !== 'Forms Pro'; i++) {
      await page.keyboard.press('Tab');
      focused = (await page.evaluate(
        'document.activeElement && document.activeElement.textContent',
      )) as string;
    }
    expect(focused).toBe('Forms Pro');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${server.url}/products/${forms.body.slug}`);
    await page.getByRole('heading', { level: 1, name: 'Forms Pro' }).waitFor();
    expect(await page.locator('.choices').textContent()).toContain('Five sites');
    expect(await page.locator('.choices').textContent()).toContain('EUR €91.08');
    await checkBothWidths('product');

    await page.goto(`${server.url}/products/no-such-product`);
    await page.getByRole('heading', { level: 1, name: 'Product not found' }).waitFor();
    await expectAccessible('product not found');

    // The account pages share the store's header (logo, name, Products, My licenses).
    await page.getByRole('link', { name: 'My licenses' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await page.locator('.store-brand').textContent()).toContain('Northwind Plugins');
    await checkBothWidths('sign-in');
  }, 120_000);

  /** The licenses the API lists for an order (the administrator's list, filtered here). */
  async function licensesOf(orderId: number) {
    const res = await api<{ licenses: { license_key: string; order_id: number }[] }>(
      'GET',
      '/licenses?per_page=100',
    );
    return res.body.licenses.filter((l) => l.order_id === orderId).map((l) => l.license_key);
  }
  const alert = () => page.locator('#store-alert[data-code]');
  /** The order id and key of the receipt page the browser is on. */
  function receiptAddress() {
    const url = new URL(page.url());
    const id = Number(url.pathname.split('/').pop());
    return { id, key: url.searchParams.get('key')! };
  }
  async function fillBilling(email: string) {
    await page.locator('#billing_first_name').waitFor();
    await page.fill('#billing_first_name', 'Grace');
    await page.fill('#billing_last_name', 'Hopper');
    await page.selectOption('#billing_country', 'GB');
    await page.fill('#billing_email', email);
  }

  it('a guest buys a variation, reads the key on the receipt and in the emailed receipt, sets a password from the email and finds the license under My licenses', async () => {
    // A new buyer: checkout creates their account (auto_registration) and the store emails the
    // receipt and a "set your password" link, received here by a real SMTP server.
    const buyer = { email: 'grace@example.com', password: 'grace-password-1' };
    smtp = await startSmtp();
    expect(
      (
        await api('PATCH', '/settings', {
          checkout_rate_limit: 1000,
          smtp_url: smtp.url(),
          mail_from: 'shop@example.com',
        })
      ).status,
    ).toBe(200);

    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'Forms Pro' }).click();
    await page.getByRole('heading', { level: 1, name: 'Forms Pro' }).waitFor();
    await page.getByRole('radio', { name: /^Five sites/ }).check();
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${server.url}/cart`);
    await page.locator('#cart-total').waitFor();
    expect(await page.locator('#cart-view').textContent()).toContain('Forms Pro - Five sites');
    expect(await page.locator('#cart-total').textContent()).toContain('$99.00');
    // Quantity: 2, then back to 1 (keyboard: the Update button is reached and pressed by keys).
    await page.locator('input.qty').fill('2');
    await page.locator('input.qty').press('Tab');
    await page.keyboard.press('Enter');
    await page.locator('#cart-total', { hasText: '$198.00' }).waitFor();
    await page.locator('input.qty').fill('1');
    await page.getByRole('button', { name: 'Update' }).click();
    await page.locator('#cart-total', { hasText: '$99.00' }).waitFor();
    await checkBothWidths('cart');

    await page.getByRole('link', { name: 'Proceed to checkout' }).click();
    await page.waitForURL(`${server.url}/checkout`);
    await page.locator('#billing_first_name').waitFor();
    // A missing required field is refused in the browser, with its code, next to the field.
    await page.getByRole('button', { name: 'Place order' }).click();
    expect(await alert().getAttribute('data-code')).toBe('required');
    expect(await page.locator('#billing_first_name-error').getAttribute('data-code')).toBe('required');
    expect(await page.locator('#billing_first_name').getAttribute('aria-invalid')).toBe('true');
    await fillBilling(buyer.email);
    // Corrected fields lose their errors, and the alert goes with the last one.
    expect(await page.locator('[aria-invalid=true]').count()).toBe(0);
    expect(await page.locator('#store-alert').isHidden()).toBe(true);
    await page.getByLabel('Card (test gateway)').check();
    await page.fill('#card_number', '4242 4242 4242 4242');
    await checkBothWidths('checkout');
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.waitForURL(/\/checkout\/order-received\/\d+\?key=/);
    await page.locator('.license-key').waitFor();
    const { id } = receiptAddress();
    const keys = await licensesOf(id);
    expect(keys).toHaveLength(1);
    expect(await page.locator('.license-key').textContent()).toBe(keys[0]);
    expect(await page.locator('.receipt').textContent()).toContain('$99.00');
    await checkBothWidths('receipt');

    // The emailed receipt carries the same key; the welcome email, a link to set a password.
    const receipt = await waitForMail(smtp, buyer.email, /order #\d+/i, 30_000);
    expect(receipt.text).toContain(keys[0]!);
    expect(receipt.html).toContain(keys[0]!);
    const welcome = await waitForMail(smtp, buyer.email, /account/i, 30_000);
    const link = new URL(
      /https?:\/\/\S+\/account\/reset-password\?token=[0-9a-f]{64}/.exec(welcome.text)![0],
    );
    await context.clearCookies();
    await page.goto(`${server.url}${link.pathname}${link.search}`);
    await page.getByRole('heading', { level: 1, name: 'Set your password' }).waitFor();
    await page.fill('#password', buyer.password);
    await page.fill('#confirm', buyer.password);
    await page.getByRole('button', { name: /password/i }).click();
    await page.getByRole('heading', { name: 'Your password is set' }).waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.locator('#email').waitFor();
    await page.fill('#email', buyer.email);
    await page.fill('#password', buyer.password);
    await page.locator('#password').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'My licenses' }).waitFor();
    expect(await page.locator('main').textContent()).toContain(keys[0]!);
    // My orders: the order, and its page with the key.
    await page.goto(`${server.url}/account/orders`);
    await page.getByRole('link', { name: `#${id}` }).click();
    await page.getByRole('heading', { level: 1, name: `Order #${id}` }).waitFor();
    expect(await page.locator('.license-key').textContent()).toBe(keys[0]);
    await checkBothWidths('account-order');
    await context.clearCookies();
  }, 120_000);

  it('a shipped product: the address brings the zone’s rates, and bank transfer puts the order on hold', async () => {
    expect(
      (
        await api('POST', '/shipping-zones', {
          name: 'Germany',
          regions: [{ country: 'DE' }],
          methods: [{ method_id: 'flat_rate', title: 'Flat', cost: '5.00' }],
        })
      ).status,
    ).toBe(201);
    const boxed = await api<{ slug: string }>('POST', '/products', {
      name: 'Boxed Edition',
      price: '40.00',
      virtual: false,
    });
    expect(boxed.status).toBe(201);
    // A refused add stays on the product page with its code in the alert.
    const gone = await api<{ slug: string }>('POST', '/products', {
      name: 'Sold Out Kit',
      price: '9.00',
      stock_quantity: 0,
    });
    expect(gone.status).toBe(201);
    await context.clearCookies();
    await page.goto(`${server.url}/products/${gone.body.slug}`);
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await alert().waitFor();
    expect(await alert().getAttribute('data-code')).toBe('add_to_cart_failed');
    expect(page.url()).toBe(`${server.url}/products/${gone.body.slug}`);
    await page.goto(`${server.url}/products/${boxed.body.slug}`);
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${server.url}/cart`);
    await page.getByRole('link', { name: 'Proceed to checkout' }).click();
    await page.locator('#shipping_first_name').waitFor();
    await fillBilling('boxes@example.com');
    await page.selectOption('#billing_country', 'DE');
    await page.fill('#billing_address_1', '1 Unter den Linden');
    await page.fill('#billing_city', 'Berlin');
    await page.fill('#billing_postcode', '10117');
    await page.fill('#shipping_first_name', 'Grace');
    await page.fill('#shipping_last_name', 'Hopper');
    await page.fill('#shipping_address_1', '1 Unter den Linden');
    await page.fill('#shipping_city', 'Berlin');
    await page.fill('#shipping_postcode', '10117');
    await page.selectOption('#shipping_country', 'DE');
    await page.getByLabel('Flat – $5.00').waitFor();
    const instructions = 'Pay to Northwind Ltd\nIBAN DE89 3704 0044 0532 0130 00\nBIC COBADEFFXXX';
    expect((await api('PATCH', '/payment-gateways/bacs', { instructions })).status).toBe(200);
    await page.getByLabel('Direct bank transfer').check();
    await page.getByRole('button', { name: 'Place order' }).click();
    await page.waitForURL(/\/checkout\/order-received\/\d+\?key=/);
    expect(await page.locator('[data-status]').getAttribute('data-status')).toBe('on-hold');
    expect(await page.locator('.receipt').textContent()).toContain('$45.00');
    // How to pay: the owner's instructions, line by line, with the order as the reference.
    expect(await page.locator('.how-to-pay .instructions').textContent()).toBe(instructions);
    await page.setViewportSize(NARROW);
    await expectNoSidewaysScroll('the receipt of an order on hold at 390 px');
    await expectAccessible('the receipt of an order on hold');
    await shot('receipt-on-hold-390');
    await page.setViewportSize(WIDE);
  }, 120_000);

  it('in a second currency with a coupon; a declined card shows its code and the order is paid from its pay page', async () => {
    expect(
      (await api('POST', '/coupons', { code: 'SPRING10', discount_type: 'percent', amount: '10' })).status,
    ).toBe(201);
    await context.clearCookies();
    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'Forms Pro' }).click();
    await page.getByRole('radio', { name: /^Single site/ }).check();
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${server.url}/cart`);
    await page.locator('#cart-total').waitFor();
    await page.selectOption('#currency', 'EUR');
    await page.locator('#cart-total', { hasText: '€' }).waitFor();
    // A refused coupon: its code in the alert; then the real one.
    await page.fill('#coupon_code', 'NOPE');
    await page.getByRole('button', { name: 'Apply coupon' }).click();
    await alert().waitFor();
    expect(await alert().getAttribute('data-code')).toBe('coupon_failed');
    await page.fill('#coupon_code', 'spring10');
    await page.getByRole('button', { name: 'Apply coupon' }).click();
    await page.getByRole('button', { name: 'Remove coupon spring10' }).waitFor();
    // 49.00 × 0.92 = 45.08, less 10 % = 40.57
    expect(await page.locator('#cart-total').textContent()).toContain('€40.57');
    await page.setViewportSize(NARROW);
    await shot('cart-coupon-eur-390');
    await page.setViewportSize(WIDE);

    await page.getByRole('link', { name: 'Proceed to checkout' }).click();
    await fillBilling('lin@example.com');
    expect(await page.locator('#checkout-total').textContent()).toContain('€40.57');
    await page.getByLabel('Card (test gateway)').check();
    await page.fill('#card_number', '4000000000000002');
    await page.getByRole('button', { name: 'Place order' }).click();
    await alert().waitFor();
    expect(await alert().getAttribute('data-code')).toBe('payment_declined');
    await page.setViewportSize(NARROW);
    await shot('checkout-declined-390');
    await page.setViewportSize(WIDE);
    await page.getByRole('link', { name: /Pay for this order/ }).click();
    await page.waitForURL(/\/checkout\/pay\/\d+\?key=/);
    await page.locator('#card_number').waitFor();
    await expectAccessible('pay page');
    await page.fill('#card_number', '4242424242424242');
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL(/\/checkout\/order-received\/\d+\?key=/);
    await page.locator('.license-key').waitFor();
    const { id } = receiptAddress();
    expect(await page.locator('.license-key').textContent()).toBe((await licensesOf(id))[0]);
    expect(await page.locator('.receipt').textContent()).toContain('€40.57');
    expect(await page.locator('.receipt').textContent()).toContain('spring10');
  }, 120_000);

  it('with a CAPTCHA provider: checkout runs its widget, a refused token is shown with its code, a passed one places the order', async () => {
    // The provider's verify endpoint, played by a local server: only "passed-token" passes.
    const verified: string[] = [];
    const verifier = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        const token = (JSON.parse(body) as { response: string }).response;
        verified.push(token);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ success: token === 'passed-token' }));
      });
    });
    await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
    const verifyUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`;
    // The widget script comes from the provider's origin (allowed by checkout's CSP); the test
    // serves a stand-in that does what the widget does: put its token in the form.
    await page.route('https://challenges.cloudflare.com/turnstile/v0/api.js', (route) =>
      route.fulfill({
        contentType: 'text/javascript',
        body: `document.querySelectorAll('.cf-turnstile').forEach(function (d) {
          var i = document.createElement('input'); i.type = 'hidden'; i.name = 'cf-turnstile-response';
          i.value = 'refused-token'; d.appendChild(i); d.setAttribute('data-ran', d.getAttribute('data-sitekey'));
        });`,
      }),
    );
    try {
      const set = await api('PATCH', '/settings', {
        captcha_provider: 'turnstile',
        captcha_site_key: 'site-key-1',
        captcha_secret: 'secret-1',
        captcha_verify_url: verifyUrl,
      });
      expect(set.status).toBe(200);
      await context.clearCookies();
      await page.goto(`${server.url}/products/forms-pro`);
      await page.getByRole('button', { name: 'Add to cart' }).click();
      await page.waitForURL(`${server.url}/cart`);
      await page.getByRole('link', { name: 'Proceed to checkout' }).click();
      await fillBilling('robot.check@example.com');
      await page.locator('.cf-turnstile[data-ran="site-key-1"]').waitFor({ state: 'attached' });
      await page.getByLabel('Card (test gateway)').check();
      await page.fill('#card_number', '4242424242424242');
      await page.getByRole('button', { name: 'Place order' }).click();
      await alert().waitFor();
      expect(await alert().getAttribute('data-code')).toBe('captcha_missing');
      expect(verified).toEqual(['refused-token']);
      // The widget passes this time.
      await page.evaluate(`document.querySelector('[name=cf-turnstile-response]').value = 'passed-token'`);
      await page.getByRole('button', { name: 'Place order' }).click();
      await page.waitForURL(/\/checkout\/order-received\/\d+\?key=/);
      await page.locator('.license-key').waitFor();
      expect(verified).toEqual(['refused-token', 'passed-token']);
    } finally {
      await page.unroute('https://challenges.cloudflare.com/turnstile/v0/api.js');
      await api('PATCH', '/settings', { captcha_provider: 'none', captcha_verify_url: '' });
      await new Promise((resolve) => verifier.close(resolve));
    }
  }, 120_000);
});
