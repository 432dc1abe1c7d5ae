import { describe, expect, it } from 'vitest';
import { skipBrowserTests } from './chromium.js';
import {
  alertCode,
  api,
  checkBothWidths,
  enableOfflineGateways,
  page,
  server,
  setUpConsole,
  signInInBrowser,
} from './console.js';

/**
 * Refunds and order notes on the console's order screen (docs/payments.md, 'In the console'): a
 * refused amount shows the API's code and changes nothing, a partial refund and then the rest
 * (typed and sent from the keyboard) refund the order in full, and a note is added and listed.
 */
describe.skipIf(skipBrowserTests)('refunds and order notes in a real browser', () => {
  setUpConsole();

  it('refunds an order from the keyboard, shows refusals with their codes, and adds a note', async () => {
    const product = await api<{ id: number }>('POST', '/products', { name: 'Backup Pro', price: '40.00' });
    expect(product.status).toBe(201);
    // The order is paid by bank transfer, which a new store starts without.
    await enableOfflineGateways();
    const res = await fetch(`${server.url}/v1/checkout/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        items: [{ product_id: product.body.id, qty: 1 }],
        billing: {
          first_name: 'Lin',
          last_name: 'Okafor',
          email: 'lin.refund@example.com',
          phone: '+44 20 7946 0001',
          address_1: '2 Analytical Row',
          city: 'London',
          postcode: 'N1 1AB',
          country: 'GB',
        },
        payment_method: 'bacs',
      }),
    });
    const { order_id: id } = (await res.json()) as { order_id: number };
    expect((await api('POST', `/orders/${id}/status`, { status: 'processing' })).status).toBe(200);

    await signInInBrowser(`/admin/orders/${id}`);
    await page.getByRole('heading', { level: 1, name: `Order #${id}` }).waitFor();
    await page.getByText('40.00 USD remains refundable', { exact: false }).waitFor();
    const form = page.getByRole('form', { name: 'Refund' });
    const amount = form.getByLabel('Amount (USD)');
    expect(await amount.inputValue()).toBe('40.00');

    // More than the total: the API's refusal is shown with its code, and nothing is refunded.
    await amount.fill('40.01');
    await amount.press('Enter');
    await form.locator('[role=alert][data-code]').waitFor();
    expect(await alertCode()).toBe('refund_exceeds_total');
    await amount.fill('abc');
    await amount.press('Enter');
    await form.locator('[role=alert][data-code="invalid_refund_amount"]').waitFor();
    expect((await api<{ refunds: unknown[] }>('GET', `/orders/${id}/refunds`)).body.refunds).toEqual([]);

    // A partial refund, typed and sent with the keyboard alone.
    await amount.fill('15.00');
    await form.getByLabel('Reason (optional)').focus();
    await page.keyboard.type('Bought a second seat by mistake');
    await page.keyboard.press('Enter');
    await page.getByText(`Refunded 15.00 USD of order #${id}.`).waitFor();
    await page.getByText('25.00 USD remains refundable', { exact: false }).waitFor();
    expect(await amount.inputValue()).toBe('25.00');

    // The note too: typed, then Tab to "Add note" and Enter.
    const note = page.getByLabel('New note');
    await note.focus();
    await page.keyboard.type('Customer asked by phone.');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('Rest refunded the next day.');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Add note');
    await page.keyboard.press('Enter');
    await page.getByText('Note added.').waitFor();
    await page.locator('.order-notes li[data-kind="note"]').waitFor();
    await checkBothWidths('order-refunds');

    // The rest, from the keyboard: the amount field holds what remains; Enter sends it.
    await amount.focus();
    await page.keyboard.press('Enter');
    await page.getByText(`Order #${id} is refunded in full (25.00 USD).`).waitFor();
    await page.getByText('This order is refunded in full.').waitFor();
    const order = await api<{ status: string; refunded_total: string }>('GET', `/orders/${id}`);
    expect(order.body).toMatchObject({ status: 'refunded', refunded_total: '40.00' });
    const items = page.locator('.order-notes li');
    const kinds: (string | null)[] = [];
    for (let i = 0; i < (await items.count()); i++) kinds.push(await items.nth(i).getAttribute('data-kind'));
    expect(kinds).toEqual(['payment', 'refund', 'note', 'refund']);
    await checkBothWidths('order-refunded');
  });
});
