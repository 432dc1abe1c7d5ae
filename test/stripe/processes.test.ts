import { afterAll, beforeAll, expect, it } from 'vitest';
import { SettingsService } from '../../src/modules/settings/settings.service.js';
import { BILLING } from '../helpers/factories.js';
import { type Cluster, startCluster } from '../helpers/server.js';
import { sleep } from '../helpers/wait.js';
import { STRIPE_KEYS, StripeStandIn, signed, stripeEvent, succeededIntent } from './helpers.js';

/**
 * The webhook on real server processes (two on PostgreSQL, sharing the database and the vault
 * key): the same event delivered to both at once acts once, by the event id's row and the order's
 * row lock alone; so does a Dashboard refund (charge.refunded) retried and sent twice.
 */
let cluster: Cluster;
let standIn: StripeStandIn;
beforeAll(async () => {
  standIn = await new StripeStandIn().start();
  cluster = await startCluster(undefined, { STRIPE_API_URL: standIn.url });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await standIn?.stop();
});

async function call(base: string, method: string, path: string, body?: unknown, headers = {}) {
  const res = await fetch(`${base}/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

it('one event delivered six times across the processes at once issues the licenses once', async () => {
  const first = cluster.servers[0]!.url;
  const admin = (method: string, path: string, body?: unknown) =>
    call(first, method, path, body, cluster.adminHeaders);
  expect((await admin('PATCH', '/settings', { ...STRIPE_KEYS, checkout_rate_limit: 1000 })).status).toBe(200);
  expect((await admin('PATCH', '/payment-gateways/stripe', { enabled: true })).status).toBe(200);
  // The other process reads the settings (the Stripe keys) again once its cached copy is older
  // than CACHE_MS; paid before that, it still finds Stripe unconfigured (gateway_unavailable).
  await sleep(SettingsService.CACHE_MS + 250);
  const product = await admin('POST', '/products', {
    name: 'Cluster Pro',
    price: '15.00',
    licensing_enabled: 'yes',
  });
  expect(product.status).toBe(201);
  const placed = await call(first, 'POST', '/checkout/submit', {
    items: [{ product_id: product.body.id, qty: 2 }],
    billing: { ...BILLING, email: 'cluster.buyer@example.com' },
    payment_method: 'stripe',
  });
  expect(placed.status).toBe(200);
  const id = placed.body.order_id as number;
  // Each process is asked to pay; both find or make the same PaymentIntent.
  const pays = await Promise.all(
    cluster.servers.map((s) =>
      call(s.url, 'POST', `/checkout/pay-order/${id}`, {
        key: placed.body.order_key,
        payment_method: 'stripe',
      }),
    ),
  );
  for (const p of pays) expect(p.status, JSON.stringify(p.body)).toBe(200);
  const intents = new Set(pays.map((p) => (p.body.next as { payment_intent: string }).payment_intent));
  expect(intents.size).toBe(1);
  const [intent] = [...intents];
  const { payload, headers } = signed(
    stripeEvent('payment_intent.succeeded', succeededIntent(standIn, intent!)),
  );
  const answers = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      fetch(`${cluster.servers[i % cluster.servers.length]!.url}/v1/stripe/webhook`, {
        method: 'POST',
        headers,
        body: payload,
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { result: string } })),
    ),
  );
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
  expect(answers.filter((a) => a.body.result === 'handled')).toHaveLength(1);
  expect(answers.filter((a) => a.body.result === 'duplicate')).toHaveLength(5);
  const db = cluster.database.database.db;
  const licenses = await db.selectFrom('licenses').select('id').where('order_id', '=', id).execute();
  expect(licenses).toHaveLength(1);
  const notes = await db.selectFrom('order_notes').select('body').where('order_id', '=', id).execute();
  expect(notes.filter((n) => n.body.startsWith(`Stripe payment ${intent} succeeded`))).toHaveLength(1);
  expect((await admin('GET', `/orders/${id}`)).body.status).toBe('processing');

  // Refunded in full in the Stripe Dashboard: the same charge.refunded event retried, and another
  // event with the same charge, delivered to both processes at once, record one refund.
  const total = Number((await admin('GET', `/orders/${id}`)).body.total) * 100;
  const charge = {
    id: `ch_${intent!.slice(3)}`,
    object: 'charge',
    amount: total,
    amount_captured: total,
    amount_refunded: total,
    captured: true,
    currency: 'usd',
    paid: true,
    payment_intent: intent,
    refunded: true,
    status: 'succeeded',
  };
  const retried = signed(stripeEvent('charge.refunded', charge));
  const other = signed(stripeEvent('charge.refunded', charge));
  const refundAnswers = await Promise.all(
    Array.from({ length: 6 }, (_, i) => {
      const { payload: body, headers: h } = i % 3 === 2 ? other : retried;
      return fetch(`${cluster.servers[i % cluster.servers.length]!.url}/v1/stripe/webhook`, {
        method: 'POST',
        headers: h,
        body,
      }).then((r) => r.status);
    }),
  );
  expect(refundAnswers).toEqual([200, 200, 200, 200, 200, 200]);
  const refunds = await db.selectFrom('order_refunds').select('amount').where('order_id', '=', id).execute();
  expect(refunds.map((r) => Number(r.amount))).toEqual([total]);
  const order = (await admin('GET', `/orders/${id}`)).body;
  expect(order).toMatchObject({ status: 'refunded' });
  expect(Number(order.refunded_total)).toBe(Number(order.total));
  const revoked = await db.selectFrom('licenses').select('status').where('order_id', '=', id).execute();
  expect(revoked.map((l) => l.status)).toEqual(['revoked']);
}, 60_000);
