import { describe, expect, it } from 'vitest';
import { skipPageBrowserTests } from './chromium.js';
import {
  api,
  checkBothWidths as checkWidths,
  context,
  page,
  server,
  setUpConsole,
  signInInBrowser,
  tabTo,
} from './console.js';

/**
 * Tiers and upgrades (docs/selling.md, 'Tiers' and 'Upgrades and downgrades') in a real browser,
 * by keyboard only: a tier chosen on the product's page and changed in the cart, then a
 * customer's license moved to a dearer tier from My licenses and paid on the pay page, and the
 * console's Upgrade or downgrade section; axe-core clean and nothing wider than the screen at 1280
 * and 390 px. SAVE_SCREENSHOTS=1 writes docs/screenshots/store-tiers-*.png, store-upgrade-*.png
 * and admin-license-upgrade-*.png.
 */
const CUSTOMER = { email: 'grace.tiers@example.com', password: 'grace-password-1' };
const TERM = { usage: { mode: 'days', days: 365 }, updates: { mode: 'days', days: 365 } };

/**
 * Signs `who` in on the store's sign-in form, then by keyboard from My licenses to the first
 * license's Upgrade or downgrade page; answers its group of tiers.
 */
async function chooseTierAs(who: { email: string; password: string }) {
  await context.clearCookies();
  await page.goto(`${server.url}/account/licenses`);
  await page.locator('#email').waitFor();
  await page.fill('#email', who.email);
  await page.fill('#password', who.password);
  await page.locator('#password').press('Enter');
  await page.getByRole('heading', { level: 1, name: 'My licenses' }).waitFor();
  await tabTo("el.textContent === 'Upgrade or downgrade'", 'Upgrade or downgrade');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Upgrade or downgrade' }).waitFor();
  return page.getByRole('group', { name: 'Choose the new tier' });
}

/** From the chosen tier, by keyboard: Continue, then the pay page's test card, until it is paid. */
async function continueAndPay() {
  await tabTo("el.textContent === 'Continue'", 'Continue');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/checkout\/pay\/\d+\?key=/);
  await tabTo("el.id === 'card_number'", 'the card number');
  await page.keyboard.type('4242424242424242');
  await tabTo("el.tagName === 'BUTTON' && el.textContent.startsWith('Pay')", 'Pay');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/checkout\/order-received\//);
}

describe.skipIf(skipPageBrowserTests)('tiers and upgrades in a real browser', () => {
  setUpConsole();
  let product: { id: number; slug: string; variations: { id: number; name: string }[] };

  it('a visitor chooses a tier on the product page and changes it in the cart, by keyboard', async () => {
    await api('PATCH', '/settings', { store_name: 'Northwind Plugins', store_accent_color: '#0f766e' });
    expect((await api('PATCH', '/payment-gateways/test_card', { enabled: true })).status).toBe(200);
    const created = await api<typeof product>('POST', '/products', {
      name: 'Forms Pro',
      type: 'variable',
      price: '49.00',
      licensing_enabled: 'yes',
      short_description: 'Forms that take payments.',
      entitlement_policy: TERM,
      variations: [
        { name: '1 site', price: '49.00', activation_limit: 1 },
        { name: '5 sites', price: '99.00', activation_limit: 5 },
        { name: 'Unlimited sites', price: '199.00', activation_limit: 0 },
      ],
    });
    expect(created.status).toBe(201);
    product = created.body;

    await context.clearCookies();
    await page.goto(`${server.url}/products/${product.slug}`);
    const tiers = page.getByRole('group', { name: 'Choose a tier' });
    await tiers.waitFor();
    expect(await tiers.getByRole('radio').count()).toBe(3);
    expect(await tiers.textContent()).toContain('5 sites');
    expect(await tiers.textContent()).toContain('1 year of updates');
    await expect.poll(() => page.getByRole('button', { name: 'Add to cart' }).isEnabled()).toBe(true);
    await checkWidths('tiers-product', 'store');

    // Tab into the group (the chosen radio), the arrow moves the choice, then on to the button.
    await tabTo("el.getAttribute('name') === 'variation_id'", 'the tiers');
    await page.keyboard.press('ArrowRight');
    expect(await tiers.getByRole('radio', { name: /^5 sites/ }).isChecked()).toBe(true);
    await tabTo("el.textContent === 'Add to cart'", 'Add to cart');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${server.url}/cart`);
    await page.locator('#cart-total').waitFor();
    expect(await page.locator('#cart-view').textContent()).toContain('Forms Pro - 5 sites');
    expect(await page.locator('#cart-total').textContent()).toContain('$99.00');

    // The tier again, in the cart: the select, then Change tier.
    await tabTo("el.classList.contains('tier-select')", 'the tier of the line');
    await page.keyboard.press('ArrowDown');
    await tabTo("el.textContent === 'Change tier'", 'Change tier');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('#cart-view').textContent())
      .toContain('Forms Pro - Unlimited sites');
    expect(await page.locator('#cart-total').textContent()).toContain('$199.00');
    await checkWidths('tiers-cart', 'store');
  }, 180_000);

  it('a customer upgrades a license from My licenses and pays the difference; the key stays', async () => {
    const customer = await api<{ id: number }>('POST', '/users', { ...CUSTOMER, role: 'customer' });
    expect(customer.status).toBe(201);
    const license = await api<{ id: number; license_key: string }>('POST', '/licenses', {
      product_id: product.id,
      variation_id: product.variations[0]!.id,
      user_id: customer.body.id,
      activation_limit: 1,
      entitlement_policy: TERM,
    });
    expect(license.status).toBe(201);

    const group = await chooseTierAs(CUSTOMER);
    // Issued today at $49.00 for 365 days: all of it is credit.
    expect(await group.textContent()).toContain('You pay 50.00 USD');
    await checkWidths('upgrade-choose', 'store');

    await tabTo("el.getAttribute('name') === 'target'", 'the tiers');
    expect(await group.getByRole('radio', { name: /5 sites/ }).isChecked()).toBe(true);
    await continueAndPay();

    const after = (
      await api<{ license_key: string; activation_limit: number; variation_id: number }>(
        'GET',
        `/licenses/${license.body.id}`,
      )
    ).body;
    expect(after).toMatchObject({
      license_key: license.body.license_key,
      activation_limit: 5,
      variation_id: product.variations[1]!.id,
    });
    await page.goto(`${server.url}/account/licenses`);
    expect(await page.locator('.license').first().textContent()).toContain('Forms Pro — 5 sites');
  }, 180_000);

  it('a license a subscription renews moves with it: the page says what the renewals charge', async () => {
    const monthly = await api<{ id: number; variations: { id: number }[] }>('POST', '/products', {
      name: 'Forms Cloud',
      type: 'variable-subscription',
      price: '10.00',
      licensing_enabled: 'yes',
      subscription: { period: 'month', interval: 1 },
      entitlement_policy: { usage: { mode: 'subscription' }, updates: { mode: 'license' } },
      variations: [
        { name: '1 site', price: '10.00', activation_limit: 1 },
        { name: '5 sites', price: '30.00', activation_limit: 5 },
      ],
    });
    expect(monthly.status).toBe(201);
    const who = { email: 'ada.cloud@example.com', password: 'ada-password-1' };
    const customer = await api<{ id: number }>('POST', '/users', { ...who, role: 'customer' });
    const [basic, five] = monthly.body.variations.map((v) => v.id);
    const sub = await api<{ id: number; next_payment_at: string }>('POST', '/subscriptions', {
      user_id: customer.body.id,
      product_id: monthly.body.id,
      variation_id: basic,
    });
    expect(sub.status).toBe(201);
    const license = await api<{ id: number; license_key: string }>('POST', '/licenses', {
      product_id: monthly.body.id,
      variation_id: basic,
      user_id: customer.body.id,
      activation_limit: 1,
      subscription_id: sub.body.id,
    });
    expect(license.status).toBe(201);

    const group = await chooseTierAs(who);
    // Started today at $10.00 a month: all of it is credit against the $30.00 tier.
    expect(await group.textContent()).toContain('You pay 20.00 USD');
    expect(await group.textContent()).toContain('renews at 30.00 USD every month');
    expect(await page.locator('.facts').textContent()).toContain(sub.body.next_payment_at.slice(0, 10));
    await checkWidths('upgrade-subscription', 'store');

    await tabTo("el.getAttribute('name') === 'target'", 'the tiers');
    await continueAndPay();

    const after = (
      await api<{ license_key: string; activation_limit: number }>('GET', `/licenses/${license.body.id}`)
    ).body;
    expect(after).toMatchObject({ license_key: license.body.license_key, activation_limit: 5 });
    const moved = (await api('GET', `/subscriptions/${sub.body.id}`)).body;
    expect(moved).toMatchObject({
      variation_id: five,
      recurring_total: '30.00',
      next_payment_at: sub.body.next_payment_at,
    });
    // The console offers the move for such a license too (back down to the 1-site tier).
    await context.clearCookies();
    await signInInBrowser(`/admin/licenses/${license.body.id}`);
    const section = page.getByRole('region', { name: 'Upgrade or downgrade' });
    await section.waitFor();
    expect(await section.getByLabel('New tier').locator('option').allTextContents()).toEqual([
      expect.stringContaining('Forms Cloud - 1 site'),
    ]);
  }, 180_000);

  it('the console creates an upgrade order for a customer from the license screen', async () => {
    const customer = await api<{ id: number }>('POST', '/users', {
      email: 'lin.tiers@example.com',
      password: 'lin-password-1',
      role: 'customer',
    });
    const license = await api<{ id: number }>('POST', '/licenses', {
      product_id: product.id,
      variation_id: product.variations[0]!.id,
      user_id: customer.body.id,
      entitlement_policy: TERM,
    });
    const agency = await api<{ id: number }>('POST', '/products', {
      name: 'Forms Agency',
      price: '399.00',
      licensing_enabled: 'yes',
      activation_limit: 100,
    });
    await context.clearCookies();
    // The owner names the upgrade path on the product's software configuration.
    await signInInBrowser(`/admin/products/${product.id}`);
    await page.getByLabel('Upgrade paths').fill(String(agency.body.id));
    await page.getByRole('button', { name: 'Save software configuration' }).click();
    await page.getByText('The software configuration is saved.').waitFor();
    const config = await api<{ upgrade_paths: number[] }>('GET', `/software/products/${product.id}/config`);
    expect(config.body.upgrade_paths).toEqual([agency.body.id]);

    await page.goto(`${server.url}/admin/licenses/${license.body.id}`);
    const section = page.getByRole('region', { name: 'Upgrade or downgrade' });
    await section.waitFor();
    const select = section.getByLabel('New tier');
    expect(await select.locator('option').allTextContents()).toEqual([
      expect.stringContaining('Forms Pro - 5 sites'),
      expect.stringContaining('Forms Pro - Unlimited sites'),
      expect.stringContaining('Forms Agency'),
    ]);
    await select.selectOption({ index: 1 });
    await checkWidths('license-upgrade');
    await section.getByRole('button', { name: 'Create upgrade order' }).click();
    await page
      .getByRole('status')
      .getByText(/Upgrade order #\d+ is waiting/)
      .waitFor();
    await section.getByRole('link', { name: /Order #\d+/ }).waitFor();
    await checkWidths('license-upgrade-order');
  }, 180_000);
});
