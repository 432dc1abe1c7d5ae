import { PDFParse } from 'pdf-parse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/transaction.js';
import { admin, adminOk, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import {
  BILLING,
  createCustomer,
  createOrder,
  createProduct,
  enableOfflineGateways,
  uniqueEmail,
} from '../helpers/factories.js';

/**
 * Invoices and credit notes (docs/invoices.md): numbered gap-free in the transaction that pays or
 * refunds, frozen, rendered as PDFs for the administrator and the buyer.
 */
let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  await enableOfflineGateways(t);
  await setSettings(t, {
    checkout_rate_limit: 1000,
    store_mode: 'live',
    invoice_seller_name: 'Acme Software Ltd',
    invoice_seller_address: '1 Main Street\nSpringfield',
    invoice_seller_tax_number: 'GB123456789',
  });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => t.close());

interface Doc {
  id: number;
  kind: 'invoice' | 'credit_note';
  number: string;
  order_id: number;
  refund_id: number | null;
  invoice_number: string | null;
  total: string;
  currency: string;
}

const year = () => new Date().getUTCFullYear();
const docsOf = (id: number) => adminOk<Doc[]>(t, 'GET', `/orders/${id}/invoices`);
const seq = (number: string) => Number(number.split('-').at(-1));

/** A bank-transfer order, on hold until the administrator marks it paid. */
async function unpaidOrder(productId: number, email = uniqueEmail('inv')) {
  const out = await createOrder(t, {
    items: [{ product_id: productId, qty: 2 }],
    billing: { ...BILLING, email },
    payment_method: 'bacs',
  });
  return out.order_id;
}

async function pdfText(body: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(body) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

describe('invoice numbers', () => {
  it('50 orders paid at once over HTTP take 50 consecutive numbers, each once', async () => {
    const product = await createProduct(t, { price: '10.00' });
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) ids.push(await unpaidOrder(product.id));
    const answers = await Promise.all(
      ids.map((id) =>
        fetch(`${base}/v1/orders/${id}/status`, {
          method: 'POST',
          headers: { ...t.adminAuth, 'content-type': 'application/json' },
          body: JSON.stringify({ status: 'processing' }),
        }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(ids.map(() => 200));
    const numbers: string[] = [];
    for (const id of ids) {
      const docs = await docsOf(id);
      expect(docs.map((d) => d.kind)).toEqual(['invoice']);
      numbers.push(docs[0]!.number);
    }
    for (const n of numbers) expect(n).toMatch(new RegExp(`^INV-${year()}-\\d{6}$`));
    const sorted = numbers.map(seq).sort((a, b) => a - b);
    expect(sorted).toEqual(sorted.map((_, i) => sorted[0]! + i));
    // Paying again (processing -> completed) issues nothing more.
    await adminOk(t, 'POST', `/orders/${ids[0]}/status`, { status: 'completed' });
    expect((await docsOf(ids[0]!)).length).toBe(1);
  });

  it('a failed or cancelled payment takes no number: the next paid order takes the next one', async () => {
    const product = await createProduct(t, { price: '5.00' });
    const first = await unpaidOrder(product.id);
    await adminOk(t, 'POST', `/orders/${first}/status`, { status: 'processing' });
    const before = seq((await docsOf(first))[0]!.number);
    const failed = await unpaidOrder(product.id);
    await adminOk(t, 'POST', `/orders/${failed}/status`, { status: 'failed' });
    const cancelled = await unpaidOrder(product.id);
    await adminOk(t, 'POST', `/orders/${cancelled}/status`, { status: 'cancelled' });
    expect(await docsOf(failed)).toEqual([]);
    expect(await docsOf(cancelled)).toEqual([]);
    expectError(await admin(t, 'GET', `/orders/${failed}/invoice.pdf`), 404, 'invoice_not_found');
    const next = await unpaidOrder(product.id);
    await adminOk(t, 'POST', `/orders/${next}/status`, { status: 'processing' });
    expect(seq((await docsOf(next))[0]!.number)).toBe(before + 1);
  });

  it('a payment whose transaction rolls back gives its number back', async () => {
    const product = await createProduct(t, { price: '5.00' });
    const doomed = await unpaidOrder(product.id);
    // A later step of the payment's transaction fails after the invoice took its number.
    t.app.services.orders.onPaid(async (order) => {
      if (order.id === doomed) throw new Error('a later step fails');
    });
    const refused = await admin(t, 'POST', `/orders/${doomed}/status`, { status: 'processing' });
    expect(refused.statusCode).toBe(500);
    expect(await docsOf(doomed)).toEqual([]);
    const a = await unpaidOrder(product.id);
    const b = await unpaidOrder(product.id);
    await adminOk(t, 'POST', `/orders/${a}/status`, { status: 'processing' });
    await adminOk(t, 'POST', `/orders/${b}/status`, { status: 'processing' });
    expect(seq((await docsOf(b))[0]!.number)).toBe(seq((await docsOf(a))[0]!.number) + 1);
    const all = await t.app.services.database.db
      .selectFrom('invoices')
      .select('number')
      .where('kind', '=', 'invoice')
      .execute();
    const numbers = all
      .filter((r) => r.number.startsWith('INV-'))
      .map((r) => seq(r.number))
      .sort((x, y) => x - y);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
  });

  it('without the yearly reset the number is prefix and counter only', async () => {
    await setSettings(t, { invoice_number_prefix: 'T/', invoice_number_yearly_reset: false });
    try {
      const id = await unpaidOrder((await createProduct(t, { price: '3.00' })).id);
      await adminOk(t, 'POST', `/orders/${id}/status`, { status: 'processing' });
      expect((await docsOf(id))[0]!.number).toBe('T/000001');
    } finally {
      await setSettings(t, { invoice_number_prefix: 'INV-', invoice_number_yearly_reset: true });
    }
  });

  it('a test order is numbered in a test sequence of its own', async () => {
    await setSettings(t, { store_mode: 'test' });
    try {
      const id = await unpaidOrder((await createProduct(t, { price: '3.00' })).id);
      await adminOk(t, 'POST', `/orders/${id}/status`, { status: 'processing' });
      expect((await docsOf(id))[0]!.number).toBe(`TEST-INV-${year()}-000001`);
    } finally {
      await setSettings(t, { store_mode: 'live' });
    }
  });

  it('refuses malformed seller settings and changes nothing', async () => {
    for (const patch of [
      { invoice_number_prefix: 'a b<' },
      { invoice_number_prefix: 'X'.repeat(21) },
      { credit_note_number_prefix: 'é' },
      { invoice_seller_address: 'a\u0000b' },
      { invoice_seller_address: 'x'.repeat(1001) },
      { invoice_seller_name: 'a\nb' },
      { invoice_number_yearly_reset: 'yes' },
    ]) {
      expectError(await admin(t, 'PATCH', '/settings', patch), 400, 'rest_invalid_param');
    }
    const settings = await adminOk<Record<string, unknown>>(t, 'GET', '/settings');
    expect(settings).toMatchObject({
      invoice_number_prefix: 'INV-',
      invoice_seller_name: 'Acme Software Ltd',
    });
  });

  it('prints a buyer name outside Latin-1 and markup as text, never failing', async () => {
    const id = (
      await createOrder(t, {
        items: [{ product_id: (await createProduct(t, { name: '<b>Kit</b> ☃', price: '2.00' })).id, qty: 1 }],
        billing: { ...BILLING, first_name: '山田 <script>', last_name: 'Zoë', email: uniqueEmail('u') },
        payment_method: 'bacs',
      })
    ).order_id;
    await adminOk(t, 'POST', `/orders/${id}/status`, { status: 'processing' });
    const res = await admin(t, 'GET', `/orders/${id}/invoice.pdf`);
    expect(res.statusCode).toBe(200);
    const text = await pdfText(res.rawPayload);
    expect(text).toContain('?? <script> Zoë');
    expect(text).toContain('<b>Kit</b> ?');
  });
});

describe('PDFs and credit notes', () => {
  it('the invoice PDF carries the seller, the buyer and the order totals; a refund makes a credit note', async () => {
    const product = await createProduct(t, { name: 'Invoice Kit', price: '30.00' });
    const id = await unpaidOrder(product.id);
    const order = await adminOk<{ total: string; total_tax: string }>(t, 'POST', `/orders/${id}/status`, {
      status: 'processing',
    });
    const [invoice] = await docsOf(id);
    const res = await admin(t, 'GET', `/orders/${id}/invoice.pdf`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    const text = await pdfText(res.rawPayload);
    expect(text).toContain(`Invoice ${invoice!.number}`);
    expect(text).toContain('Acme Software Ltd');
    expect(text).toContain('GB123456789');
    expect(text).toContain('Invoice Kit');
    expect(text).toContain(`${order.total} USD`);
    expect(order.total).toBe('60.00');

    // Settings changed later never alter an issued invoice.
    await setSettings(t, { invoice_seller_name: 'Renamed Ltd' });
    expect(await pdfText((await admin(t, 'GET', `/orders/${id}/invoice.pdf`)).rawPayload)).toContain(
      'Acme Software Ltd',
    );
    await setSettings(t, { invoice_seller_name: 'Acme Software Ltd' });

    await adminOk(t, 'POST', `/orders/${id}/refunds`, { amount: '20.00', reason: 'partial' });
    await adminOk(t, 'POST', `/orders/${id}/refunds`, { amount: '40.00' });
    const docs = await docsOf(id);
    expect(docs.map((d) => [d.kind, d.total, d.invoice_number])).toEqual([
      ['invoice', '60.00', null],
      ['credit_note', '20.00', invoice!.number],
      ['credit_note', '40.00', invoice!.number],
    ]);
    expect(docs[1]!.number).toMatch(new RegExp(`^CN-${year()}-\\d{6}$`));
    expect(seq(docs[2]!.number)).toBe(seq(docs[1]!.number) + 1);
    const note = await admin(t, 'GET', `/orders/${id}/credit-notes/${docs[1]!.id}/pdf`);
    expect(note.statusCode).toBe(200);
    const noteText = await pdfText(note.rawPayload);
    expect(noteText).toContain(`Credit note ${docs[1]!.number}`);
    expect(noteText).toContain(invoice!.number);
    expect(noteText).toContain('20.00 USD');
    // The invoice's id is not a credit note's.
    expectError(
      await admin(t, 'GET', `/orders/${id}/credit-notes/${invoice!.id}/pdf`),
      404,
      'invoice_not_found',
    );
  });

  it('a refund made at the payment provider also makes a credit note', async () => {
    const id = await unpaidOrder((await createProduct(t, { price: '7.00' })).id);
    await adminOk(t, 'POST', `/orders/${id}/status`, { status: 'processing' });
    // What the Stripe webhook records when a refund was made in the Stripe Dashboard.
    await withTransaction(t.app.services.database, (tx) =>
      t.app.services.refunds.recordGatewayRefund(id, 1400, 'ch_test', tx),
    );
    const docs = await docsOf(id);
    expect(docs.map((d) => [d.kind, d.total])).toEqual([
      ['invoice', '14.00'],
      ['credit_note', '14.00'],
    ]);
  });

  it('answers unknown orders 404 and malformed ids 400', async () => {
    expectError(await admin(t, 'GET', '/orders/99999999/invoices'), 404, 'order_not_found');
    expectError(await admin(t, 'GET', '/orders/99999999/invoice.pdf'), 404, 'invoice_not_found');
    expect((await admin(t, 'GET', '/orders/abc/invoice.pdf')).statusCode).toBe(400);
    expect((await admin(t, 'GET', '/orders/1/credit-notes/0/pdf')).statusCode).toBe(400);
    const anonymous = await t.app.inject({ method: 'GET', url: '/v1/orders/1/invoice.pdf' });
    expect(anonymous.statusCode).toBe(401);
  });

  it('a buyer downloads their own invoice from My orders, never another’s', async () => {
    const product = await createProduct(t, { name: 'Buyer Kit', price: '12.00' });
    const me = await createCustomer(t);
    const other = await createCustomer(t);
    const mine = { order_id: await unpaidOrder(product.id, me.email) };
    const theirs = { order_id: await unpaidOrder(product.id, other.email) };
    await adminOk(t, 'POST', `/orders/${mine.order_id}/status`, { status: 'processing' });
    await adminOk(t, 'POST', `/orders/${theirs.order_id}/status`, { status: 'processing' });
    const as = (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie: me.headers.cookie } });
    const page = await as(`/account/orders/${mine.order_id}`);
    expect(page.body).toContain(`href="/account/orders/${mine.order_id}/invoice.pdf"`);
    const own = await as(`/account/orders/${mine.order_id}/invoice.pdf`);
    expect(own.statusCode).toBe(200);
    expect(own.headers['content-type']).toBe('application/pdf');
    const [invoice] = await docsOf(mine.order_id);
    expect(await pdfText(own.rawPayload)).toContain(invoice!.number);
    for (const url of [
      `/account/orders/${theirs.order_id}/invoice.pdf`,
      '/account/orders/99999999/invoice.pdf',
      '/account/orders/abc/invoice.pdf',
      `/account/orders/${mine.order_id}/credit-notes/${invoice!.id}/pdf`,
    ]) {
      const r = await as(url);
      expect(r.statusCode, url).toBe(404);
      expect(r.headers['content-type'], url).not.toBe('application/pdf');
    }
    const signedOut = await t.app.inject({
      method: 'GET',
      url: `/account/orders/${mine.order_id}/invoice.pdf`,
    });
    expect(signedOut.statusCode).toBe(303);
  });
});
