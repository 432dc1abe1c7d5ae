import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/http/redact.js';
import { adminOk, createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import {
  createOrder,
  createProduct,
  enableOfflineGateways,
  OFFLINE_INSTRUCTIONS,
} from '../helpers/factories.js';

/**
 * The store's buying pages (docs/storefront.md, 'Buying'): the cart and checkout shells, the
 * receipt and the pay page. The receipt and pay pages open with the order key alone: a wrong or
 * missing key and an unknown order are the same 404 without any order data, and every answer is
 * no-store (the key is in the address).
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  // Orders here are paid by bank transfer or cheque, which a new store starts without.
  await enableOfflineGateways(t);
  await setSettings(t, { checkout_rate_limit: 1000 });
});
afterAll(async () => t.close());

const page = (url: string) => t.app.inject({ method: 'GET', url });
const pay = (id: number, key: string, card = '4242424242424242') =>
  t.app.inject({
    method: 'POST',
    url: `/v1/checkout/pay-order/${id}`,
    payload: { key, payment_method: 'test_card', payment_data: { card_number: card } },
  });

async function order(name: string, email = 'receipt-buyer@example.com', paymentMethod = 'test_card') {
  const product = await createProduct(t, { name, price: '30.00' });
  const placed = await createOrder(t, {
    payment_method: paymentMethod,
    items: [{ product_id: product.id, qty: 2 }],
    billing: {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email,
      country: 'GB',
    },
  });
  return { product, placed };
}

describe('receipt page (/checkout/order-received/<id>?key=)', () => {
  it('shows a paid order, its lines, totals and the license key the order issued; no-store', async () => {
    const { placed } = await order('Receipt Kit <i>');
    expect((await pay(placed.order_id, placed.order_key)).statusCode).toBe(200);
    const res = await page(`/checkout/order-received/${placed.order_id}?key=${placed.order_key}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.body).toContain(`Order #${placed.order_id}`);
    expect(res.body).toContain('Receipt Kit &lt;i&gt;');
    expect(res.body).toContain('$60.00');
    expect(res.body).toContain('data-status="processing"');
    const { licenses } = (
      await t.app.inject({ method: 'GET', url: '/v1/licenses?per_page=100', headers: t.adminAuth })
    ).json() as { licenses: { license_key: string; order_id: number }[] };
    const issued = licenses.filter((l) => l.order_id === placed.order_id);
    expect(issued).toHaveLength(1);
    expect(res.body).toContain(`<code class="license-key">${issued[0]!.license_key}</code>`);
    expect(res.body).toContain('href="/account/licenses"');
  });

  it('an unpaid order shows no key and links to its pay page', async () => {
    const { placed } = await order('Unpaid Kit');
    const res = await page(`/checkout/order-received/${placed.order_id}?key=${placed.order_key}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('data-status="pending"');
    expect(res.body).toContain(`href="/checkout/pay/${placed.order_id}?key=${placed.order_key}"`);
    expect(res.body).not.toContain('license-key');
  });

  it('a bank transfer order on hold shows the gateway’s instructions (escaped, with the order as reference) until it is paid', async () => {
    await adminOk(t, 'PATCH', '/payment-gateways/bacs', {
      instructions: 'Pay to Northwind Ltd\nIBAN DE89 3704 0044 0532 0130 00 <script>',
    });
    const { placed } = await order('Transfer Kit', 'transfer-buyer@example.com', 'bacs');
    const receipt = () => page(`/checkout/order-received/${placed.order_id}?key=${placed.order_key}`);
    // Pending (no payment chosen yet): nothing to transfer to.
    expect((await receipt()).body).not.toContain('how-to-pay');
    const held = await t.app.inject({
      method: 'POST',
      url: `/v1/checkout/pay-order/${placed.order_id}`,
      payload: { key: placed.order_key, payment_method: 'bacs' },
    });
    expect(held.statusCode).toBe(200);
    const onHold = await receipt();
    expect(onHold.body).toContain('data-status="on-hold"');
    expect(onHold.body).toContain(
      '<p class="instructions">Pay to Northwind Ltd\nIBAN DE89 3704 0044 0532 0130 00 &lt;script&gt;</p>',
    );
    expect(onHold.body).toContain(`order #${placed.order_id}</strong> as the payment reference`);
    await adminOk(t, 'POST', `/orders/${placed.order_id}/status`, { status: 'processing' });
    const paid = await receipt();
    expect(paid.body).toContain('data-status="processing"');
    expect(paid.body).not.toContain('how-to-pay');
    await adminOk(t, 'PATCH', '/payment-gateways/bacs', { instructions: OFFLINE_INSTRUCTIONS.bacs });
  });

  it('a wrong, missing or hostile key, and an unknown order, are 404 with no order data; no-store', async () => {
    const { placed } = await order('Secret Kit', 'secret-buyer@example.com');
    const other = await order('Other Kit');
    const id = placed.order_id;
    for (const url of [
      `/checkout/order-received/${id}?key=order_wrong`,
      `/checkout/order-received/${id}`,
      `/checkout/order-received/${id}?key=`,
      `/checkout/order-received/${id}?key=${other.placed.order_key}`,
      `/checkout/order-received/${id}?key=${encodeURIComponent(`${placed.order_key}' OR 1=1--`)}`,
      `/checkout/order-received/${id}?key=${encodeURIComponent('<script>alert(1)</script>')}`,
      `/checkout/order-received/${id}?key=${placed.order_key}&key=${placed.order_key}`,
      `/checkout/order-received/999999?key=${placed.order_key}`,
      `/checkout/order-received/0?key=${placed.order_key}`,
      `/checkout/order-received/99999999999?key=${placed.order_key}`,
      `/checkout/order-received/abc?key=${placed.order_key}`,
      `/checkout/pay/${id}?key=order_wrong`,
      `/checkout/pay/${id}`,
      `/checkout/pay/999999?key=${placed.order_key}`,
      `/checkout/pay/-1?key=${placed.order_key}`,
    ]) {
      const res = await page(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['cache-control'], url).toBe('no-store');
      expect(res.body, url).toContain('Order not found');
      expect(res.body, url).not.toContain('Secret Kit');
      expect(res.body, url).not.toContain('secret-buyer');
      expect(res.body, url).not.toContain('<script>alert');
    }
  });
});

it('the order key of these addresses never reaches a log line', () => {
  expect(redactUrl('/checkout/order-received/5?key=order_abc')).toBe(
    '/checkout/order-received/5?key=[REDACTED]',
  );
  expect(redactUrl('/checkout/pay/5?x=1&key=order_abc')).toBe('/checkout/pay/5?x=1&key=[REDACTED]');
});

describe('pay page (/checkout/pay/<id>?key=)', () => {
  it('an unpaid order gets the payment form with its gateways and the script; no-store', async () => {
    const { placed } = await order('Pay Kit');
    const res = await page(`/checkout/pay/${placed.order_id}?key=${placed.order_key}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('data-store-page="pay"');
    expect(res.body).toContain('value="test_card"');
    expect(res.body).toContain('<script src="/store/assets/store.js" defer></script>');
    expect(res.body).not.toMatch(/<script>|\son[a-z]+=/);
  });

  it('a paid order has no form, only a link to its receipt', async () => {
    const { placed } = await order('Paid Kit');
    expect((await pay(placed.order_id, placed.order_key)).statusCode).toBe(200);
    const res = await page(`/checkout/pay/${placed.order_id}?key=${placed.order_key}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('data-store-page="pay"');
    expect(res.body).toContain(`href="/checkout/order-received/${placed.order_id}?key=${placed.order_key}"`);
  });

  it('a declined payment leaves the order payable: the page offers the form again', async () => {
    const { placed } = await order('Declined Kit');
    const declined = await pay(placed.order_id, placed.order_key, '4000000000000002');
    expect(declined.statusCode).toBe(402);
    expect(declined.json().error_code).toBe('payment_declined');
    const res = await page(`/checkout/pay/${placed.order_id}?key=${placed.order_key}`);
    expect(res.body).toContain('data-store-page="pay"');
  });
});

describe('cart and checkout pages', () => {
  it('are shells for the store script: no inline script or handler, no-store, the currency switcher', async () => {
    await setSettings(t, {
      currencies: [
        { code: 'EUR', symbol: '€', decimals: 2, rate: '0.9', rate_updated_at: new Date().toISOString() },
      ],
    });
    for (const url of ['/cart', '/checkout']) {
      const res = await page(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-store');
      expect(res.headers['content-security-policy'], url).toContain("script-src 'self'");
      expect(res.body, url).toContain('<script src="/store/assets/store.js" defer></script>');
      expect(res.body, url).not.toMatch(/<script>|\son[a-z]+=/);
      expect(res.body, url).toContain('role="alert"');
    }
    expect((await page('/cart')).body).toContain('<option value="EUR">');
    const script = await page('/store/assets/store.js');
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.body).toContain("'/cart/add'");
    // It parses as the classic script a <script src> runs (no import or export left by the compiler).
    expect(() => new Function(script.body)).not.toThrow();
  });

  it('checkout shows the enabled gateways, the terms link and, with a provider, its CAPTCHA widget and CSP', async () => {
    await setSettings(t, {
      store_terms_url: 'https://example.com/terms',
      captcha_provider: 'turnstile',
      captcha_site_key: 'site-key-1',
      captcha_secret: 'secret-1',
    } as never);
    const res = await page('/checkout');
    expect(res.body).toContain('value="test_card"');
    expect(res.body).toContain('href="https://example.com/terms"');
    expect(res.body).toContain('class="cf-turnstile" data-sitekey="site-key-1"');
    expect(res.headers['content-security-policy']).toContain('https://challenges.cloudflare.com');
    expect((await page('/cart')).headers['content-security-policy']).not.toContain('cloudflare');
    await setSettings(t, { captcha_provider: 'none' } as never);
    expect((await page('/checkout')).body).not.toContain('cf-turnstile');
  });

  it('a product page has the Add to cart form, with the variations to choose from', async () => {
    const p = await createProduct(t, {
      name: 'Variable Cart Kit',
      variations: [
        { name: 'One site', price: '10.00', attributes: { Sites: '1' } },
        { name: 'Ten sites', price: '50.00', attributes: { Sites: '10' } },
      ],
    } as never);
    const res = await page(`/products/${(p as { slug: string }).slug}`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(`data-store-page="product" data-product="${p.id}"`);
    expect(res.body).toContain('name="variation_id"');
    expect(res.body).toContain('Ten sites');
    expect(res.body).toContain('name="quantity"');
  });
});
