import { PDFParse } from 'pdf-parse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import {
  BILLING,
  createOrder,
  createProduct,
  enableOfflineGateways,
  uniqueEmail,
} from '../helpers/factories.js';
import { connectMail, type Smtp, startSmtp, waitForMail } from '../mail/helpers.js';

/** A paid order's receipt carries its invoice PDF (docs/invoices.md). */
let t: TestApp;
let smtp: Smtp;
beforeAll(async () => {
  smtp = await startSmtp();
  t = await createTestApp();
  await enableOfflineGateways(t);
  await setSettings(t, {
    checkout_rate_limit: 1000,
    store_mode: 'live',
    invoice_seller_name: 'Mail Seller Ltd',
  });
  await connectMail(t, smtp.url());
  t.app.services.mailWorker.start();
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

/** The base64 body of the message's application/pdf part and its file name, or null for none. */
function pdfAttachment(raw: string): { filename: string; content: Buffer } | null {
  const at = raw.search(/Content-Type: application\/pdf/i);
  if (at < 0) return null;
  const rest = raw.slice(at);
  const headerEnd = rest.search(/\r?\n\r?\n/);
  const headers = rest.slice(0, headerEnd);
  const body = rest.slice(headerEnd).replace(/^\r?\n\r?\n/, '');
  const end = body.search(/\r?\n--/);
  const filename = /filename="?([^";\r\n]+)"?/i.exec(headers)?.[1] ?? '';
  return { filename, content: Buffer.from(body.slice(0, end).replace(/\s+/g, ''), 'base64') };
}

describe('receipt email', () => {
  it('the payment-received message of a paid order carries its invoice PDF', async () => {
    const email = uniqueEmail('mail-inv');
    const product = await createProduct(t, { name: 'Mailed Kit', price: '25.00' });
    const { order_id } = await createOrder(t, {
      items: [{ product_id: product.id, qty: 1 }],
      billing: { ...BILLING, email },
      payment_method: 'bacs',
    });
    await adminOk(t, 'POST', `/orders/${order_id}/status`, { status: 'processing' });
    const received = await waitForMail(smtp, email, /payment received/i);
    const [invoice] = await adminOk<{ number: string }[]>(t, 'GET', `/orders/${order_id}/invoices`);
    const pdf = pdfAttachment(received.raw);
    expect(pdf?.filename).toBe(`${invoice!.number}.pdf`);
    const parser = new PDFParse({ data: new Uint8Array(pdf!.content) });
    const text = (await parser.getText()).text;
    await parser.destroy();
    expect(text).toContain(`Invoice ${invoice!.number}`);
    expect(text).toContain('Mail Seller Ltd');
    expect(text).toContain('25.00 USD');
  });
});
