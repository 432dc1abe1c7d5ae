import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { skipBrowserTests } from './chromium.js';
import {
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
 * The console's Customers and Subscriptions screens (docs/admin.md, 'Customers' and
 * 'Subscriptions') in a real browser, and the new license's customer search. The data is seeded
 * through the API: a customer with an order, a license and subscriptions, one with a renewal order.
 */

interface Sub {
  id: number;
  status: string;
}

describe.skipIf(skipBrowserTests)("the console's customers and subscriptions in a real browser", () => {
  setUpConsole();

  let customerId: number;
  let productId: number;
  let licenseKey: string;
  /** Renewed by the API before the browser opens; `fresh` gets its renewal order in the browser. */
  let renewed: Sub;
  let fresh: Sub;
  let renewalOrder: number;

  const nav = (name: string) =>
    page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
  const loaded = (what: string) =>
    waitFor(async () => (await page.locator('.loading').count()) === 0, `${what} loaded`);

  it('seeds a customer with an order, a license and subscriptions through the API', async () => {
    const customer = await api<{ id: number }>('POST', '/users', {
      email: 'quinn.customer@example.com',
      password: 'quinn-password-1',
      role: 'customer',
      first_name: 'Quinn',
      last_name: 'Archer',
    });
    expect(customer.status).toBe(201);
    customerId = customer.body.id;
    // Others, so that the search has something to leave out.
    for (const [email, first_name] of [
      ['rosa@example.com', 'Rosa'],
      ['sam@example.com', 'Sam'],
    ]) {
      expect(
        (await api('POST', '/users', { email, password: 'other-password-1', role: 'customer', first_name }))
          .status,
      ).toBe(201);
    }
    const product = await api<{ id: number }>('POST', '/products', {
      name: 'Cloud Sync',
      type: 'subscription',
      price: '12.00',
      activation_limit: 2,
      subscription: { period: 'month', interval: 1 },
    });
    expect(product.status).toBe(201);
    productId = product.body.id;
    const license = await api<{ license_key: string }>('POST', '/licenses', {
      product_id: productId,
      user_id: customerId,
    });
    expect(license.status).toBe(201);
    licenseKey = license.body.license_key;
    const subscribe = async () => {
      const res = await api<Sub>('POST', '/subscriptions', { user_id: customerId, product_id: productId });
      expect(res.status).toBe(201);
      return res.body;
    };
    renewed = await subscribe();
    fresh = await subscribe();
    const order = await api<{ id: number }>('POST', `/subscriptions/${renewed.id}/renewal-orders`);
    expect(order.status).toBe(201);
    renewalOrder = order.body.id;
  });

  it('finds the customer by search and shows their orders, licenses and subscriptions', async () => {
    await signInInBrowser('/admin/customers');
    await page.getByRole('heading', { level: 1, name: 'Customers' }).waitFor();
    const table = page.getByRole('region', { name: 'Customers' });
    await waitFor(async () => (await table.locator('tbody tr').count()) === 3, 'three customers listed');
    await page.getByLabel('Search', { exact: true }).fill('archer');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await waitFor(
      async () => new URL(page.url()).searchParams.get('search') === 'archer',
      'the search in the address',
    );
    await waitFor(async () => (await table.locator('tbody tr').count()) === 1, 'one customer found');
    // Sorted by the server, through the address.
    await page.getByLabel('Sort by').selectOption('email');
    await waitFor(
      async () => new URL(page.url()).searchParams.get('sort') === 'email',
      'the sort in the address',
    );
    await table.getByRole('link', { name: 'quinn.customer@example.com' }).click();

    await page.getByRole('heading', { level: 1, name: 'Quinn Archer' }).waitFor();
    await loaded('the customer');
    const orders = page.getByRole('region', { name: 'Orders' });
    const licenses = page.getByRole('region', { name: 'Licenses' });
    const subscriptions = page.getByRole('region', { name: 'Subscriptions' });
    await waitFor(async () => (await orders.locator('tbody tr').count()) === 1, 'the order is listed');
    expect(await orders.getByRole('link', { name: `#${renewalOrder}` }).count()).toBe(1);
    await waitFor(async () => (await licenses.locator('tbody tr').count()) === 1, 'the license is listed');
    expect(await licenses.locator('.key').textContent()).toBe(licenseKey);
    await waitFor(async () => (await subscriptions.locator('tbody tr').count()) === 2, 'both subscriptions');
    await shot('customer-1280');
  }, 60_000);

  it('opens a subscription, creates its renewal order, and cancels it after confirmation', async () => {
    await page
      .getByRole('region', { name: 'Subscriptions' })
      .getByRole('link', { name: `#${fresh.id}` })
      .click();
    await page.getByRole('heading', { level: 1, name: `Subscription #${fresh.id}` }).waitFor();
    await loaded('the subscription');
    await page.getByRole('link', { name: 'Quinn Archer' }).waitFor();
    await page.getByRole('link', { name: 'Cloud Sync' }).waitFor();
    const renewals = page.getByRole('region', { name: 'Renewal orders' });
    await page.getByText('No renewal orders yet.').waitFor();

    await page.getByRole('button', { name: 'Create renewal order' }).click();
    await page.getByRole('status').filter({ hasText: 'Renewal order' }).waitFor();
    await waitFor(
      async () => (await renewals.locator('tbody tr').count()) === 1,
      'the renewal order is listed',
    );
    const made = (
      await api<{ id: number; created_via: string }[]>('GET', `/orders?subscription_id=${fresh.id}`)
    ).body;
    expect(made).toHaveLength(1);
    expect(made[0]!.created_via).toBe('renewal');
    // Waited for, not counted at once: a loaded machine may still show the list before the order.
    await renewals.getByRole('link', { name: `#${made[0]!.id}` }).waitFor();

    // Cancelling asks first; Cancel in the dialog changes nothing.
    await page.getByLabel('New status').selectOption('cancelled');
    await page.getByRole('button', { name: 'Change status' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await expectAccessible('the cancel-subscription dialog');
    await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await api<Sub>('GET', `/subscriptions/${fresh.id}`)).body.status).toBe('active');
    await page.getByRole('button', { name: 'Change status' }).click();
    await dialog.getByRole('button', { name: 'Cancel subscription' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await waitFor(
      async () => (await api<Sub>('GET', `/subscriptions/${fresh.id}`)).body.status === 'cancelled',
      'the subscription is cancelled',
    );
    // An ended subscription offers no further actions.
    await page.getByText('This subscription has ended').waitFor();
    expect(await page.getByRole('button', { name: 'Create renewal order' }).count()).toBe(0);

    // The renewal order's page links back to its subscription and its customer.
    await renewals.getByRole('link', { name: `#${made[0]!.id}` }).click();
    await page.getByRole('heading', { level: 1, name: /^Order #/ }).waitFor();
    expect(await page.getByRole('link', { name: `customer #${customerId}` }).count()).toBe(1);
    await page.getByRole('link', { name: `subscription #${fresh.id}` }).click();
    await page.getByRole('heading', { level: 1, name: `Subscription #${fresh.id}` }).waitFor();
  }, 60_000);

  it('lists subscriptions filtered by status and sorted by the server', async () => {
    await nav('Subscriptions');
    await page.getByRole('heading', { level: 1, name: 'Subscriptions' }).waitFor();
    const table = page.getByRole('region', { name: 'Subscriptions' });
    await waitFor(async () => (await table.locator('tbody tr').count()) === 2, 'both subscriptions listed');
    await page.getByLabel('Status').selectOption('cancelled');
    await waitFor(async () => new URL(page.url()).searchParams.get('status') === 'cancelled', 'the filter');
    await waitFor(async () => (await table.locator('tbody tr').count()) === 1, 'one is cancelled');
    await table.getByRole('link', { name: `#${fresh.id}` }).waitFor();
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Sort by').selectOption('next_payment_at');
    await page.getByLabel('Order', { exact: true }).selectOption('asc');
    await waitFor(
      async () => new URL(page.url()).search === '?sort=next_payment_at&order=asc',
      'the sort in the address',
    );
    // Both fall due on the same day; ties are broken by id.
    await waitFor(
      async () =>
        (await table.locator('tbody tr').first().getByRole('link').first().textContent()) ===
        `#${renewed.id}`,
      'the list is sorted',
    );
  }, 60_000);

  it('issues a license to a customer chosen by searching', async () => {
    await page.goto(`${server.url}/admin/licenses/new`);
    await page.getByRole('heading', { level: 1, name: 'New license' }).waitFor();
    await page.getByLabel('Product').selectOption({ label: 'Cloud Sync' });
    await page.getByLabel('An existing customer').check();
    // Nothing chosen yet: refused before any request.
    await page.getByRole('button', { name: 'Issue license' }).click();
    await page.getByText('Find and choose the customer.').waitFor();
    await page.getByLabel('Find the customer').fill('quinn');
    await page.getByLabel('Find the customer').press('Enter');
    await page.getByText('1 customer matching “quinn”.').waitFor();
    await page.getByRole('radio', { name: /quinn\.customer@example\.com/ }).check();
    await expectAccessible('the new license with a customer search');
    await shot('customer-search-1280');
    await page.getByRole('button', { name: 'Issue license' }).click();
    await page.getByRole('heading', { level: 2, name: 'Activations' }).waitFor();
    const id = Number(/\/admin\/licenses\/(\d+)/.exec(page.url())?.[1]);
    const license = (await api<{ user_id: number; product_id: number }>('GET', `/licenses/${id}`)).body;
    expect(license).toMatchObject({ user_id: customerId, product_id: productId });
    expect((await api<{ total: number }>('GET', `/licenses?user_id=${customerId}`)).body.total).toBe(2);

    // From a customer's page, the form opens with that customer chosen.
    await page.goto(`${server.url}/admin/customers/${customerId}`);
    await page.getByRole('heading', { level: 1, name: 'Quinn Archer' }).waitFor();
    await page.getByRole('link', { name: 'New license' }).click();
    await page.getByRole('heading', { level: 1, name: 'New license' }).waitFor();
    const chosen = page.getByRole('radio', { name: /quinn\.customer@example\.com/ });
    await chosen.waitFor();
    expect(await chosen.isChecked()).toBe(true);

    // A search that finds nobody says so.
    await page.goto(`${server.url}/admin/licenses/new`);
    await page.getByLabel('An existing customer').check();
    await page.getByLabel('Find the customer').fill('nobody-here');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('No customer matches “nobody-here”.').waitFor();
  }, 60_000);

  it('products: sorted by the server by name, through the address', async () => {
    for (const name of ['Atlas Backup', 'Zen Forms']) {
      expect((await api('POST', '/products', { name, price: '9.00' })).status).toBe(201);
    }
    await nav('Products');
    await page.getByRole('heading', { level: 1, name: 'Products' }).waitFor();
    const first = () =>
      page.getByRole('region', { name: 'Products' }).locator('tbody tr').first().getByRole('link').first();
    await waitFor(async () => (await first().textContent()) === 'Zen Forms', 'newest first');
    await page.getByLabel('Sort by').selectOption('name');
    await page.getByLabel('Order', { exact: true }).selectOption('asc');
    await waitFor(
      async () => new URL(page.url()).search === '?sort=name&order=asc',
      'the sort in the address',
    );
    await waitFor(async () => (await first().textContent()) === 'Atlas Backup', 'sorted by name');
    await page.getByLabel('Order', { exact: true }).selectOption('desc');
    await waitFor(async () => (await first().textContent()) === 'Zen Forms', 'sorted by name, descending');
  }, 60_000);

  it('every new screen, at 1280 and 390 px: no serious or critical axe finding, nothing wider than the screen', async () => {
    const screens: [string, string, string][] = [
      ['customers', '/admin/customers', 'Customers'],
      ['customer', `/admin/customers/${customerId}`, 'Quinn Archer'],
      ['subscriptions', '/admin/subscriptions', 'Subscriptions'],
      ['subscription', `/admin/subscriptions/${renewed.id}`, `Subscription #${renewed.id}`],
    ];
    for (const viewport of [WIDE, NARROW]) {
      await page.setViewportSize(viewport);
      for (const [name, path, title] of screens) {
        await page.goto(`${server.url}${path}`);
        await page.getByRole('heading', { level: 1, name: title }).waitFor();
        await loaded(name);
        await expectAccessible(`${name} at ${viewport.width} px`);
        await expectNoSidewaysScroll(`${name} at ${viewport.width} px`);
        await shot(`${name}-${viewport.width}`);
      }
    }
    await page.setViewportSize(WIDE);
  }, 120_000);
});
