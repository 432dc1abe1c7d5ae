import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { payOrder } from '../checkout/helpers.js';
import { adminOk, type TestApp } from '../helpers/app.js';
import { BILLING, createOrder, createProduct, uniqueEmail } from '../helpers/factories.js';
import {
  deliver,
  type StripeStandIn,
  startStripeStore,
  stopStripeStore,
  stripeEvent,
  succeededIntent,
} from '../stripe/helpers.js';

/** The paying card's country joins the order's evidence of location when Stripe gives it (docs/taxes.md). */

let t: TestApp;
let standIn: StripeStandIn;
beforeAll(async () => {
  ({ t, standIn } = await startStripeStore());
});
afterAll(() => stopStripeStore({ t, standIn }));

interface OrderView {
  status: string;
  tax_evidence: { billing_country: string | null; card_country: string | null };
}

/** A guest's Stripe order from France, its PaymentIntent made; answers the order id and intent. */
async function stripeOrder() {
  const product = await createProduct(t, { price: '25.00' });
  const b = new Browser(t);
  const out = await createOrder(
    t,
    {
      items: [{ product_id: product.id, qty: 1 }],
      billing: { ...BILLING, country: 'FR', email: uniqueEmail('card') },
      payment_method: 'stripe',
    },
    b,
  );
  const pay = await payOrder(b, out.order_id, { key: out.order_key, payment_method: 'stripe' });
  return { id: out.order_id, intent: (pay.json().next as { payment_intent: string }).payment_intent };
}

describe('card country', () => {
  it("records the PaymentMethod's card country when the payment succeeds", async () => {
    const { id, intent } = await stripeOrder();
    standIn.addCard('cus_card', { id: `pm_be${id}`, country: 'BE' });
    const res = await deliver(
      t,
      stripeEvent(
        'payment_intent.succeeded',
        succeededIntent(standIn, intent, { payment_method: `pm_be${id}` }),
      ),
    );
    expect(res.json()).toEqual({ received: true, result: 'handled' });
    const o = await adminOk<OrderView>(t, 'GET', `/orders/${id}`);
    expect(o.status).toBe('processing');
    expect(o.tax_evidence).toMatchObject({ billing_country: 'FR', card_country: 'BE' });
  });

  it('a PaymentMethod Stripe does not find leaves the card country unknown; the order is paid all the same', async () => {
    const { id, intent } = await stripeOrder();
    const res = await deliver(
      t,
      stripeEvent(
        'payment_intent.succeeded',
        succeededIntent(standIn, intent, { payment_method: 'pm_gone' }),
      ),
    );
    expect(res.json()).toEqual({ received: true, result: 'handled' });
    const o = await adminOk<OrderView>(t, 'GET', `/orders/${id}`);
    expect(o.status).toBe('processing');
    expect(o.tax_evidence.card_country).toBeNull();
  });
});
