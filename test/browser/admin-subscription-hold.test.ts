import { describe, expect, it } from 'vitest';
import { skipBrowserTests } from './chromium.js';
import { api, checkBothWidths, page, setUpConsole, signInInBrowser } from './console.js';

/**
 * The console's subscription screen says why the renewal worker held a subscription whose old
 * store's Stripe subscription may still bill it (docs/migrating.md, 'Subscriptions Stripe still
 * bills'), and what to do.
 */
describe.skipIf(skipBrowserTests)('a subscription held for its old Stripe subscription', () => {
  setUpConsole();

  it('shows the hold and the way out', async () => {
    const customer = await api<{ id: number }>('POST', '/users', {
      email: 'held.customer@example.com',
      password: 'held-password-1',
      role: 'customer',
    });
    const product = await api<{ id: number }>('POST', '/products', {
      name: 'Backup Pro',
      type: 'subscription',
      price: '12.00',
      subscription: { period: 'month', interval: 1 },
    });
    const sub = await api<{ id: number; status_reason: string; gateway_profile_id: string }>(
      'POST',
      '/subscriptions',
      { user_id: customer.body.id, product_id: product.body.id },
    );
    expect(sub.body).toMatchObject({ status_reason: '', gateway_profile_id: '' });
    // The reason the renewal worker gives (here given by hand: the console reads only the reason).
    const held = await api('POST', `/subscriptions/${sub.body.id}/status`, {
      status: 'on-hold',
      reason: 'old_subscription_active',
    });
    expect(held.body).toMatchObject({ status: 'on-hold', status_reason: 'old_subscription_active' });

    await signInInBrowser(`/admin/subscriptions/${sub.body.id}`);
    await page.getByRole('heading', { level: 1, name: `Subscription #${sub.body.id}` }).waitFor();
    await page.getByText('Stripe still bills the old store').waitFor();
    await checkBothWidths('subscription-held');

    // Set active again, the notice goes: once the subscription is read again, after the
    // "is now" notice, so the test waits for it to go rather than counting at once.
    await page.getByLabel('New status').selectOption('active');
    await page.getByRole('button', { name: 'Change status' }).click();
    await page.getByRole('status').filter({ hasText: 'is now' }).waitFor();
    await page.getByText('Stripe still bills the old store').waitFor({ state: 'detached' });
    const after = await api<{ status: string; status_reason: string }>(
      'GET',
      `/subscriptions/${sub.body.id}`,
    );
    expect(after.body).toMatchObject({ status: 'active' });
  }, 120_000);
});
