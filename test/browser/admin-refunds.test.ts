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

  /** A guest's order of one of `productId`, marked paid by the owner; its id. */
  async function paidOrder(productId: number): Promise<number> {
    // The order is paid by bank transfer, which a new store starts without.
    await enableOfflineGateways();
    const res = await fetch(`${server.url}/v1/checkout/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        items: [{ product_id: productId, qty: 1 }],
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
    return id;
  }

  it('refunds an order from the keyboard, shows refusals with their codes, and adds a note', async () => {
    const product = await api<{ id: number }>('POST', '/products', { name: 'Backup Pro', price: '40.00' });
    expect(product.status).toBe(201);
    const id = await paidOrder(product.body.id);

    await signInInBrowser(`/admin/orders/${id}`);
    await page.getByRole('heading', { level: 1, name: `Order #${id}` }).waitFor();
    await page.getByText('40.00 USD remains refundable', { exact: false }).waitFor();
    const form = page.getByRole('form', { name: 'Refund' });
    const amount = form.getByLabel('Amount (USD)');
    // The amount starts empty: the owner types what to refund. A virtual product has no stock to
    // put back, so the form does not offer it.
    expect(await amount.inputValue()).toBe('');
    expect(await form.getByLabel(/back in stock/).count()).toBe(0);

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
    expect(await amount.inputValue()).toBe('');

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

    // The rest, from the keyboard: typed, and Enter sends it.
    await amount.focus();
    await page.keyboard.type('25.00');
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

  it('offers to put the items back in stock for a physical product only', async () => {
    const boxed = await api<{ id: number }>('POST', '/products', {
      name: 'Boxed Edition',
      price: '30.00',
      virtual: false,
      stock_quantity: 5,
    });
    expect(boxed.status).toBe(201);
    const id = await paidOrder(boxed.body.id);
    await page.goto(`${server.url}/admin/orders/${id}`);
    const form = page.getByRole('form', { name: 'Refund' });
    await form.getByLabel(/back in stock/).waitFor();
    expect(await form.getByLabel(/back in stock/).isChecked()).toBe(true);
    expect(await form.getByLabel('Amount (USD)').inputValue()).toBe('');
  });
});
