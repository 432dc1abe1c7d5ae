import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { licensesOfOrder, payOrder } from '../checkout/helpers.js';
import { admin, adminOk, expectError, setSettings, type TestApp } from '../helpers/app.js';
import { BILLING, createCustomer, createOrder, createProduct, uniqueEmail } from '../helpers/factories.js';
import { waitFor } from '../helpers/wait.js';
import {
  deliver,
  STRIPE_KEYS,
  type StripeStandIn,
  signed,
  startStripeStore,
  stopStripeStore,
  stripeEvent,
  succeededIntent,
} from './helpers.js';

let t: TestApp;
let standIn: StripeStandIn;
beforeAll(async () => {
  ({ t, standIn } = await startStripeStore({ captureLogs: true }));
});
afterAll(() => stopStripeStore({ t, standIn }));

const db = () => t.app.services.database.db;

interface Order {
  status: string;
  total: string;
  refunded_total: string;
  disputed_at: string | null;
  payment_method: string;
}
interface Note {
  kind: string;
  body: string;
}
interface Next {
  gateway: string;
  publishable_key: string;
  client_secret: string;
  payment_intent: string;
}

const getOrder = (id: number) => adminOk<Order>(t, 'GET', `/orders/${id}`);
const notesOf = async (id: number) =>
  (await adminOk<{ notes: Note[] }>(t, 'GET', `/orders/${id}/notes`)).notes;
const revokedEvents = async () =>
  (await db().selectFrom('webhook_events').select('payload').where('event', '=', 'license.revoked').execute())
    .length;

/** A signed-in customer's Stripe order of `product` (pending), and its pay-order call. */
async function stripeOrder(opts: { price?: string; stock?: number; subscription?: boolean } = {}) {
  const product = await createProduct(t, {
    price: opts.price ?? '25.00',
    activation_limit: 1,
    ...(opts.stock === undefined ? {} : { stock_quantity: opts.stock }),
    ...(opts.subscription ? { type: 'subscription', subscription: { period: 'month', interval: 1 } } : {}),
  });
  const email = uniqueEmail('stripe');
  const customer = await createCustomer(t, email);
  const b = new Browser(t);
  await b.login(email, customer.password);
  const out = await createOrder(
    t,
    { items: [{ product_id: product.id, qty: 1 }], billing: { ...BILLING, email }, payment_method: 'stripe' },
    b,
  );
  const pay = (data: Record<string, unknown> = {}) =>
    payOrder(b, out.order_id, { key: out.order_key, payment_method: 'stripe', payment_data: data });
  return { product, customer, b, id: out.order_id, key: out.order_key, pay };
}

/** Pays a Stripe order: the PaymentIntent, then its succeeded event. */
async function paidStripeOrder(opts: Parameters<typeof stripeOrder>[0] = {}) {
  const order = await stripeOrder(opts);
  const next = (await order.pay()).json().next as Next;
  const res = await deliver(
    t,
    stripeEvent('payment_intent.succeeded', succeededIntent(standIn, next.payment_intent)),
  );
  expect(res.json()).toEqual({ received: true, result: 'handled' });
  return { ...order, intent: next.payment_intent };
}

describe('settings', () => {
  it('keeps the secret keys sealed with the vault key, answers them only as set or not, and never logs them', async () => {
    const shown = await adminOk<Record<string, string>>(t, 'GET', '/settings');
    expect(shown).toMatchObject({
      stripe_publishable_key: STRIPE_KEYS.stripe_publishable_key,
      stripe_secret_key: '********',
      stripe_webhook_secret: '********',
    });
    const rows = await db()
      .selectFrom('settings')
      .select(['key', 'value'])
      .where('key', 'in', ['stripe_secret_key', 'stripe_webhook_secret'])
      .execute();
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.value).toMatch(/^"sealed:/);
      expect(row.value).not.toContain('tollgate');
    }
    // The mask sent back keeps the stored secret (the console sends back what it was shown).
    await setSettings(t, { stripe_secret_key: '********', stripe_statement_descriptor: 'TOLLGATE' });
    expect(await t.app.services.settings.secret('stripe_secret_key')).toBe(STRIPE_KEYS.stripe_secret_key);
    const audit = JSON.stringify(await db().selectFrom('audit_events').selectAll().execute());
    expect(audit).not.toContain(STRIPE_KEYS.stripe_secret_key);
    expect(audit).not.toContain(STRIPE_KEYS.stripe_webhook_secret);
    expectError(
      await admin(t, 'PATCH', '/settings', { stripe_secret_key: 'not a key' }),
      400,
      'rest_invalid_param',
    );
    expectError(await admin(t, 'PATCH', '/settings', { stripe_secret_key: 42 }), 400, 'rest_invalid_param');
    expectError(
      await admin(t, 'PATCH', '/settings', { stripe_statement_descriptor: 'A'.repeat(23) }),
      400,
      'rest_invalid_param',
    );
  });
});

describe('paying an order with Stripe', () => {
  it('makes one PaymentIntent per order under a key derived from it: a retried payment gets the same one', async () => {
    const order = await stripeOrder();
    const before = standIn.callsTo('POST /v1/payment_intents').length;
    const [first, second] = await Promise.all([order.pay(), order.pay()]);
    expect(first.statusCode, first.body).toBe(200);
    const a = first.json().next as Next;
    const b = second.json().next as Next;
    expect(a).toMatchObject({ gateway: 'stripe', publishable_key: STRIPE_KEYS.stripe_publishable_key });
    expect(a.client_secret).toMatch(/^pi_.+_secret_/);
    expect(b.payment_intent).toBe(a.payment_intent);
    const third = (await order.pay()).json().next as Next;
    expect(third.payment_intent).toBe(a.payment_intent);
    const creates = standIn.callsTo('POST /v1/payment_intents').slice(before);
    // Two submits at once may both ask; they send the same idempotency key, so Stripe makes one.
    expect(new Set(creates.map((c) => c.idempotencyKey)).size).toBe(1);
    expect(creates[0]!.idempotencyKey).toMatch(new RegExp(`^tollgate-order-${order.id}-`));
    expect(creates[0]!.authorization).toBe(`Bearer ${STRIPE_KEYS.stripe_secret_key}`);
    expect(creates[0]!.params).toMatchObject({
      amount: '2500',
      currency: 'usd',
      'metadata[order_id]': String(order.id),
      'automatic_payment_methods[enabled]': 'true',
      statement_descriptor_suffix: 'TOLLGATE',
    });
    // Not paid until Stripe says so.
    expect((await getOrder(order.id)).status).toBe('pending');
    expect(await licensesOfOrder(t, order.id)).toHaveLength(0);
  });

  it('a succeeded event delivered three times at once pays the order and issues its license once', async () => {
    const order = await stripeOrder();
    const next = (await order.pay()).json().next as Next;
    const event = stripeEvent('payment_intent.succeeded', succeededIntent(standIn, next.payment_intent));
    const answers = await Promise.all([deliver(t, event), deliver(t, event), deliver(t, event)]);
    for (const a of answers) expect(a.statusCode, a.body).toBe(200);
    expect(answers.map((a) => a.json().result).sort()).toEqual(['duplicate', 'duplicate', 'handled']);
    expect(await getOrder(order.id)).toMatchObject({ status: 'processing', payment_method: 'stripe' });
    expect(await licensesOfOrder(t, order.id)).toHaveLength(1);
    const notes = await notesOf(order.id);
    expect(notes.filter((n) => n.kind === 'payment' && n.body.includes(next.payment_intent))).toHaveLength(1);
    // A later delivery still changes nothing.
    expect((await deliver(t, event)).json().result).toBe('duplicate');
    expect(await licensesOfOrder(t, order.id)).toHaveLength(1);
  });

  it('a wrongly signed, stale or unsigned event is refused and changes nothing', async () => {
    const order = await stripeOrder();
    const next = (await order.pay()).json().next as Next;
    const event = stripeEvent('payment_intent.succeeded', succeededIntent(standIn, next.payment_intent));
    expectError(await deliver(t, event, { secret: 'whsec_someoneElse' }), 400, 'stripe_signature_invalid');
    const stale = Math.floor(Date.now() / 1000) - 600;
    expectError(await deliver(t, event, { timestamp: stale }), 400, 'stripe_signature_invalid');
    const { payload, headers } = signed(event);
    const unsigned = await t.app.inject({
      method: 'POST',
      url: '/v1/stripe/webhook',
      payload,
      headers: { 'content-type': headers['content-type']! },
    });
    expectError(unsigned, 400, 'stripe_signature_invalid');
    // The signature covers the exact bytes: a body changed after signing is refused.
    const tampered = await t.app.inject({
      method: 'POST',
      url: '/v1/stripe/webhook',
      payload: payload.replace('"livemode":false', '"livemode":true'),
      headers,
    });
    expectError(tampered, 400, 'stripe_signature_invalid');
    expect((await getOrder(order.id)).status).toBe('pending');
    expect(await licensesOfOrder(t, order.id)).toHaveLength(0);
    const claimed = await db().selectFrom('stripe_events').select('id').where('id', '=', event.id).execute();
    expect(claimed).toHaveLength(0);
    // The same event, signed correctly, then pays it.
    expect((await deliver(t, event)).json().result).toBe('handled');
    expect((await getOrder(order.id)).status).toBe('processing');
  });

  it('bad input to the webhook route gets its own 4xx', async () => {
    // Signed, but not JSON.
    const text = 'not json';
    const { headers } = signed({});
    const header = Stripe.webhooks.generateTestHeaderString({
      payload: text,
      secret: STRIPE_KEYS.stripe_webhook_secret,
    });
    const notJson = await t.app.inject({
      method: 'POST',
      url: '/v1/stripe/webhook',
      payload: text,
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
    });
    expectError(notJson, 400, 'rest_invalid_json');
    const wrongType = await t.app.inject({
      method: 'POST',
      url: '/v1/stripe/webhook',
      payload: 'x=1',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'stripe-signature': headers['stripe-signature']!,
      },
    });
    expectError(wrongType, 415, 'rest_unsupported_media_type');
    const huge = await t.app.inject({
      method: 'POST',
      url: '/v1/stripe/webhook',
      payload: JSON.stringify({ pad: 'x'.repeat(300 * 1024) }),
      headers,
    });
    expectError(huge, 413, 'rest_body_too_large');
    // Signed, but not shaped as an event: no id, or an object of the wrong type.
    expectError(
      await deliver(t, { type: 'payment_intent.succeeded', data: { object: {} } }),
      400,
      'rest_invalid_param',
    );
    expectError(
      await deliver(
        t,
        stripeEvent('payment_intent.succeeded', { id: 42 } as unknown as Record<string, unknown>),
      ),
      400,
      'rest_invalid_param',
    );
    // An event Tollgate does not act on, and a PaymentIntent it did not make, are acknowledged.
    expect(
      (await deliver(t, stripeEvent('customer.created', { id: 'cus_x', object: 'customer' }))).json(),
    ).toEqual({
      received: true,
      result: 'ignored',
    });
    const foreign = stripeEvent('payment_intent.succeeded', { id: 'pi_foreign', object: 'payment_intent' });
    expect((await deliver(t, foreign)).json().result).toBe('ignored');
  });

  it('a failed payment leaves the order unpaid with its stock released; paying again reuses the PaymentIntent', async () => {
    const order = await stripeOrder({ stock: 5 });
    const next = (await order.pay()).json().next as Next;
    const stock = async () =>
      (await adminOk<{ stock_quantity: number }>(t, 'GET', `/products/${order.product.id}`)).stock_quantity;
    expect(await stock()).toBe(4);
    const intent = {
      ...standIn.intents.get(next.payment_intent)!,
      status: 'requires_payment_method',
      last_payment_error: { code: 'card_declined', message: 'Your card was declined.' },
    };
    const res = await deliver(t, stripeEvent('payment_intent.payment_failed', intent));
    expect(res.json().result).toBe('handled');
    expect((await getOrder(order.id)).status).toBe('failed');
    expect(await stock()).toBe(5);
    expect((await notesOf(order.id)).some((n) => n.body.includes('Your card was declined.'))).toBe(true);
    // The customer tries again: the same PaymentIntent, the stock held again, then paid.
    const again = (await order.pay()).json().next as Next;
    expect(again.payment_intent).toBe(next.payment_intent);
    expect(await stock()).toBe(4);
    await deliver(t, stripeEvent('payment_intent.succeeded', succeededIntent(standIn, next.payment_intent)));
    expect((await getOrder(order.id)).status).toBe('processing');
    expect(await stock()).toBe(4);
  });

  it('Stripe refusing the PaymentIntent, or keys not set, refuse the payment with their codes and leave the order pending', async () => {
    const order = await stripeOrder();
    standIn.refusePaymentIntents = true;
    try {
      const res = await order.pay();
      expect(res.statusCode, res.body).toBe(502);
      expect(res.json()).toMatchObject({ error_code: 'stripe_unavailable' });
    } finally {
      standIn.refusePaymentIntents = false;
    }
    await setSettings(t, { stripe_secret_key: '' });
    try {
      const res = await order.pay();
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ error_code: 'gateway_unavailable' });
    } finally {
      await setSettings(t, { stripe_secret_key: STRIPE_KEYS.stripe_secret_key });
    }
    expect((await getOrder(order.id)).status).toBe('pending');
    expect(
      await db().selectFrom('stripe_payments').select('order_id').where('order_id', '=', order.id).execute(),
    ).toEqual([]);
  });

  it('an amount that is not the order total does not pay it', async () => {
    const order = await stripeOrder();
    const next = (await order.pay()).json().next as Next;
    await deliver(
      t,
      stripeEvent(
        'payment_intent.succeeded',
        succeededIntent(standIn, next.payment_intent, { amount_received: 100 }),
      ),
    );
    expect((await getOrder(order.id)).status).toBe('pending');
    expect((await notesOf(order.id)).some((n) => n.body.includes('does not match'))).toBe(true);
  });
});

describe('refunds and disputes of Stripe orders', () => {
  it("a full refund goes through Stripe's refund API under the refund's key, revokes the licenses and cancels the subscription", async () => {
    const order = await paidStripeOrder({ subscription: true, price: '10.00' });
    const sub = await db()
      .selectFrom('subscriptions')
      .select(['id', 'status'])
      .where('parent_order_id', '=', order.id)
      .executeTakeFirstOrThrow();
    expect(sub.status).toBe('active');
    expect(await licensesOfOrder(t, order.id)).toHaveLength(1);
    const revoked = await revokedEvents();
    const res = await admin(t, 'POST', `/orders/${order.id}/refunds`, {
      amount: '10.00',
      reason: 'Changed mind',
    });
    expect(res.statusCode, res.body).toBe(201);
    const call = standIn.callsTo('POST /v1/refunds').at(-1)!;
    expect(call.params).toMatchObject({ payment_intent: order.intent, amount: '1000' });
    expect(call.idempotencyKey).toBe(`tollgate-refund-${order.id}-0-1000`);
    expect((await getOrder(order.id)).status).toBe('refunded');
    expect((await licensesOfOrder(t, order.id))[0]!.status).toBe('revoked');
    expect(await revokedEvents()).toBe(revoked + 1);
    expect((await adminOk<{ status: string }>(t, 'GET', `/subscriptions/${sub.id}`)).status).toBe(
      'cancelled',
    );
    const note = (await notesOf(order.id)).find((n) => n.kind === 'refund')!;
    expect(note.body).toContain(standIn.refunds.at(-1)!.id);
  });

  it('a partial refund leaves the licenses and the order as they are; a refused refund records nothing', async () => {
    const order = await paidStripeOrder({ price: '30.00' });
    const res = await admin(t, 'POST', `/orders/${order.id}/refunds`, { amount: '10.00' });
    expect(res.statusCode, res.body).toBe(201);
    expect(await getOrder(order.id)).toMatchObject({ status: 'processing', refunded_total: '10.00' });
    expect((await licensesOfOrder(t, order.id))[0]!.status).toBe('active');
    expect(standIn.callsTo('POST /v1/refunds').at(-1)!.idempotencyKey).toBe(
      `tollgate-refund-${order.id}-0-1000`,
    );
    standIn.refuseRefunds = true;
    try {
      expectError(
        await admin(t, 'POST', `/orders/${order.id}/refunds`, { amount: '5.00' }),
        502,
        'stripe_unavailable',
      );
    } finally {
      standIn.refuseRefunds = false;
    }
    expect(await getOrder(order.id)).toMatchObject({ status: 'processing', refunded_total: '10.00' });
    expect(
      (await adminOk<{ refunds: unknown[] }>(t, 'GET', `/orders/${order.id}/refunds`)).refunds,
    ).toHaveLength(1);
  });

  it('a refund Stripe made but whose answer was lost is recorded once when retried, never refunded twice', async () => {
    const order = await paidStripeOrder({ price: '30.00' });
    const made = standIn.refunds.length;
    // The SDK's own retry loses its answer too: the refund rolls back, Stripe has refunded once.
    standIn.dropRefundAnswers = 2;
    expectError(
      await admin(t, 'POST', `/orders/${order.id}/refunds`, { amount: '30.00' }),
      502,
      'stripe_unavailable',
    );
    expect(standIn.refunds.length).toBe(made + 1);
    expect(await getOrder(order.id)).toMatchObject({ status: 'processing', refunded_total: '0.00' });
    // The administrator's retry sends the same key: Stripe answers the refund it made.
    const retry = await admin(t, 'POST', `/orders/${order.id}/refunds`, { amount: '30.00' });
    expect(retry.statusCode, retry.body).toBe(201);
    expect(standIn.refunds.length).toBe(made + 1);
    const keys = standIn
      .callsTo('POST /v1/refunds')
      .slice(-3)
      .map((c) => c.idempotencyKey);
    expect(new Set(keys)).toEqual(new Set([`tollgate-refund-${order.id}-0-3000`]));
    expect((await getOrder(order.id)).status).toBe('refunded');
  });

  it('a dispute flags the order, leaves a note and suspends its licenses by refund_license_action', async () => {
    await setSettings(t, { refund_license_action: 'suspend' });
    try {
      const order = await paidStripeOrder();
      const dispute = {
        id: 'dp_test1',
        object: 'dispute',
        amount: 2500,
        currency: 'usd',
        charge: 'ch_test1',
        payment_intent: order.intent,
        reason: 'fraudulent',
        status: 'needs_response',
      };
      const event = stripeEvent('charge.dispute.created', dispute);
      expect((await deliver(t, event)).json().result).toBe('handled');
      expect((await deliver(t, event)).json().result).toBe('duplicate');
      const after = await getOrder(order.id);
      expect(after.status).toBe('processing');
      expect(after.disputed_at).toEqual(expect.any(String));
      const notes = (await notesOf(order.id)).filter((n) => n.kind === 'dispute');
      expect(notes).toHaveLength(1);
      expect(notes[0]!.body).toContain('dp_test1');
      expect((await licensesOfOrder(t, order.id))[0]!.status).toBe('suspended');
    } finally {
      await setSettings(t, { refund_license_action: 'revoke' });
    }
  });
});

describe('closed disputes', () => {
  const dispute = (intent: string, status: string, amount = 2500) => ({
    id: `dp_${intent.slice(3)}`,
    object: 'dispute',
    amount,
    currency: 'usd',
    charge: `ch_${intent.slice(3)}`,
    payment_intent: intent,
    reason: 'fraudulent',
    status,
  });
  const orderAudit = (id: number) =>
    db()
      .selectFrom('audit_events')
      .select(['action', 'actor_kind', 'actor_email'])
      .where('entity_type', '=', 'order')
      .where('entity_id', '=', id)
      .execute();

  it('won: the dispute flag is cleared and the licenses it suspended are active again, once', async () => {
    await setSettings(t, { refund_license_action: 'suspend' });
    try {
      const order = await paidStripeOrder();
      await deliver(t, stripeEvent('charge.dispute.created', dispute(order.intent, 'needs_response')));
      expect((await licensesOfOrder(t, order.id))[0]!.status).toBe('suspended');
      const won = stripeEvent('charge.dispute.closed', dispute(order.intent, 'won'));
      expect((await deliver(t, won)).json().result).toBe('handled');
      expect((await deliver(t, won)).json().result).toBe('duplicate');
      const after = await getOrder(order.id);
      expect(after).toMatchObject({ status: 'processing', disputed_at: null, refunded_total: '0.00' });
      expect((await licensesOfOrder(t, order.id))[0]!.status).toBe('active');
      expect((await notesOf(order.id)).filter((n) => n.kind === 'dispute')).toHaveLength(2);
      expect(await orderAudit(order.id)).toContainEqual({
        action: 'dispute_won',
        actor_kind: 'system',
        actor_email: 'stripe',
      });
    } finally {
      await setSettings(t, { refund_license_action: 'revoke' });
    }
  });

  it('won after the dispute revoked the licenses: a revocation is for good, the licenses stay revoked', async () => {
    const order = await paidStripeOrder();
    await deliver(t, stripeEvent('charge.dispute.created', dispute(order.intent, 'needs_response')));
    await deliver(t, stripeEvent('charge.dispute.closed', dispute(order.intent, 'won')));
    expect((await getOrder(order.id)).disputed_at).toBeNull();
    expect((await licensesOfOrder(t, order.id))[0]!.status).toBe('revoked');
  });

  it('lost: the amount the bank took is a refund at the provider; the whole payment lost refunds the order, once', async () => {
    const order = await paidStripeOrder();
    await deliver(t, stripeEvent('charge.dispute.created', dispute(order.intent, 'needs_response')));
    const lost = stripeEvent('charge.dispute.closed', dispute(order.intent, 'lost'));
    expect((await deliver(t, lost)).json().result).toBe('handled');
    expect((await deliver(t, lost)).json().result).toBe('duplicate');
    const after = await getOrder(order.id);
    expect(after).toMatchObject({ status: 'refunded', refunded_total: '25.00' });
    expect(after.disputed_at).toEqual(expect.any(String));
    const refunds = (
      await adminOk<{ refunds: { amount: string; full: boolean }[] }>(t, 'GET', `/orders/${order.id}/refunds`)
    ).refunds;
    expect(refunds).toMatchObject([{ amount: '25.00', full: true }]);
    expect((await licensesOfOrder(t, order.id))[0]!.status).toBe('revoked');
    expect((await orderAudit(order.id)).map((a) => a.action)).toContain('dispute_lost');
    // Stripe was not asked to refund anything: the bank already took the money.
    expect(
      standIn.callsTo('POST /v1/refunds').filter((c) => c.params.payment_intent === order.intent),
    ).toHaveLength(0);
  });

  it('lost in part: that part is recorded, the order stays paid', async () => {
    const order = await paidStripeOrder({ price: '40.00' });
    await deliver(t, stripeEvent('charge.dispute.closed', dispute(order.intent, 'lost', 1000)));
    expect(await getOrder(order.id)).toMatchObject({ status: 'processing', refunded_total: '10.00' });
    expect((await licensesOfOrder(t, order.id))[0]!.status).toBe('active');
  });

  it('a status that decides nothing, another currency or a PaymentIntent not ours is ignored', async () => {
    const order = await paidStripeOrder();
    for (const object of [
      dispute(order.intent, 'under_review'),
      { ...dispute(order.intent, 'lost'), currency: 'eur' },
      dispute('pi_notours123', 'lost'),
    ]) {
      expect((await deliver(t, stripeEvent('charge.dispute.closed', object))).json().result).toBe('ignored');
    }
    expect(await getOrder(order.id)).toMatchObject({ status: 'processing', refunded_total: '0.00' });
  });
});

/**
 * The charge of a paid order as Stripe's charge.refunded event carries it (Stripe.Charge):
 * `amount_refunded` is everything refunded so far.
 */
function refundedCharge(intent: string, amount: number, refunded: number): Stripe.Charge {
  return {
    id: `ch_${intent.slice(3)}`,
    object: 'charge',
    amount,
    amount_captured: amount,
    amount_refunded: refunded,
    captured: true,
    currency: 'usd',
    paid: true,
    payment_intent: intent,
    payment_method: 'pm_card_visa',
    refunded: refunded === amount,
    status: 'succeeded',
    livemode: false,
    created: Math.floor(Date.now() / 1000),
  } as Stripe.Charge;
}

const refundsOf = (id: number) =>
  db()
    .selectFrom('order_refunds')
    .select(['amount', 'full_refund'])
    .where('order_id', '=', id)
    .orderBy('id')
    .execute();

describe('refunds made in the Stripe Dashboard (charge.refunded)', () => {
  it('a partial refund, then the rest: recorded once each, the full one applies refund_license_action', async () => {
    await setSettings(t, { refund_license_action: 'suspend' });
    try {
      const order = await paidStripeOrder();
      const partial = stripeEvent('charge.refunded', refundedCharge(order.intent, 2500, 1000) as never);
      expect((await deliver(t, partial)).json().result).toBe('handled');
      expect((await deliver(t, partial)).json().result).toBe('duplicate');
      expect(await getOrder(order.id)).toMatchObject({ status: 'processing', refunded_total: '10.00' });
      expect((await licensesOfOrder(t, order.id))[0]!.status).toBe('active');

      const rest = stripeEvent('charge.refunded', refundedCharge(order.intent, 2500, 2500) as never);
      expect((await deliver(t, rest)).json().result).toBe('handled');
      expect(await getOrder(order.id)).toMatchObject({ status: 'refunded', refunded_total: '25.00' });
      expect((await licensesOfOrder(t, order.id))[0]!.status).toBe('suspended');
      expect((await refundsOf(order.id)).map((r) => [Number(r.amount), Number(r.full_refund)])).toEqual([
        [1000, 0],
        [1500, 1],
      ]);
      // The older event arriving late finds nothing left to record.
      const late = stripeEvent('charge.refunded', refundedCharge(order.intent, 2500, 1000) as never);
      expect((await deliver(t, late)).json().result).toBe('handled');
      expect(await refundsOf(order.id)).toHaveLength(2);
      expect((await notesOf(order.id)).filter((n) => n.kind === 'refund')).toHaveLength(2);
      // No call to Stripe: the money was given back there.
      expect(standIn.callsTo('POST /v1/refunds').some((c) => c.params.payment_intent === order.intent)).toBe(
        false,
      );
    } finally {
      await setSettings(t, { refund_license_action: 'revoke' });
    }
  });

  it('a full refund delivered as several events at once is recorded once; revoke and keep follow the setting', async () => {
    for (const action of ['revoke', 'keep'] as const) {
      await setSettings(t, { refund_license_action: action });
      const order = await paidStripeOrder();
      const revokedBefore = await revokedEvents();
      const charge = refundedCharge(order.intent, 2500, 2500) as never;
      const same = stripeEvent('charge.refunded', charge);
      const answers = await Promise.all([
        deliver(t, same),
        deliver(t, same),
        deliver(t, stripeEvent('charge.refunded', charge)),
        deliver(t, stripeEvent('charge.refunded', charge)),
      ]);
      for (const a of answers) expect(a.statusCode, a.body).toBe(200);
      expect(await getOrder(order.id)).toMatchObject({ status: 'refunded', refunded_total: '25.00' });
      expect(await refundsOf(order.id)).toHaveLength(1);
      const license = (await licensesOfOrder(t, order.id))[0]!;
      expect(license.status).toBe(action === 'revoke' ? 'revoked' : 'active');
      expect(await revokedEvents()).toBe(revokedBefore + (action === 'revoke' ? 1 : 0));
    }
    await setSettings(t, { refund_license_action: 'revoke' });
  });

  it('a refund made from the console is not recorded again by its charge.refunded event', async () => {
    const order = await paidStripeOrder();
    const res = await admin(t, 'POST', `/orders/${order.id}/refunds`, { amount: '5.00' });
    expect(res.statusCode, res.body).toBe(201);
    const event = stripeEvent('charge.refunded', refundedCharge(order.intent, 2500, 500) as never);
    expect((await deliver(t, event)).json().result).toBe('handled');
    expect(await refundsOf(order.id)).toHaveLength(1);
    expect(await getOrder(order.id)).toMatchObject({ status: 'processing', refunded_total: '5.00' });
  });

  it('a charge of a PaymentIntent that is not ours is ignored', async () => {
    const event = stripeEvent('charge.refunded', refundedCharge('pi_someoneElse', 900, 900) as never);
    expect((await deliver(t, event)).json()).toEqual({ received: true, result: 'ignored' });
  });
});

describe('the API document and secrets', () => {
  it('lists the webhook route in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(doc.paths['/v1/stripe/webhook']?.post).toBeDefined();
  });

  it('no log line holds a Stripe secret', async () => {
    // Stripe returns the customer to the receipt with the client secret in its address.
    const secret = 'pi_3Returned_secret_abcdef';
    await t.app.inject({
      method: 'GET',
      url: `/checkout/order-received/1?key=order_x&payment_intent=pi_3Returned&payment_intent_client_secret=${secret}&redirect_status=succeeded`,
    });
    const logs = await waitFor(
      () => t.logs().includes('payment_intent_client_secret=[REDACTED]') && t.logs(),
      "the receipt request's log line",
    );
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(STRIPE_KEYS.stripe_secret_key);
    expect(logs).not.toContain(STRIPE_KEYS.stripe_webhook_secret);
    expect(logs).not.toMatch(/pi_[a-z0-9]+_secret_/);
  });

  it('without a webhook secret the route answers 503 stripe_not_configured', async () => {
    await setSettings(t, { stripe_webhook_secret: '' });
    try {
      const res = await deliver(
        t,
        stripeEvent('payment_intent.succeeded', { id: 'pi_x', object: 'payment_intent' }),
      );
      expectError(res, 503, 'stripe_not_configured');
    } finally {
      await setSettings(t, { stripe_webhook_secret: STRIPE_KEYS.stripe_webhook_secret });
    }
  });
});
