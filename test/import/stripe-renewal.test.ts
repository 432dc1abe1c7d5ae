import { afterAll, beforeAll, expect, it } from 'vitest';
import { adminOk, advanceClock, setSettings, type TestApp } from '../helpers/app.js';
import {
  deliver,
  STRIPE_KEYS,
  type StripeStandIn,
  startStripeStore,
  stopStripeStore,
  stripeEvent,
  succeededIntent,
} from '../stripe/helpers.js';
import { recordsSource } from './records.js';

// A subscription imported with its customer's Stripe customer renews here on the card Stripe
// keeps for that customer (docs/migrating.md, 'Stripe customers and their cards'): the renewal
// worker makes the order on the test clock, the renewal charges' worker charges the card
// off-session on the Stripe stand-in, Stripe's event pays the order, and the license runs on.

let t: TestApp;
let standIn: StripeStandIn;
beforeAll(async () => {
  ({ t, standIn } = await startStripeStore({ env: { TEST_CLOCK: '1' } }));
});
afterAll(() => stopStripeStore({ t, standIn }));

const db = () => t.app.services.database.db;
const tag = `${process.pid}${Date.now().toString(36)}`;

it("renews an imported subscription off-session on the customer's default card", async () => {
  // The old store's Stripe customers: Ann's default card is the second of her two; Bob has
  // no default, so his one listed card is his; Cy's customer was deleted at Stripe.
  standIn.addCard(`cus_ann${tag}`, { id: `pm_annold${tag}`, last4: '1111' });
  standIn.addCard(`cus_ann${tag}`, { id: `pm_ann${tag}`, brand: 'mastercard', last4: '4444' });
  standIn.addCustomer(`cus_ann${tag}`, { defaultPaymentMethod: `pm_ann${tag}` });
  standIn.addCard(`cus_bob${tag}`, { id: `pm_bob${tag}` });
  standIn.addCustomer(`cus_bob${tag}`);
  const now = t.app.services.clock.now().getTime();
  const due = new Date(now + 86_400_000).toISOString();
  const source = recordsSource('woocommerce', {
    customers: [
      { sourceId: '1', email: `ann-${tag}@example.com`, stripeCustomerId: `cus_ann${tag}` },
      { sourceId: '2', email: `bob-${tag}@example.com`, stripeCustomerId: `cus_bob${tag}` },
      { sourceId: '3', email: `cy-${tag}@example.com`, stripeCustomerId: `cus_gone${tag}` },
    ],
    products: [{ sourceId: '10', name: 'Pro', slug: `pro-${tag}`, price: 1200, variations: [] }],
    orders: [
      {
        sourceId: '100',
        customerSourceId: '1',
        status: 'completed',
        currency: 'USD',
        total: 1200,
        gateway: 'stripe',
        transactionId: 'pi_old100',
        createdAt: new Date(now - 30 * 86_400_000).toISOString(),
        paidAt: new Date(now - 30 * 86_400_000).toISOString(),
        items: [{ productSourceId: '10', name: 'Pro', quantity: 1, total: 1200 }],
      },
    ],
    subscriptions: [
      {
        sourceId: '200',
        customerSourceId: '1',
        productSourceId: '10',
        parentOrderSourceId: '100',
        status: 'active',
        billingPeriod: 'month',
        billingInterval: 1,
        nextPaymentAt: due,
        currency: 'USD',
        recurringTotal: 1200,
        gateway: 'stripe',
      },
    ],
    licenses: [
      {
        sourceId: '300',
        key: `ANN-KEY-${tag}`,
        productSourceId: '10',
        customerSourceId: '1',
        orderSourceId: '100',
        subscriptionSourceId: '200',
        status: 'active',
        expiresAt: due,
        activationLimit: null,
      },
    ],
  });
  const report = await t.app.services.imports.run(source, { dryRun: false });
  expect(report.ok).toBe(true);
  expect(report.stripe).toEqual({ customers: 2, cards: 2 });
  // Stripe was asked as its API answers: the customer, then the default card or the list.
  expect(standIn.callsTo(`GET /v1/customers/cus_ann${tag}`)).toHaveLength(1);
  expect(standIn.callsTo(`GET /v1/payment_methods/pm_ann${tag}`)).toHaveLength(1);
  expect(standIn.callsTo('GET /v1/payment_methods').map((c) => c.path)).toHaveLength(1);

  const users = new Map(
    (
      await db()
        .selectFrom('import_map')
        .select(['source_id', 'target_id'])
        .where('source', '=', 'woocommerce')
        .where('kind', '=', 'customers')
        .execute()
    ).map((r) => [r.source_id, Number(r.target_id)]),
  );
  const kept = await db()
    .selectFrom('stripe_customers')
    .select(['user_id', 'customer_id', 'payment_method_id'])
    .where('user_id', 'in', [...users.values()])
    .orderBy('customer_id')
    .execute();
  expect(kept).toEqual([
    { user_id: users.get('1'), customer_id: `cus_ann${tag}`, payment_method_id: `pm_ann${tag}` },
    { user_id: users.get('2'), customer_id: `cus_bob${tag}`, payment_method_id: `pm_bob${tag}` },
  ]);
  const card = await db()
    .selectFrom('stripe_cards')
    .select(['brand', 'last4'])
    .where('payment_method_id', '=', `pm_ann${tag}`)
    .executeTakeFirstOrThrow();
  expect(card).toEqual({ brand: 'mastercard', last4: '4444' });

  // A second run asks Stripe nothing more: the cards are kept.
  const calls = standIn.calls.length;
  expect((await t.app.services.imports.run(source, { dryRun: false })).counts.customers.present).toBe(3);
  expect(standIn.calls.filter((c) => c.path.startsWith('/v1/customers/cus_ann'))).toHaveLength(1);
  expect(standIn.calls.length - calls).toBe(1); // Cy's, whom Stripe no longer knows

  // The payment falls due: the renewal order, charged off-session to Ann's default card.
  const sub = await db()
    .selectFrom('subscriptions')
    .select(['id', 'next_payment_at'])
    .where('user_id', '=', users.get('1')!)
    .executeTakeFirstOrThrow();
  await advanceClock(t, 2 * 86_400);
  await t.app.services.renewals.tick();
  const renewal = await db()
    .selectFrom('orders')
    .selectAll()
    .where('subscription_id', '=', sub.id)
    .where('created_via', '=', 'renewal')
    .executeTakeFirstOrThrow();
  expect([renewal.status, Number(renewal.total), renewal.currency]).toEqual(['pending', 1200, 'USD']);
  await t.app.services.stripeRenewals.tick();
  await t.app.services.stripeRenewals.drain();
  const charge = standIn.callsTo('POST /v1/payment_intents').at(-1)!;
  expect(charge.params).toMatchObject({
    off_session: 'true',
    confirm: 'true',
    customer: `cus_ann${tag}`,
    payment_method: `pm_ann${tag}`,
    amount: '1200',
    currency: 'usd',
    'metadata[order_id]': String(renewal.id),
  });
  const payment = await db()
    .selectFrom('stripe_payments')
    .selectAll()
    .where('order_id', '=', renewal.id)
    .executeTakeFirstOrThrow();
  const res = await deliver(
    t,
    stripeEvent(
      'payment_intent.succeeded',
      succeededIntent(standIn, payment.payment_intent_id, { payment_method: `pm_ann${tag}` }),
    ),
  );
  expect(res.statusCode).toBe(200);
  const paid = await db()
    .selectFrom('orders')
    .select('status')
    .where('id', '=', renewal.id)
    .executeTakeFirstOrThrow();
  expect(paid.status).toBe('processing');
  // The license runs a month on, the subscription's next payment a month after the one paid.
  const license = await db()
    .selectFrom('licenses')
    .select(['usage_expires_at', 'subscription_id'])
    .where('license_key', '=', `ANN-KEY-${tag}`)
    .executeTakeFirstOrThrow();
  expect(license.subscription_id).toBe(sub.id);
  expect(Date.parse(license.usage_expires_at!)).toBeGreaterThan(Date.parse(due) + 27 * 86_400_000);
  const after = await db()
    .selectFrom('subscriptions')
    .select(['status', 'next_payment_at'])
    .where('id', '=', sub.id)
    .executeTakeFirstOrThrow();
  expect(after.status).toBe('active');
  expect(Date.parse(after.next_payment_at!)).toBeGreaterThan(Date.parse(due) + 27 * 86_400_000);
});

it('a customer whose card Stripe cannot give now is reported and left for the next run', async () => {
  standIn.addCard(`cus_dee${tag}`, { id: `pm_dee${tag}` });
  standIn.addCustomer(`cus_dee${tag}`);
  const source = recordsSource('csv', {
    customers: [{ sourceId: 'd', email: `dee-${tag}@example.com`, stripeCustomerId: `cus_dee${tag}` }],
  });
  standIn.refuseCards = true;
  try {
    const report = await t.app.services.imports.run(source, { dryRun: false });
    expect(report.problems).toEqual([{ kind: 'customers', sourceId: 'd', reason: 'stripe_unavailable' }]);
    expect(report.ok).toBe(true);
    const users = await db()
      .selectFrom('users')
      .select('id')
      .where('email', '=', `dee-${tag}@example.com`)
      .execute();
    expect(users).toEqual([]);
  } finally {
    standIn.refuseCards = false;
  }
  const again = await t.app.services.imports.run(source, { dryRun: false });
  expect(again.counts.customers).toEqual({ created: 1, present: 0, skipped: 0 });
  expect(again.stripe).toEqual({ customers: 1, cards: 1 });
});

/** An old store's customer, product, subscription billed by Stripe (`sub_…`) and its license. */
function billedByStripe(id: string, opts: { status?: string; due: string; expires: string }) {
  return recordsSource('edd', {
    customers: [{ sourceId: `c${id}`, email: `${id}@example.com`, stripeCustomerId: `cus_${id}` }],
    products: [{ sourceId: `p${id}`, name: 'Pro', slug: `pro-${id}`, price: 1200, variations: [] }],
    subscriptions: [
      {
        sourceId: `s${id}`,
        customerSourceId: `c${id}`,
        productSourceId: `p${id}`,
        status: (opts.status ?? 'active') as 'active',
        billingPeriod: 'month',
        billingInterval: 1,
        nextPaymentAt: opts.due,
        currency: 'USD',
        recurringTotal: 1200,
        gateway: 'stripe',
        gatewayProfileId: `sub_${id}`,
      },
    ],
    licenses: [
      {
        sourceId: `l${id}`,
        key: `KEY-${id}`,
        productSourceId: `p${id}`,
        customerSourceId: `c${id}`,
        subscriptionSourceId: `s${id}`,
        status: 'active',
        expiresAt: opts.expires,
        activationLimit: null,
      },
    ],
  });
}

const subscriptionsOf = (email: string) =>
  db()
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.id', 's.status', 's.status_reason', 's.gateway_profile_id', 's.gateway_profile_ended_at'])
    .where('u.email', '=', email)
    .execute();
const licenseOf = (key: string) =>
  db()
    .selectFrom('licenses')
    .select(['status', 'usage_expires_at', 'subscription_id'])
    .where('license_key', '=', key)
    .executeTakeFirst();

it('leaves out a subscription Stripe still bills until it is cancelled there, then renews it here', async () => {
  const id = `ev${tag}`;
  standIn.addCard(`cus_${id}`, { id: `pm_${id}` });
  standIn.addCustomer(`cus_${id}`, { defaultPaymentMethod: `pm_${id}` });
  standIn.addSubscription(`sub_${id}`, `cus_${id}`, 'past_due');
  const now = t.app.services.clock.now().getTime();
  const due = new Date(now + 86_400_000).toISOString();
  const source = billedByStripe(id, { due, expires: due });
  const left = { kind: 'subscriptions', sourceId: `s${id}`, reason: 'old_subscription_active' };

  // The dry run asks Stripe the same and writes nothing.
  const dry = await t.app.services.imports.run(source, { dryRun: true });
  expect(dry.problems).toEqual([left]);
  expect(standIn.callsTo(`GET /v1/subscriptions/sub_${id}`)).toHaveLength(1);
  expect(await subscriptionsOf(`${id}@example.com`)).toEqual([]);

  // The real run: the subscription is left out, its license imported alone with its own expiry.
  const first = await t.app.services.imports.run(source, { dryRun: false });
  expect(first.problems).toEqual([left]);
  expect(first.counts.subscriptions).toEqual({ created: 0, present: 0, skipped: 1 });
  expect(first.counts.licenses).toEqual({ created: 1, present: 0, skipped: 0 });
  expect(first.ok).toBe(true);
  expect(await subscriptionsOf(`${id}@example.com`)).toEqual([]);
  const alone = await licenseOf(`KEY-${id}`);
  expect(alone).toMatchObject({ status: 'active', subscription_id: null });
  expect(Math.abs(Date.parse(alone!.usage_expires_at!) - Date.parse(due))).toBeLessThan(1000);

  // Trialling, paused or unpaid, Stripe may still charge it: still left out.
  for (const status of ['trialing', 'paused', 'unpaid', 'incomplete', 'active']) {
    standIn.addSubscription(`sub_${id}`, `cus_${id}`, status);
    expect((await t.app.services.imports.run(source, { dryRun: false })).problems).toEqual([left]);
  }

  // Failing payments still retried, though set to end: still left out.
  standIn.addSubscription(`sub_${id}`, `cus_${id}`, 'past_due', { cancelAtPeriodEnd: true });
  expect((await t.app.services.imports.run(source, { dryRun: false })).problems).toEqual([left]);

  // Cancelled at Stripe at the period's end: the next run imports it and links its license.
  standIn.addSubscription(`sub_${id}`, `cus_${id}`, 'active', { cancelAtPeriodEnd: true });
  const again = await t.app.services.imports.run(source, { dryRun: false });
  expect(again.problems).toEqual([]);
  expect(again.counts.subscriptions).toEqual({ created: 1, present: 0, skipped: 0 });
  const [sub] = await subscriptionsOf(`${id}@example.com`);
  expect(sub).toMatchObject({ status: 'active', gateway_profile_id: `sub_${id}` });
  expect(sub!.gateway_profile_ended_at).not.toBeNull();
  expect((await licenseOf(`KEY-${id}`))?.subscription_id).toBe(sub!.id);

  // Its payment falls due: renewed here without asking Stripe again, on the kept card.
  const asked = standIn.callsTo(`GET /v1/subscriptions/sub_${id}`).length;
  await advanceClock(t, 2 * 86_400);
  await t.app.services.renewals.tick();
  expect(standIn.callsTo(`GET /v1/subscriptions/sub_${id}`)).toHaveLength(asked);
  const renewal = await db()
    .selectFrom('orders')
    .selectAll()
    .where('subscription_id', '=', sub!.id)
    .where('created_via', '=', 'renewal')
    .executeTakeFirstOrThrow();
  await t.app.services.stripeRenewals.tick();
  await t.app.services.stripeRenewals.drain();
  const payment = await db()
    .selectFrom('stripe_payments')
    .selectAll()
    .where('order_id', '=', renewal.id)
    .executeTakeFirstOrThrow();
  expect(standIn.intents.get(payment.payment_intent_id)).toMatchObject({
    customer: `cus_${id}`,
    payment_method: `pm_${id}`,
  });
  await deliver(
    t,
    stripeEvent(
      'payment_intent.succeeded',
      succeededIntent(standIn, payment.payment_intent_id, { payment_method: `pm_${id}` }),
    ),
  );
  const license = await licenseOf(`KEY-${id}`);
  expect(Date.parse(license!.usage_expires_at!)).toBeGreaterThan(Date.parse(due) + 27 * 86_400_000);
});

it('a subscription Stripe does not answer for, or cannot be asked about, is reported and left out', async () => {
  const now = t.app.services.clock.now().getTime();
  const due = new Date(now + 86_400_000).toISOString();
  // One Stripe no longer knows (deleted there) is over: imported.
  const goneId = `gone${tag}`;
  const gone = await t.app.services.imports.run(billedByStripe(goneId, { due, expires: due }), {
    dryRun: false,
  });
  expect(gone.problems).toEqual([]);
  expect((await subscriptionsOf(`${goneId}@example.com`))[0]?.gateway_profile_ended_at).not.toBeNull();

  // Stripe out of reach: left for the next run.
  const downId = `down${tag}`;
  standIn.addSubscription(`sub_${downId}`, `cus_${downId}`, 'canceled');
  const down = billedByStripe(downId, { due, expires: due });
  standIn.refuseSubscriptions = true;
  try {
    const report = await t.app.services.imports.run(down, { dryRun: false });
    expect(report.problems).toContainEqual({
      kind: 'subscriptions',
      sourceId: `s${downId}`,
      reason: 'stripe_unavailable',
    });
    expect(await subscriptionsOf(`${downId}@example.com`)).toEqual([]);
  } finally {
    standIn.refuseSubscriptions = false;
  }
  expect((await t.app.services.imports.run(down, { dryRun: false })).counts.subscriptions.created).toBe(1);

  // An ended one is not asked about: it never renews.
  const endedId = `ended${tag}`;
  const ended = await t.app.services.imports.run(
    billedByStripe(endedId, { status: 'cancelled', due, expires: due }),
    { dryRun: false },
  );
  expect(ended.counts.subscriptions.created).toBe(1);
  expect(standIn.callsTo(`GET /v1/subscriptions/sub_${endedId}`)).toHaveLength(0);

  // Stripe not set up here: nothing could be asked, nor renewed with Stripe.
  const offId = `off${tag}`;
  await setSettings(t, { stripe_secret_key: '' });
  try {
    const off = await t.app.services.imports.run(billedByStripe(offId, { due, expires: due }), {
      dryRun: true,
    });
    expect(off.problems).toEqual([
      { kind: 'subscriptions', sourceId: `s${offId}`, reason: 'stripe_not_configured' },
    ]);
  } finally {
    await setSettings(t, { stripe_secret_key: STRIPE_KEYS.stripe_secret_key });
  }
});

it('the renewal worker holds, instead of renewing, a subscription Stripe still bills', async () => {
  // Imported ended (nothing asked), then set active again by the owner while Stripe bills it.
  const id = `held${tag}`;
  standIn.addSubscription(`sub_${id}`, `cus_${id}`, 'active');
  const now = t.app.services.clock.now().getTime();
  const due = new Date(now + 86_400_000).toISOString();
  await t.app.services.imports.run(billedByStripe(id, { status: 'cancelled', due, expires: due }), {
    dryRun: false,
  });
  const [sub] = await subscriptionsOf(`${id}@example.com`);
  await adminOk(t, 'POST', `/subscriptions/${sub!.id}/status`, { status: 'active' });
  const renewals = () =>
    db()
      .selectFrom('orders')
      .select('id')
      .where('subscription_id', '=', sub!.id)
      .where('created_via', '=', 'renewal')
      .execute();

  await advanceClock(t, 2 * 86_400);
  await t.app.services.renewals.tick();
  expect(await renewals()).toEqual([]);
  expect(await subscriptionsOf(`${id}@example.com`)).toEqual([
    expect.objectContaining({
      status: 'on-hold',
      status_reason: 'old_subscription_active',
      gateway_profile_ended_at: null,
    }),
  ]);
  // The console's subscription view says so.
  expect(await adminOk(t, 'GET', `/subscriptions/${sub!.id}`)).toMatchObject({
    status: 'on-hold',
    status_reason: 'old_subscription_active',
    gateway_profile_id: `sub_${id}`,
  });
  const audit = await db()
    .selectFrom('audit_events')
    .selectAll()
    .where('entity_type', '=', 'subscription')
    .where('entity_id', '=', sub!.id)
    .where('action', '=', 'status')
    .execute();
  expect(audit.some((a) => a.changes.includes('old_subscription_active'))).toBe(true);

  // Stripe out of reach: held too (no answer is not "ended").
  await adminOk(t, 'POST', `/subscriptions/${sub!.id}/status`, { status: 'active' });
  standIn.refuseSubscriptions = true;
  try {
    await t.app.services.renewals.tick();
  } finally {
    standIn.refuseSubscriptions = false;
  }
  expect(await renewals()).toEqual([]);
  expect((await subscriptionsOf(`${id}@example.com`))[0]).toMatchObject({
    status: 'on-hold',
    status_reason: 'old_subscription_unverified',
  });

  // Cancelled at Stripe and set active again: asked once more, then renewed, and never asked again.
  standIn.addSubscription(`sub_${id}`, `cus_${id}`, 'canceled');
  await adminOk(t, 'POST', `/subscriptions/${sub!.id}/status`, { status: 'active' });
  await t.app.services.renewals.tick();
  expect(await renewals()).toHaveLength(1);
  const [after] = await subscriptionsOf(`${id}@example.com`);
  expect(after!.gateway_profile_ended_at).not.toBeNull();
  const asked = standIn.callsTo(`GET /v1/subscriptions/sub_${id}`).length;
  await t.app.services.renewals.tick();
  expect(standIn.callsTo(`GET /v1/subscriptions/sub_${id}`)).toHaveLength(asked);
});
