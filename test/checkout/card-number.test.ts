import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wellFormedCardNumber } from '../../src/modules/orders/gateways.js';
import { Browser } from '../cart/helpers.js';
import { adminOk, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import {
  BILLING,
  createOrder,
  createProduct,
  enableOfflineGateways,
  uniqueEmail,
} from '../helpers/factories.js';
import { orderCount, payOrder, submit } from './helpers.js';

/**
 * A card number that cannot be one (docs/checkout.md, `invalid_card_number`): refused at submit
 * before the order is made, and at pay-order before the order changes; a well-formed number the
 * test gateway does not know is still declined.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await setSettings(t, { checkout_rate_limit: 1000 });
  // One test pays by bank transfer, which a new store starts without.
  await enableOfflineGateways(t, ['bacs']);
});
afterAll(async () => {
  await t?.close();
});

const MALFORMED = ['4242 4242 4242 4241', '1234', 'abcd-efgh-ijkl-mnop', '42424242424242424242', ''];

describe('the card number', () => {
  it('is well formed with 12 to 19 digits and a valid Luhn checksum, spaces and dashes allowed', () => {
    for (const ok of ['4242424242424242', '4242 4242 4242 4242', '4000-0000-0000-0002', '4111111111111111']) {
      expect(wellFormedCardNumber(ok), ok).toBe(true);
    }
    for (const bad of [...MALFORMED, 4242424242424242, null])
      expect(wellFormedCardNumber(bad), String(bad)).toBe(false);
  });

  it('malformed at submit: 400 invalid_card_number naming the field, and no order is made', async () => {
    const p = await createProduct(t);
    for (const card_number of MALFORMED) {
      const b = new Browser(t);
      const before = await orderCount(t);
      const { res, body } = await submit(b, {
        items: [{ product_id: p.id, qty: 1 }],
        billing: { ...BILLING, email: uniqueEmail() },
        payment_data: { card_number },
      });
      expect(res.statusCode, card_number).toBe(400);
      expect(body, card_number).toMatchObject({
        error_code: 'invalid_card_number',
        params: { 'payment_data.card_number': 'invalid' },
      });
      expect(await orderCount(t), card_number).toBe(before);
    }
  });

  it('well formed at submit: the order is made, and pays or is declined at pay-order as before', async () => {
    const p = await createProduct(t);
    const b = new Browser(t);
    const { res, body } = await submit(b, {
      items: [{ product_id: p.id, qty: 1 }],
      billing: { ...BILLING, email: uniqueEmail() },
      payment_data: { card_number: '4242 4242 4242 4242' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const paid = await payOrder(b, body.order_id, {
      key: body.order_key,
      payment_method: 'test_card',
      payment_data: { card_number: '4242 4242 4242 4242' },
    });
    expect(paid.statusCode, paid.body).toBe(200);
    // Another gateway's data is not the test card's to judge.
    const offline = await submit(new Browser(t), {
      items: [{ product_id: p.id, qty: 1 }],
      billing: { ...BILLING, email: uniqueEmail() },
      payment_method: 'bacs',
      payment_data: { card_number: '1234' },
    });
    expect(offline.res.statusCode, offline.res.body).toBe(200);
  });

  it('malformed at pay-order: 400 invalid_card_number and the order stays pending; a well-formed unknown card is declined', async () => {
    const p = await createProduct(t);
    const out = await createOrder(t, {
      items: [{ product_id: p.id, qty: 1 }],
      billing: { ...BILLING, email: uniqueEmail() },
    });
    const b = new Browser(t);
    const status = async () =>
      (await adminOk<{ status: string }>(t, 'GET', `/orders/${out.order_id}`)).status;
    for (const card_number of MALFORMED) {
      const res = await payOrder(b, out.order_id, {
        key: out.order_key,
        payment_method: 'test_card',
        payment_data: { card_number },
      });
      expect(res.statusCode, card_number).toBe(400);
      expect(res.json(), card_number).toMatchObject({
        error_code: 'invalid_card_number',
        messages: [expect.any(String)],
        params: { 'payment_data.card_number': 'invalid' },
      });
      expect(await status(), card_number).toBe('pending');
    }
    const declined = await payOrder(b, out.order_id, {
      key: out.order_key,
      payment_method: 'test_card',
      payment_data: { card_number: '4111111111111111' },
    });
    expect(declined.statusCode).toBe(402);
    expect(declined.json()).toMatchObject({ error_code: 'payment_declined' });
    expect(await status()).toBe('failed');
  });
});
