import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { orderCount, submit } from '../checkout/helpers.js';
import { admin, adminOk, createTestApp, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { BILLING, createProduct, enableOfflineGateways, uniqueEmail } from '../helpers/factories.js';
import { pdfText, ViesStandIn } from './helpers.js';

/**
 * Checkout under the digital-services regime with a German seller (docs/taxes.md): the buyer's
 * country's rate, business buyers' VAT numbers checked locally and with a VIES stand-in, reverse
 * charge across borders, VAT kept when VIES cannot answer, and the evidence of location.
 */

let t: TestApp;
const vies = new ViesStandIn({ FR40303265045: 'ACME SARL', DE129273398: 'Beispiel GmbH' });
let productId: number;

beforeAll(async () => {
  await vies.start();
  t = await createTestApp({ env: { VIES_URL: vies.url, VIES_TIMEOUT_MS: '1000', TRUST_PROXY: '1' } });
  await enableOfflineGateways(t);
  await setSettings(t, {
    checkout_rate_limit: 1000,
    tax_regime: 'digital_services',
    tax_seller_country: 'DE',
    prices_include_tax: false,
  });
  productId = (await createProduct(t, { price: '100.00' })).id;
});
afterAll(async () => {
  vies.close();
  await t.close();
});

interface OrderView {
  id: number;
  total: string;
  total_tax: string;
  buyer_tax_id: string;
  reverse_charge: boolean;
  tax_country: string;
  tax_lines: { name: string; rate: string; amount: string }[];
  tax_evidence: {
    billing_country: string | null;
    ip_country: string | null;
    card_country: string | null;
    country_confirmed: boolean;
    vat_check: { status: string; country: string; name: string | null } | null;
  };
}

/** Places a bank-transfer order from `country`, with the extra body fields, from `ip` when given. */
async function place(country: string, extra: Record<string, unknown> = {}, ip?: string) {
  const b = new Browser(t);
  const headers: Record<string, string> = ip ? { 'x-forwarded-for': ip } : {};
  return submit(
    b,
    {
      items: [{ product_id: productId, qty: 1 }],
      billing: { ...BILLING, country, email: uniqueEmail('vat') },
      payment_method: 'bacs',
      ...extra,
    },
    headers,
  );
}

const order = (id: number) => adminOk<OrderView>(t, 'GET', `/orders/${id}`);

describe('VAT numbers at checkout', () => {
  it('a valid French number from a German address: reverse charge, no VAT, and the invoice says so', async () => {
    vies.mode = 'ok';
    const { res, body } = await place('DE', { vat_number: 'fr 40 303 265 045' });
    expect(res.statusCode, res.body).toBe(200);
    expect(vies.requests.at(-1)).toEqual({ countryCode: 'FR', vatNumber: '40303265045' });
    const o = await order(body.order_id);
    expect(o).toMatchObject({
      total: '100.00',
      total_tax: '0.00',
      buyer_tax_id: 'FR40303265045',
      reverse_charge: true,
      tax_country: 'DE',
      tax_lines: [],
    });
    expect(o.tax_evidence.vat_check).toMatchObject({ status: 'valid', country: 'FR', name: 'ACME SARL' });
    await adminOk(t, 'POST', `/orders/${o.id}/status`, { status: 'processing' });
    const pdf = await admin(t, 'GET', `/orders/${o.id}/invoice.pdf`);
    expect(pdf.statusCode).toBe(200);
    const text = await pdfText(pdf.rawPayload);
    expect(text).toContain('Reverse charge');
    expect(text).toContain('VAT number: FR40303265045');
  });

  it('a valid number of the seller’s own country is charged VAT at the buyer’s rate', async () => {
    const { res, body } = await place('DE', { vat_number: 'DE129273398' });
    expect(res.statusCode, res.body).toBe(200);
    const o = await order(body.order_id);
    expect(o).toMatchObject({
      total: '119.00',
      total_tax: '19.00',
      buyer_tax_id: 'DE129273398',
      reverse_charge: false,
      tax_lines: [{ name: 'VAT DE', rate: '19.0000', amount: '19.00' }],
    });
    expect(o.tax_evidence.vat_check?.status).toBe('valid');
    await adminOk(t, 'POST', `/orders/${o.id}/status`, { status: 'processing' });
    const text = await pdfText((await admin(t, 'GET', `/orders/${o.id}/invoice.pdf`)).rawPayload);
    expect(text).toContain('VAT DE 19%');
    expect(text).not.toContain('Reverse charge');
    // Half refunded: the credit note gives back half the VAT, per rate too (9.50 of 59.50).
    await adminOk(t, 'POST', `/orders/${o.id}/refunds`, { amount: '59.50', reason: 'half' });
    const docs = await adminOk<{ id: number; kind: string }[]>(t, 'GET', `/orders/${o.id}/invoices`);
    const note = docs.find((d) => d.kind === 'credit_note')!;
    const credit = await pdfText(
      (await admin(t, 'GET', `/orders/${o.id}/credit-notes/${note.id}/pdf`)).rawPayload,
    );
    expect(credit).toMatch(/VAT DE 19%\s+9\.50 USD/);
  });

  it('a consumer without a number pays their own country’s rate', async () => {
    const { body } = await place('FR');
    const o = await order(body.order_id);
    expect(o).toMatchObject({ total: '120.00', total_tax: '20.00', buyer_tax_id: '', reverse_charge: false });
    expect(o.tax_lines).toEqual([{ name: 'VAT FR', rate: '20.0000', amount: '20.00' }]);
    expect(o.tax_evidence).toMatchObject({ billing_country: 'FR', vat_check: null });
  });

  it('a bad checksum is refused with 400 invalid_vat_number before VIES is asked; nothing is created', async () => {
    const asked = vies.requests.length;
    const before = await orderCount(t);
    const { res, body } = await place('DE', { vat_number: 'FR40303265046' });
    expect(res.statusCode).toBe(400);
    expect(body).toMatchObject({ error_code: 'invalid_vat_number' });
    expect(vies.requests.length).toBe(asked);
    expect(await orderCount(t)).toBe(before);
  });

  it('a number VIES does not know is refused with 400 invalid_vat_number', async () => {
    const before = await orderCount(t);
    const { res, body } = await place('DE', { vat_number: 'FR83404833048' });
    expect(res.statusCode).toBe(400);
    expect(body).toMatchObject({ error_code: 'invalid_vat_number' });
    expect(vies.requests.at(-1)).toEqual({ countryCode: 'FR', vatNumber: '83404833048' });
    expect(await orderCount(t)).toBe(before);
  });

  it.each(['slow', 'broken', 'ms_unavailable'] as const)(
    'VIES %s: the order goes through with VAT, the number unverified, and a note says so',
    async (mode) => {
      vies.mode = mode;
      try {
        const started = Date.now();
        const { res, body } = await place('FR', { vat_number: 'FR40303265045' });
        expect(res.statusCode, res.body).toBe(200);
        expect(Date.now() - started).toBeLessThan(1500);
        const o = await order(body.order_id);
        expect(o).toMatchObject({ total: '120.00', total_tax: '20.00', reverse_charge: false });
        expect(o.tax_evidence.vat_check).toMatchObject({ status: 'unverified', country: 'FR' });
        const notes = await adminOk<{ kind: string; body: string }[] | { notes: { body: string }[] }>(
          t,
          'GET',
          `/orders/${o.id}/notes`,
        );
        const list = Array.isArray(notes) ? notes : notes.notes;
        expect(list.some((n) => n.body.includes('FR40303265045'))).toBe(true);
      } finally {
        vies.mode = 'ok';
      }
    },
  );

  it.each([
    ['too long', { vat_number: `FR${'1'.repeat(45)}` }],
    ['with a control character', { vat_number: 'FR4030\u00003265045' }],
    ['not a string', { vat_number: 40303265045 }],
    ['a country that is not two letters', { confirm_country: 'DEU' }],
  ])('a VAT field %s is refused with 400 rest_invalid_param', async (_label, extra) => {
    const before = await orderCount(t);
    const { res } = await place('DE', extra);
    expectError(res, 400, 'rest_invalid_param');
    expect(await orderCount(t)).toBe(before);
  });

  it('under the manual regime a valid foreign number is kept but the stored rates apply', async () => {
    await setSettings(t, { tax_regime: 'manual' });
    try {
      const { res, body } = await place('DE', { vat_number: 'FR40303265045' });
      expect(res.statusCode, res.body).toBe(200);
      const o = await order(body.order_id);
      expect(o).toMatchObject({ buyer_tax_id: 'FR40303265045', reverse_charge: false, total_tax: '0.00' });
    } finally {
      await setSettings(t, { tax_regime: 'digital_services' });
    }
  });
});

describe('the checkout summary’s quote', () => {
  /** Quotes one unit from a German billing address, with the VAT number when given. */
  async function quote(vatNumber?: unknown) {
    const b = new Browser(t);
    return b.post('/checkout/quote', {
      items: [{ product_id: productId, qty: 1 }],
      billing: { country: 'DE' },
      ...(vatNumber !== undefined ? { vat_number: vatNumber } : {}),
    });
  }

  it('drops the VAT only for a number VIES confirms of another member state (reverse charge)', async () => {
    vies.mode = 'ok';
    const plain = (await quote()).json();
    expect(plain.totals).toMatchObject({ tax_total: '19.00', grand_total: '119.00', reverse_charge: false });
    const asked = vies.requests.length;
    const foreign = (await quote('FR 40 303 265 045')).json();
    expect(foreign.totals).toMatchObject({ tax_total: '0.00', grand_total: '100.00', reverse_charge: true });
    expect(vies.requests.length).toBe(asked + 1);
    const own = (await quote('DE129273398')).json();
    expect(own.totals).toMatchObject({ tax_total: '19.00', reverse_charge: false });
  });

  it('quotes VAT for a number that fails its checksum (VIES not asked) or that VIES cannot confirm', async () => {
    const asked = vies.requests.length;
    const bad = (await quote('FR40303265046')).json();
    expect(bad.totals).toMatchObject({ tax_total: '19.00', reverse_charge: false });
    expect(vies.requests.length).toBe(asked);
    vies.mode = 'ms_unavailable';
    try {
      const unverified = (await quote('FR40303265045')).json();
      expect(unverified.totals).toMatchObject({ tax_total: '19.00', reverse_charge: false });
    } finally {
      vies.mode = 'ok';
    }
  });

  it('under the manual regime a VAT number changes nothing and VIES is not asked', async () => {
    await setSettings(t, { tax_regime: 'manual' });
    try {
      const asked = vies.requests.length;
      const res = (await quote('FR40303265045')).json();
      expect(res.totals.reverse_charge).toBe(false);
      expect(vies.requests.length).toBe(asked);
    } finally {
      await setSettings(t, { tax_regime: 'digital_services' });
    }
  });

  it.each([
    ['not a string', 40303265045],
    ['too long', `FR${'1'.repeat(45)}`],
    ['with a control character', 'FR4030\u00003265045'],
  ])('a VAT number %s is refused with 400 rest_invalid_param', async (_label, value) => {
    expectError(await quote(value), 400, 'rest_invalid_param');
  });
});

describe('evidence of location', () => {
  it('records billing and IP countries; a disagreement must be confirmed (409 tax_country_unconfirmed)', async () => {
    const before = await orderCount(t);
    // 81.2.69.142 is in the United Kingdom in the bundled database.
    const refused = await place('DE', {}, '81.2.69.142');
    expect(refused.res.statusCode).toBe(409);
    expect(refused.body).toMatchObject({
      error_code: 'tax_country_unconfirmed',
      billing_country: 'DE',
      ip_country: 'GB',
    });
    expect(await orderCount(t)).toBe(before);
    // Confirming another country than the billing one does not count.
    expect((await place('DE', { confirm_country: 'GB' }, '81.2.69.142')).res.statusCode).toBe(409);
    const { res, body } = await place('DE', { confirm_country: 'de' }, '81.2.69.142');
    expect(res.statusCode, res.body).toBe(200);
    const o = await order(body.order_id);
    expect(o.tax_evidence).toEqual({
      billing_country: 'DE',
      ip_country: 'GB',
      card_country: null,
      country_confirmed: true,
      vat_check: null,
    });
    expect(o.total_tax).toBe('19.00');
  });

  it('agreeing countries need no confirmation; a private address has no country', async () => {
    const gb = await place('GB', {}, '81.2.69.142');
    expect(gb.res.statusCode, gb.res.body).toBe(200);
    expect((await order(gb.body.order_id)).tax_evidence).toMatchObject({
      billing_country: 'GB',
      ip_country: 'GB',
      country_confirmed: false,
    });
    const local = await place('FR');
    expect((await order(local.body.order_id)).tax_evidence.ip_country).toBeNull();
  });
});
