import { describe, expect, it } from 'vitest';
import { skipBrowserTests } from './chromium.js';
import {
  api,
  checkBothWidths,
  enableOfflineGateways,
  expectAccessible,
  page,
  server,
  setUpConsole,
  signInInBrowser,
} from './console.js';

/**
 * The invoice and credit notes on the console's order screen (docs/invoices.md): each links to
 * its PDF, which the signed-in session downloads.
 */
describe.skipIf(skipBrowserTests)('invoices in the console in a real browser', () => {
  setUpConsole();

  it('lists the paid order’s invoice and, after a refund, its credit note; both PDFs download', async () => {
    await enableOfflineGateways();
    const product = await api<{ id: number }>('POST', '/products', { name: 'Invoice Pro', price: '40.00' });
    expect(product.status).toBe(201);
    const res = await fetch(`${server.url}/v1/checkout/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        items: [{ product_id: product.body.id, qty: 1 }],
        billing: { first_name: 'Lin', last_name: 'Okafor', email: 'lin.invoice@example.com', country: 'GB' },
        payment_method: 'bacs',
      }),
    });
    const { order_id: id } = (await res.json()) as { order_id: number };

    await signInInBrowser(`/admin/orders/${id}`);
    await page.getByRole('heading', { level: 1, name: `Order #${id}` }).waitFor();
    await page.getByText('None yet: the invoice is issued when the order is paid.').waitFor();

    expect((await api('POST', `/orders/${id}/status`, { status: 'processing' })).status).toBe(200);
    await page.reload();
    const invoice = page.getByRole('link', { name: /^Invoice .*INV-/ });
    await invoice.waitFor();
    const pdf = async (href: string | null) =>
      page.evaluate(async (h) => {
        const r = await fetch(h!);
        const bytes = new Uint8Array(await r.arrayBuffer());
        return {
          status: r.status,
          type: r.headers.get('content-type'),
          head: String.fromCharCode(...bytes.slice(0, 5)),
        };
      }, href);
    expect(await pdf(await invoice.getAttribute('href'))).toEqual({
      status: 200,
      type: 'application/pdf',
      head: '%PDF-',
    });

    expect((await api('POST', `/orders/${id}/refunds`, { amount: '15.00' })).status).toBe(201);
    await page.reload();
    const note = page.getByRole('link', { name: /^Credit note .*CN-/ });
    await note.waitFor();
    expect(await pdf(await note.getAttribute('href'))).toEqual({
      status: 200,
      type: 'application/pdf',
      head: '%PDF-',
    });
    await expectAccessible('order invoices');
    await checkBothWidths('order-invoices');
  });
});
