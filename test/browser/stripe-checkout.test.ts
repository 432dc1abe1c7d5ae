import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRIPE_KEYS, StripeStandIn, signed, stripeEvent, succeededIntent } from '../stripe/helpers.js';
import { skipBrowserTests } from './chromium.js';
import {
  api,
  checkBothWidths,
  context,
  enableOfflineGateways,
  page,
  server,
  setUpConsole,
  signInInBrowser,
} from './console.js';

const STRIPE_JS = 'https://js.stripe.com/v3/';

/**
 * What the page gets in place of Stripe.js: a `Stripe()` that records every call the page makes
 * (in sessionStorage, so the record outlives the move to the receipt) and a Payment Element that draws plain card fields, with confirmPayment
 * resolving as a card that needs no further step does.
 */
const STRIPE_JS_STAND_IN = `(function () {
  function record(call) {
    var calls = JSON.parse(sessionStorage.getItem('stripe-calls') || '[]');
    calls.push(call);
    sessionStorage.setItem('stripe-calls', JSON.stringify(calls));
  }
  function field(id, label, value) {
    var d = document.createElement('div'); d.className = 'field';
    var l = document.createElement('label'); l.htmlFor = id; l.textContent = label;
    var i = document.createElement('input'); i.id = id; i.value = value; i.readOnly = true;
    d.appendChild(l); d.appendChild(i); return d;
  }
  window.Stripe = function (key) {
    record(['Stripe', key]);
    return {
      elements: function (options) {
        record(['elements', options]);
        return {
          create: function (type) {
            record(['create', type]);
            return { mount: function (selector) {
              record(['mount', selector]);
              var box = document.querySelector(selector);
              box.appendChild(field('stand-in-card', 'Card number', '4242 4242 4242 4242'));
              box.appendChild(field('stand-in-expiry', 'Expiry (MM / YY)', '12 / 34'));
              box.setAttribute('data-mounted', type);
            } };
          },
          submit: function () { record(['submit']); return Promise.resolve({}); }
        };
      },
      confirmPayment: function (o) {
        record(['confirmPayment', { clientSecret: o.clientSecret, return_url: o.confirmParams.return_url, redirect: o.redirect }]);
        return Promise.resolve({ paymentIntent: { status: 'processing' } });
      }
    };
  };
})();`;

type Call = [string, ...unknown[]];
const stripeCalls = async () =>
  JSON.parse((await page.evaluate("sessionStorage.getItem('stripe-calls') || '[]'")) as string) as Call[];

describe.skipIf(skipBrowserTests)('Stripe on the checkout page', () => {
  const standIn = new StripeStandIn();
  const env: Record<string, string> = {};
  beforeAll(async () => {
    await standIn.start();
    env.STRIPE_API_URL = standIn.url;
  });
  setUpConsole({ env });
  afterAll(async () => standIn.stop());

  let slug = '';
  /** A fresh cart with the product, at checkout, the billing fields filled. */
  async function toCheckout(email: string) {
    await context.clearCookies();
    await page.goto(`${server.url}/products/${slug}`);
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${server.url}/cart`);
    await page.getByRole('link', { name: 'Proceed to checkout' }).click();
    await page.locator('#billing_first_name').waitFor();
    await page.fill('#billing_first_name', 'Grace');
    await page.fill('#billing_last_name', 'Hopper');
    await page.selectOption('#billing_country', 'GB');
    await page.fill('#billing_email', email);
  }

  it('without Stripe, checkout offers the other gateways and never asks Stripe for its script', async () => {
    const product = await api<{ slug: string }>('POST', '/products', {
      name: 'Backup Pro',
      type: 'simple',
      price: '19.00',
      licensing_enabled: 'yes',
      short_description: 'Nightly backups of a WordPress site.',
    });
    expect(product.status).toBe(201);
    slug = product.body.slug;
    // The offline gateways too, which a new store starts without.
    await enableOfflineGateways();
    const asked: string[] = [];
    const listen = (r: { url(): string }) => {
      if (r.url().includes('stripe.com')) asked.push(r.url());
    };
    page.on('request', listen);
    try {
      await toCheckout('no.stripe@example.com');
      const labels = await page.locator('#payment .radio label').allTextContents();
      expect(labels).toEqual(['Direct bank transfer', 'Check payments', 'Card (test gateway)']);
      expect(await page.locator('#stripe-js').count()).toBe(0);
      expect(await page.locator('#payment-element').count()).toBe(0);
      expect(asked).toEqual([]);
    } finally {
      page.off('request', listen);
    }
  }, 120_000);

  it('with Stripe, checkout loads Stripe.js, mounts the Payment Element, confirms the PaymentIntent, the signed event pays the order, and a dispute shows on the console order screen', async () => {
    expect((await api('PATCH', '/settings', STRIPE_KEYS)).status).toBe(200);
    expect((await api('PATCH', '/payment-gateways/stripe', { enabled: true })).status).toBe(200);
    await page.route(STRIPE_JS, (route) =>
      route.fulfill({ contentType: 'text/javascript', body: STRIPE_JS_STAND_IN }),
    );
    try {
      await toCheckout('stripe.buyer@example.com');
      // From the keyboard alone: Space chooses Stripe, Enter on the focused button places the order.
      await page.getByLabel('Card (Stripe)').focus();
      await page.keyboard.press('Space');
      expect(await page.getByLabel('Card (Stripe)').isChecked()).toBe(true);
      await page.locator('#payment-element[data-mounted="payment"]').waitFor();
      expect(await page.locator('#stripe-field').isVisible()).toBe(true);
      const calls = await stripeCalls();
      expect(calls).toEqual([
        ['Stripe', STRIPE_KEYS.stripe_publishable_key],
        ['elements', { mode: 'payment', amount: 1900, currency: 'usd' }],
        ['create', 'payment'],
        ['mount', '#payment-element'],
      ]);
      // Not a subscription: the page does not offer to keep the card.
      expect(await page.locator('#stripe-save').isHidden()).toBe(true);
      await checkBothWidths('checkout-stripe', 'store');

      await page.getByRole('button', { name: 'Place order' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/checkout\/order-received\/\d+\?key=/);
      const after = await stripeCalls();
      const [intent] = [...standIn.intents.values()];
      expect(after.slice(4)).toEqual([
        ['submit'],
        [
          'confirmPayment',
          { clientSecret: intent!.client_secret, return_url: page.url(), redirect: 'if_required' },
        ],
      ]);
      expect(await page.locator('[data-status]').getAttribute('data-status')).toBe('pending');

      const { payload, headers } = signed(
        stripeEvent('payment_intent.succeeded', succeededIntent(standIn, intent!.id)),
      );
      const res = await fetch(`${server.url}/v1/stripe/webhook`, { method: 'POST', headers, body: payload });
      expect(await res.json()).toEqual({ received: true, result: 'handled' });
      await page.reload();
      await page.locator('.license-key').waitFor();
      expect(await page.locator('[data-status]').getAttribute('data-status')).toBe('processing');

      // A chargeback: the console's order screen shows the order disputed, and the dispute's note.
      const orderId = Number(new URL(page.url()).pathname.split('/').pop());
      const dispute = signed(
        stripeEvent('charge.dispute.created', {
          id: 'dp_browser',
          object: 'dispute',
          amount: 1900,
          currency: 'usd',
          payment_intent: intent!.id,
          reason: 'fraudulent',
          status: 'needs_response',
        }),
      );
      const disputed = await fetch(`${server.url}/v1/stripe/webhook`, {
        method: 'POST',
        headers: dispute.headers,
        body: dispute.payload,
      });
      expect(await disputed.json()).toEqual({ received: true, result: 'handled' });
      await signInInBrowser(`/admin/orders/${orderId}`);
      await page.getByText('Disputed', { exact: true }).waitFor();
      await page.getByText(/Stripe dispute dp_browser opened/).waitFor();
      await checkBothWidths('order-disputed');
    } finally {
      await page.unroute(STRIPE_JS);
    }
  }, 120_000);

  it('a buyer keeps the card for a subscription, sees it under Saved cards, chooses another for the renewals and removes one, from the keyboard', async () => {
    expect((await api('PATCH', '/settings', STRIPE_KEYS)).status).toBe(200);
    expect((await api('PATCH', '/payment-gateways/stripe', { enabled: true })).status).toBe(200);
    const buyer = { email: 'kept.card@example.com', password: 'kept-card-password-1' };
    expect((await api('POST', '/users', { ...buyer, role: 'customer', first_name: 'Kay' })).status).toBe(201);
    const product = await api<{ id: number; slug: string }>('POST', '/products', {
      name: 'Uptime Monitor',
      type: 'subscription',
      price: '9.00',
      subscription: { period: 'month', interval: 1 },
      licensing_enabled: 'yes',
    });
    expect(product.status).toBe(201);
    await page.route(STRIPE_JS, (route) =>
      route.fulfill({ contentType: 'text/javascript', body: STRIPE_JS_STAND_IN }),
    );
    try {
      await context.clearCookies();
      await page.goto(`${server.url}/account/subscriptions`);
      await page.locator('#email').waitFor();
      await page.fill('#email', buyer.email);
      await page.fill('#password', buyer.password);
      await page.locator('#password').press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Subscriptions' }).waitFor();
      await page.goto(`${server.url}/products/${product.body.slug}`);
      await page.getByRole('button', { name: 'Add to cart' }).click();
      await page.waitForURL(`${server.url}/cart`);
      await page.getByRole('link', { name: 'Proceed to checkout' }).click();
      await page.locator('#billing_first_name').waitFor();
      await page.fill('#billing_first_name', 'Kay');
      await page.fill('#billing_last_name', 'Kept');
      await page.selectOption('#billing_country', 'GB');
      await page.fill('#billing_email', buyer.email);
      await page.getByLabel('Card (Stripe)').check();
      await page.locator('#payment-element[data-mounted="payment"]').waitFor();
      await page.getByLabel("Keep this card to pay my subscription's renewals").check();
      await page.getByRole('button', { name: 'Place order' }).click();
      await page.waitForURL(/\/checkout\/order-received\/\d+\?key=/);
      const intent = [...standIn.intents.values()].at(-1)!;
      expect(intent.customer).toEqual(expect.stringMatching(/^cus_/));
      const customer = intent.customer as string;
      standIn.addCard(customer, { id: 'pm_keptvisa', brand: 'visa', last4: '4242' });
      const { payload, headers } = signed(
        stripeEvent(
          'payment_intent.succeeded',
          succeededIntent(standIn, intent.id, { payment_method: 'pm_keptvisa' }),
        ),
      );
      const res = await fetch(`${server.url}/v1/stripe/webhook`, { method: 'POST', headers, body: payload });
      expect(await res.json()).toEqual({ received: true, result: 'handled' });
      // A second card kept at another payment (added at Stripe here).
      standIn.addCard(customer, { id: 'pm_keptmc', brand: 'mastercard', last4: '5555', exp_year: 2032 });

      await page.goto(`${server.url}/account/subscriptions`);
      const saved = page.getByRole('region', { name: 'Saved cards' });
      await saved.waitFor();
      expect(await saved.getByRole('listitem').allTextContents()).toEqual([
        expect.stringMatching(/Visa ending in 4242, expires 12\/2031\s*Renews #\d+/),
        expect.stringMatching(/Mastercard ending in 5555, expires 12\/2032/),
      ]);
      await checkBothWidths('account-cards', 'store');

      // From the keyboard: choose the Mastercard for the subscription's renewals, then save.
      const choice = page.getByLabel('Renews on');
      await choice.focus();
      await choice.selectOption({ label: 'Mastercard ending in 5555' });
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.getByRole('status').waitFor();
      expect(await page.getByLabel('Renews on').inputValue()).toBe('pm_keptmc');

      // Remove the Visa: Stripe detaches it, and it is gone from the page.
      await page.getByRole('button', { name: 'Remove Visa ending in 4242' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('status').waitFor();
      expect(standIn.paymentMethods.get('pm_keptvisa')!.customer).toBeNull();
      expect(await page.getByRole('region', { name: 'Saved cards' }).getByRole('listitem').count()).toBe(1);
      await checkBothWidths('account-cards-removed', 'store');
    } finally {
      await page.unroute(STRIPE_JS);
    }
  }, 120_000);
});
