import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../cart/helpers.js';
import { advanceClock, expectError, type TestApp } from '../helpers/app.js';
import { createCustomer, uniqueEmail } from '../helpers/factories.js';
import {
  deliver,
  keptCard,
  type StripeStandIn,
  startStripeStore,
  stopStripeStore,
  stripeEvent,
} from './helpers.js';

/**
 * Saved cards (docs/payments.md, 'Saved cards'): the buyer's cards kept with Stripe, listed from
 * Stripe, removed there, chosen per subscription; the renewal charge and the renewal-due email
 * follow the choice.
 */
let t: TestApp;
let standIn: StripeStandIn;
beforeAll(async () => {
  ({ t, standIn } = await startStripeStore({ env: { TEST_CLOCK: '1' } }));
});
afterAll(() => stopStripeStore({ t, standIn }));

const db = () => t.app.services.database.db;

interface Card {
  id: string;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  default: boolean;
  subscriptions: number[];
}
const cardsOf = async (b: Browser) => {
  const res = await b.get('/account/cards');
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { cards: Card[] }).cards;
};

/** The renewal order made once the clock passes the due date, and its charge run. */
async function renew(subscriptionId: number) {
  await advanceClock(t, 32 * 86400);
  await t.app.services.renewals.tick();
  const order = await db()
    .selectFrom('orders')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  // Every subscription of the file renews at once; the worker takes two charges a tick.
  while ((await t.app.services.stripeRenewals.tick()) > 0) await t.app.services.stripeRenewals.drain();
  const due = await db()
    .selectFrom('mail_messages')
    .select('data')
    .where('kind', '=', 'renewal_due')
    .execute();
  const email = due
    .map((m) => JSON.parse(m.data) as { order_id: number; card?: string | null })
    .find((d) => d.order_id === order.id);
  return { order, email };
}

describe('saved cards', () => {
  it('lists the kept cards from Stripe, and which one renews what', async () => {
    const { b, method, sub } = await keptCard(t, standIn);
    expect(await cardsOf(b)).toEqual([
      {
        id: method,
        brand: 'visa',
        last4: '4242',
        exp_month: 12,
        exp_year: 2031,
        default: true,
        subscriptions: [sub.id],
      },
    ]);
    expectError(await new Browser(t).get('/account/cards'), 401, 'rest_not_logged_in');
    // A buyer who never kept a card has none; Stripe is not asked.
    const email = uniqueEmail('nocard');
    const none = await createCustomer(t, email);
    const fresh = new Browser(t);
    await fresh.login(email, none.password);
    const calls = standIn.calls.length;
    expect(await cardsOf(fresh)).toEqual([]);
    expect(standIn.calls.length).toBe(calls);
  });

  it('a subscription renews on the card chosen for it; the renewal email names it', async () => {
    const { b, kept, sub } = await keptCard(t, standIn);
    const second = `pm_second${sub.id}`;
    standIn.addCard(kept.customer_id, { id: second, brand: 'mastercard', last4: '5555' });
    const res = await b.send('PUT', `/account/subscriptions/${sub.id}/card`, { payment_method_id: second });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ subscription_id: sub.id, payment_method_id: second });
    const cards = await cardsOf(b);
    expect(cards.find((c) => c.id === second)).toMatchObject({ default: false, subscriptions: [sub.id] });
    expect(cards.find((c) => c.id === kept.payment_method_id)).toMatchObject({
      default: true,
      subscriptions: [],
    });
    const { order, email } = await renew(sub.id);
    expect(email?.card).toBe('Mastercard ending in 5555');
    const charge = standIn
      .callsTo('POST /v1/payment_intents')
      .find((c) => c.params['metadata[order_id]'] === String(order.id))!;
    expect(charge.params).toMatchObject({
      payment_method: second,
      off_session: 'true',
      'metadata[order_id]': String(order.id),
    });
    const audit = await db()
      .selectFrom('audit_events')
      .select(['action', 'actor_kind'])
      .where('entity_type', '=', 'subscription')
      .where('entity_id', '=', sub.id)
      .where('action', '=', 'card_chosen')
      .execute();
    expect(audit).toEqual([{ action: 'card_chosen', actor_kind: 'user' }]);
  });

  it('a card kept for one subscription stays its card when another subscription keeps another', async () => {
    const first = await keptCard(t, standIn, { brand: 'visa', last4: '1111' });
    const second = await keptCard(t, standIn, { brand: 'amex', last4: '0005' }, first);
    const cards = await cardsOf(first.b);
    expect(cards.map((c) => [c.last4, c.default, c.subscriptions])).toEqual([
      ['1111', false, [first.sub.id]],
      ['0005', true, [second.sub.id]],
    ]);
    const one = await renew(first.sub.id);
    expect(one.email?.card).toBe('Visa ending in 1111');
    const charges = standIn.callsTo('POST /v1/payment_intents');
    expect(
      charges.find((c) => c.params['metadata[order_id]'] === String(one.order.id))!.params.payment_method,
    ).toBe(first.method);
  });

  it('removing a card detaches it at Stripe; renewals fall back to the pay link, and the email says so', async () => {
    const { b, method, sub, customer } = await keptCard(t, standIn);
    const res = await b.send('DELETE', `/account/cards/${method}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(standIn.paymentMethods.get(method)!.customer).toBeNull();
    expect(await cardsOf(b)).toEqual([]);
    const row = await db()
      .selectFrom('stripe_customers')
      .select('payment_method_id')
      .where('user_id', '=', customer.id)
      .executeTakeFirstOrThrow();
    expect(row.payment_method_id).toBeNull();
    expectError(await b.send('DELETE', `/account/cards/${method}`), 404, 'card_not_found');
    const { order, email } = await renew(sub.id);
    expect(email?.card).toBeNull();
    expect(
      await db().selectFrom('stripe_renewal_charges').select('id').where('order_id', '=', order.id).execute(),
    ).toEqual([]);
    // Stripe's own event for the same detachment then changes nothing more.
    const event = stripeEvent('payment_method.detached', {
      id: method,
      object: 'payment_method',
      customer: null,
    });
    expect((await deliver(t, event)).json().result).toBe('handled');
  });

  it("refuses another buyer's card or subscription, and malformed input, changing nothing", async () => {
    const mine = await keptCard(t, standIn);
    const theirs = await keptCard(t, standIn);
    expectError(await mine.b.send('DELETE', `/account/cards/${theirs.method}`), 404, 'card_not_found');
    expect(standIn.paymentMethods.get(theirs.method)!.customer).not.toBeNull();
    expectError(
      await mine.b.send('PUT', `/account/subscriptions/${mine.sub.id}/card`, {
        payment_method_id: theirs.method,
      }),
      404,
      'card_not_found',
    );
    expectError(
      await mine.b.send('PUT', `/account/subscriptions/${theirs.sub.id}/card`, {
        payment_method_id: mine.method,
      }),
      404,
      'subscription_not_found',
    );
    const put = (body: unknown) => mine.b.send('PUT', `/account/subscriptions/${mine.sub.id}/card`, body);
    expectError(
      await put({ payment_method_id: "pm_x'; DROP TABLE stripe_cards;--" }),
      400,
      'rest_invalid_param',
    );
    expectError(await put({ payment_method_id: 42 }), 400, 'rest_invalid_param');
    expectError(await put({ payment_method_id: mine.method, extra: 1 }), 400, 'invalid_parameters');
    expectError(await put('{"payment_method_id":'), 400, 'rest_invalid_json');
    expectError(
      await mine.b.send('DELETE', '/account/cards/..%2F..%2Fetc%2Fpasswd'),
      400,
      'rest_invalid_param',
    );
    expect(
      await db()
        .selectFrom('stripe_subscription_cards')
        .select('payment_method_id')
        .where('subscription_id', '=', mine.sub.id)
        .execute(),
    ).toEqual([{ payment_method_id: mine.method }]);
    expect((await cardsOf(mine.b))[0]).toMatchObject({ id: mine.method, default: true });
  });

  it('Stripe out of reach: 502 stripe_unavailable, nothing changed', async () => {
    const { b, method } = await keptCard(t, standIn);
    standIn.refuseCards = true;
    try {
      expectError(await b.get('/account/cards'), 502, 'stripe_unavailable');
      expectError(await b.send('DELETE', `/account/cards/${method}`), 502, 'stripe_unavailable');
    } finally {
      standIn.refuseCards = false;
    }
    expect(await cardsOf(b)).toHaveLength(1);
  });
});
