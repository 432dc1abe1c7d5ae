import { afterAll, beforeAll, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { payOrder } from '../checkout/helpers.js';
import { advanceClock, type TestApp } from '../helpers/app.js';
import { BILLING, createCustomer, createOrder, createProduct, uniqueEmail } from '../helpers/factories.js';
import {
  deliver,
  keptCard,
  type StripeStandIn,
  startStripeStore,
  stopStripeStore,
  stripeEvent,
  succeededIntent,
} from './helpers.js';

/**
 * Renewals of a subscription bought with Stripe by a customer who kept the card: charged
 * off-session by the renewal charges' worker, paid by Stripe's event; a card that is declined or
 * needs the customer falls back to the pay link, emailed as "renewal payment failed".
 */
let t: TestApp;
let standIn: StripeStandIn;
beforeAll(async () => {
  ({ t, standIn } = await startStripeStore({ env: { TEST_CLOCK: '1' } }));
});
afterAll(() => stopStripeStore({ t, standIn }));

const db = () => t.app.services.database.db;

/** The renewal order the scheduler makes once the clock passes the due date. */
async function nextRenewal(subscriptionId: number) {
  await advanceClock(t, 32 * 86400);
  await t.app.services.renewals.tick();
  const orders = await db()
    .selectFrom('orders')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .execute();
  expect(orders).toHaveLength(1);
  return orders[0]!;
}

async function charge() {
  await t.app.services.stripeRenewals.tick();
  await t.app.services.stripeRenewals.drain();
}

it('a kept card pays the renewal off-session; declined, the customer is emailed the pay link and pays there', async () => {
  const product = await createProduct(t, {
    type: 'subscription',
    price: '12.00',
    subscription: { period: 'month', interval: 1 },
  });
  const email = uniqueEmail('renew');
  const customer = await createCustomer(t, email);
  const b = new Browser(t);
  await b.login(email, customer.password);
  const out = await createOrder(
    t,
    { items: [{ product_id: product.id, qty: 1 }], billing: { ...BILLING, email }, payment_method: 'stripe' },
    b,
  );
  // The customer ticks "keep this card": the PaymentIntent is made for their Stripe customer.
  const pay = await payOrder(b, out.order_id, {
    key: out.order_key,
    payment_method: 'stripe',
    payment_data: { save_card: true },
  });
  expect(pay.statusCode, pay.body).toBe(200);
  const first = standIn.callsTo('POST /v1/payment_intents').at(-1)!;
  expect(first.params).toMatchObject({
    setup_future_usage: 'off_session',
    customer: expect.stringMatching(/^cus_/),
  });
  expect(standIn.callsTo('POST /v1/customers')).toHaveLength(1);
  const intent = (pay.json().next as { payment_intent: string }).payment_intent;
  await deliver(t, stripeEvent('payment_intent.succeeded', succeededIntent(standIn, intent)));
  const kept = await db()
    .selectFrom('stripe_customers')
    .selectAll()
    .where('user_id', '=', customer.id)
    .executeTakeFirstOrThrow();
  expect(kept).toMatchObject({ customer_id: first.params.customer, payment_method_id: 'pm_card_visa' });
  const sub = await db()
    .selectFrom('subscriptions')
    .select(['id', 'next_payment_at'])
    .where('parent_order_id', '=', out.order_id)
    .executeTakeFirstOrThrow();

  // The first renewal: charged off-session with the kept card, paid by the event.
  const renewal = await nextRenewal(sub.id);
  await charge();
  const offSession = standIn.callsTo('POST /v1/payment_intents').at(-1)!;
  expect(offSession.params).toMatchObject({
    off_session: 'true',
    confirm: 'true',
    customer: kept.customer_id,
    payment_method: 'pm_card_visa',
    amount: '1200',
    'metadata[order_id]': String(renewal.id),
  });
  expect(offSession.idempotencyKey).toMatch(new RegExp(`^tollgate-renewal-${renewal.id}-`));
  // A second tick finds nothing more to charge.
  await charge();
  expect(standIn.callsTo('POST /v1/payment_intents').at(-1)).toBe(offSession);
  const charged = await db()
    .selectFrom('stripe_payments')
    .selectAll()
    .where('order_id', '=', renewal.id)
    .executeTakeFirstOrThrow();
  await deliver(
    t,
    stripeEvent('payment_intent.succeeded', succeededIntent(standIn, charged.payment_intent_id)),
  );
  const paid = await db()
    .selectFrom('orders')
    .select('status')
    .where('id', '=', renewal.id)
    .executeTakeFirstOrThrow();
  expect(paid.status).toBe('processing');

  // The next one: the card needs the customer. The order fails, the customer is emailed its pay link.
  standIn.declineOffSession = true;
  const second = await nextRenewal(sub.id);
  await charge();
  const failed = await db()
    .selectFrom('orders')
    .select('status')
    .where('id', '=', second.id)
    .executeTakeFirstOrThrow();
  expect(failed.status).toBe('failed');
  const mails = await db()
    .selectFrom('mail_messages')
    .select(['kind', 'data'])
    .where('kind', '=', 'renewal_failed')
    .execute();
  expect(
    mails.filter((m) => (JSON.parse(m.data) as { order_id: number }).order_id === second.id),
  ).toHaveLength(1);
  const row = await db()
    .selectFrom('stripe_renewal_charges')
    .selectAll()
    .where('order_id', '=', second.id)
    .executeTakeFirstOrThrow();
  expect(row).toMatchObject({ status: 'failed', attempts: 1 });
  expect(row.last_error).toContain('authentication_required');
  // The pay link confirms the same PaymentIntent in the page.
  const declined = await db()
    .selectFrom('stripe_payments')
    .selectAll()
    .where('order_id', '=', second.id)
    .executeTakeFirstOrThrow();
  const again = await payOrder(new Browser(t), second.id, {
    key: second.order_key,
    payment_method: 'stripe',
  });
  expect(again.statusCode, again.body).toBe(200);
  expect((again.json().next as { payment_intent: string }).payment_intent).toBe(declined.payment_intent_id);
});

const keptCardSubscription = () => keptCard(t, standIn);

const chargesOf = (orderId: number) =>
  db().selectFrom('stripe_renewal_charges').select('status').where('order_id', '=', orderId).execute();
const userAudit = (userId: number) =>
  db()
    .selectFrom('audit_events')
    .select(['action', 'actor_kind'])
    .where('entity_type', '=', 'user')
    .where('entity_id', '=', userId)
    .where('actor_kind', '=', 'system')
    .execute();

it('a card detached at Stripe is no longer charged: the next renewal is left to the pay link', async () => {
  const { customer, method, sub } = await keptCardSubscription();
  const detached = stripeEvent('payment_method.detached', {
    id: method,
    object: 'payment_method',
    type: 'card',
    customer: null,
    card: { brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2030 },
  });
  expect((await deliver(t, detached)).json().result).toBe('handled');
  expect((await deliver(t, detached)).json().result).toBe('duplicate');
  const row = await db()
    .selectFrom('stripe_customers')
    .selectAll()
    .where('user_id', '=', customer.id)
    .executeTakeFirstOrThrow();
  expect(row.payment_method_id).toBeNull();
  expect(await userAudit(customer.id)).toEqual([{ action: 'card_detached', actor_kind: 'system' }]);
  const renewal = await nextRenewal(sub.id);
  expect(await chargesOf(renewal.id)).toEqual([]);
  const due = await db()
    .selectFrom('mail_messages')
    .select('data')
    .where('kind', '=', 'renewal_due')
    .execute();
  expect(
    due.filter((m) => (JSON.parse(m.data) as { order_id: number }).order_id === renewal.id),
  ).toHaveLength(1);
  // A card nobody here kept changes nothing.
  const other = stripeEvent('payment_method.detached', {
    id: 'pm_someoneelse',
    object: 'payment_method',
    customer: null,
  });
  expect((await deliver(t, other)).json().result).toBe('handled');
});

it('a Stripe customer deleted at Stripe: the link is dropped, the subscription and orders stay, renewals wait for the pay link', async () => {
  const { customer, kept, sub } = await keptCardSubscription();
  const deleted = stripeEvent('customer.deleted', {
    id: kept.customer_id,
    object: 'customer',
    deleted: true,
  });
  expect((await deliver(t, deleted)).json().result).toBe('handled');
  expect((await deliver(t, deleted)).json().result).toBe('duplicate');
  expect(
    await db().selectFrom('stripe_customers').selectAll().where('user_id', '=', customer.id).execute(),
  ).toEqual([]);
  expect(await userAudit(customer.id)).toEqual([{ action: 'stripe_customer_deleted', actor_kind: 'system' }]);
  const still = await db()
    .selectFrom('subscriptions')
    .select('status')
    .where('id', '=', sub.id)
    .executeTakeFirstOrThrow();
  expect(still.status).toBe('active');
  expect(await db().selectFrom('users').select('id').where('id', '=', customer.id).execute()).toHaveLength(1);
  const renewal = await nextRenewal(sub.id);
  expect(await chargesOf(renewal.id)).toEqual([]);
});
