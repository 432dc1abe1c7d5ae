import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { Browser } from '../cart/helpers.js';
import { payOrder } from '../checkout/helpers.js';
import type { TestApp } from '../helpers/app.js';
import { adminOk, createTestApp, setSettings, type TestAppOptions } from '../helpers/app.js';
import { BILLING, createCustomer, createOrder, createProduct, uniqueEmail } from '../helpers/factories.js';

export const STRIPE_KEYS = {
  stripe_publishable_key: 'pk_test_tollgate',
  stripe_secret_key: 'sk_test_tollgateSecretKey123',
  stripe_webhook_secret: 'whsec_tollgateWebhookSecret',
};

/** One request the stand-in received. */
export interface StripeCall {
  method: string;
  path: string;
  params: Record<string, string>;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
}

type StripeObject = Record<string, unknown> & { id: string };

/**
 * A stand-in for the few endpoints of Stripe's API that Tollgate calls (PaymentIntents, Refunds,
 * Customers, PaymentMethods, Subscriptions read), answering in Stripe's documented shapes, so the official SDK, pointed at it with
 * STRIPE_API_URL, runs as it would against Stripe. Like Stripe, a repeated Idempotency-Key
 * answers the first response again. `declineOffSession` makes an off-session confirmation fail
 * as a card that needs the customer does; `refuseRefunds` and `refusePaymentIntents` make those fail; `dropRefundAnswers`
 * makes refunds whose answers are lost; `refuseSubscriptions` makes reading a subscription fail
 * as an outage does.
 */
export class StripeStandIn {
  readonly calls: StripeCall[] = [];
  readonly intents = new Map<string, StripeObject>();
  readonly refunds: StripeObject[] = [];
  /** The cards attached to customers, as PaymentMethods (`addCard`). */
  readonly paymentMethods = new Map<string, StripeObject>();
  /** Customers made elsewhere (another store's), as Stripe keeps them (`addCustomer`). */
  readonly customers = new Map<string, StripeObject>();
  /** Subscriptions an old store made with Stripe Billing (`addSubscription`). */
  readonly subscriptions = new Map<string, StripeObject>();
  /** Makes listing and detaching cards fail as an outage does. */
  refuseCards = false;
  refuseSubscriptions = false;
  declineOffSession = false;
  refuseRefunds = false;
  refusePaymentIntents = false;
  /** Refunds to make and then lose the answer of (the connection cut), as a network failure would. */
  dropRefundAnswers = 0;
  private readonly idempotent = new Map<string, { status: number; body: unknown }>();
  private next = 0;
  private server: Server | null = null;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.read(req).then((text) => {
        const { status, body } = this.answer(req, text);
        if (req.url === '/v1/refunds' && this.dropRefundAnswers > 0) {
          this.dropRefundAnswers--;
          req.socket.destroy();
          return;
        }
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${++this.next}` });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /** Attaches a card to a customer, as keeping it at a payment does. */
  addCard(
    customer: string,
    card: { id: string; brand?: string; last4?: string; exp_year?: number; country?: string },
  ) {
    this.paymentMethods.set(card.id, {
      id: card.id,
      object: 'payment_method',
      type: 'card',
      customer,
      card: {
        brand: card.brand ?? 'visa',
        last4: card.last4 ?? '4242',
        exp_month: 12,
        exp_year: card.exp_year ?? 2031,
        country: card.country ?? 'US',
        funding: 'credit',
      },
      livemode: false,
    });
  }

  /** A customer made elsewhere, with the card its invoices and subscriptions use by default. */
  addCustomer(id: string, opts: { email?: string; defaultPaymentMethod?: string } = {}) {
    this.customers.set(id, {
      id,
      object: 'customer',
      email: opts.email ?? null,
      invoice_settings: {
        custom_fields: null,
        default_payment_method: opts.defaultPaymentMethod ?? null,
        footer: null,
        rendering_options: null,
      },
      livemode: false,
    });
  }

  /**
   * A Stripe Billing subscription of another store, in `status` (`active`, `trialing`, `past_due`,
   * `canceled`, `unpaid`, `incomplete`, `incomplete_expired`, `paused`), set to cancel at its
   * period's end or not; set it again to change it.
   */
  addSubscription(
    id: string,
    customer: string,
    status = 'active',
    opts: { cancelAtPeriodEnd?: boolean } = {},
  ) {
    const created = Math.floor(Date.now() / 1000) - 30 * 86_400;
    const end = created + 60 * 86_400;
    this.subscriptions.set(id, {
      id,
      object: 'subscription',
      customer,
      status,
      cancel_at_period_end: opts.cancelAtPeriodEnd ?? false,
      canceled_at: status === 'canceled' ? Math.floor(Date.now() / 1000) : null,
      ended_at:
        status === 'canceled' || status === 'incomplete_expired' ? Math.floor(Date.now() / 1000) : null,
      collection_method: 'charge_automatically',
      created,
      currency: 'usd',
      default_payment_method: null,
      items: {
        object: 'list',
        data: [
          {
            id: `si_${id.slice(4)}`,
            object: 'subscription_item',
            current_period_start: created,
            current_period_end: end,
            price: { id: 'price_old', object: 'price', unit_amount: 1200, currency: 'usd' },
            quantity: 1,
          },
        ],
        has_more: false,
        url: `/v1/subscription_items?subscription=${id}`,
      },
      metadata: {},
      livemode: false,
    });
  }

  /** The calls to one endpoint, e.g. `POST /v1/payment_intents`. */
  callsTo(route: string): StripeCall[] {
    return this.calls.filter((c) => `${c.method} ${c.path}` === route);
  }

  private async read(req: IncomingMessage): Promise<string> {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    return text;
  }

  private id(prefix: string): string {
    return `${prefix}_${Date.now().toString(36)}${(++this.next).toString(36)}`;
  }

  private answer(req: IncomingMessage, text: string): { status: number; body: unknown } {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const params = Object.fromEntries(new URLSearchParams(text));
    const key = req.headers['idempotency-key'] as string | undefined;
    this.calls.push({
      method: req.method ?? '',
      path: url.pathname,
      params,
      idempotencyKey: key,
      authorization: req.headers.authorization,
    });
    if (req.method === 'POST' && key) {
      const seen = this.idempotent.get(`${url.pathname} ${key}`);
      if (seen) return seen;
      const first = this.route(req.method, url.pathname, params, url);
      this.idempotent.set(`${url.pathname} ${key}`, first);
      return first;
    }
    return this.route(req.method ?? '', url.pathname, params, url);
  }

  private route(
    method: string,
    path: string,
    p: Record<string, string>,
    url: URL,
  ): { status: number; body: unknown } {
    if (path.startsWith('/v1/payment_methods') && this.refuseCards) {
      return error(500, 'api_error', 'api_error', 'An unknown error occurred');
    }
    if (method === 'GET' && path === '/v1/payment_methods') {
      const customer = url.searchParams.get('customer');
      const data = [...this.paymentMethods.values()].filter((pm) => pm.customer === customer);
      return { status: 200, body: { object: 'list', data, has_more: false, url: '/v1/payment_methods' } };
    }
    const one = /^\/v1\/payment_methods\/([^/]+)$/.exec(path);
    if (method === 'GET' && one) {
      const pm = this.paymentMethods.get(one[1]!);
      return pm ? { status: 200, body: pm } : missing('payment_method');
    }
    const detach = /^\/v1\/payment_methods\/([^/]+)\/detach$/.exec(path);
    if (method === 'POST' && detach) {
      const pm = this.paymentMethods.get(detach[1]!);
      if (!pm?.customer) return missing('payment_method');
      this.paymentMethods.set(pm.id, { ...pm, customer: null });
      return { status: 200, body: { ...pm, customer: null } };
    }
    if (method === 'POST' && path === '/v1/payment_intents') {
      if (this.refusePaymentIntents) {
        return error(400, 'invalid_request_error', 'amount_too_small', 'Amount must be at least $0.50 usd');
      }
      return this.createIntent(p);
    }
    const intent = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);
    if (method === 'GET' && intent) {
      const found = this.intents.get(intent[1]!);
      return found ? { status: 200, body: found } : missing('payment_intent');
    }
    const customer = /^\/v1\/customers\/([^/]+)$/.exec(path);
    if (method === 'GET' && customer) {
      const found = this.customers.get(customer[1]!);
      return found ? { status: 200, body: found } : missing('customer');
    }
    const subscription = /^\/v1\/subscriptions\/([^/]+)$/.exec(path);
    if (method === 'GET' && subscription) {
      if (this.refuseSubscriptions) return error(500, 'api_error', 'api_error', 'An unknown error occurred');
      const found = this.subscriptions.get(subscription[1]!);
      return found ? { status: 200, body: found } : missing('subscription');
    }
    if (method === 'POST' && path === '/v1/customers') {
      return { status: 200, body: { id: this.id('cus'), object: 'customer', email: p.email ?? null } };
    }
    if (method === 'POST' && path === '/v1/refunds') {
      if (this.refuseRefunds) {
        return error(
          400,
          'invalid_request_error',
          'charge_already_refunded',
          'Charge has already been refunded.',
        );
      }
      const refund = {
        id: this.id('re'),
        object: 'refund',
        amount: Number(p.amount),
        currency: 'usd',
        payment_intent: p.payment_intent,
        status: 'succeeded',
        metadata: metadata(p),
      };
      this.refunds.push(refund);
      return { status: 200, body: refund };
    }
    return missing('route');
  }

  private createIntent(p: Record<string, string>): { status: number; body: unknown } {
    const id = this.id('pi');
    const offSession = p.off_session === 'true' && p.confirm === 'true';
    const base: StripeObject = {
      id,
      object: 'payment_intent',
      amount: Number(p.amount),
      amount_received: 0,
      currency: p.currency,
      customer: p.customer ?? null,
      description: p.description ?? null,
      metadata: metadata(p),
      payment_method: p.payment_method ?? null,
      setup_future_usage: p.setup_future_usage ?? null,
      statement_descriptor_suffix: p.statement_descriptor_suffix ?? null,
      client_secret: `${id}_secret_${Math.random().toString(36).slice(2)}`,
      status: 'requires_payment_method',
      last_payment_error: null,
      livemode: false,
    };
    if (offSession && this.declineOffSession) {
      const failed = {
        ...base,
        status: 'requires_payment_method',
        last_payment_error: {
          code: 'authentication_required',
          message: 'This payment requires authentication.',
        },
      };
      this.intents.set(id, failed);
      return {
        status: 402,
        body: {
          error: {
            type: 'card_error',
            code: 'authentication_required',
            message: 'This payment requires authentication.',
            payment_intent: failed,
          },
        },
      };
    }
    const made = offSession ? { ...base, status: 'succeeded', amount_received: base.amount } : base;
    this.intents.set(id, made);
    return { status: 200, body: made };
  }
}

function metadata(p: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(p)) {
    const m = /^metadata\[(.+)\]$/.exec(k);
    if (m) out[m[1]!] = v;
  }
  return out;
}

const error = (status: number, type: string, code: string, message: string) => ({
  status,
  body: { error: { type, code, message } },
});
const missing = (what: string) => error(404, 'invalid_request_error', 'resource_missing', `No such ${what}`);

/** Stripe switched on with the test keys, the gateway enabled. */
export async function enableStripe(t: TestApp, extra: Record<string, unknown> = {}) {
  await setSettings(t, { ...STRIPE_KEYS, ...extra });
  await adminOk(t, 'PATCH', '/payment-gateways/stripe', { enabled: true });
}

/**
 * A store whose Stripe gateway is on and talks to a fresh stand-in, with the checkout limit out of
 * the way; `opts.env` adds to STRIPE_API_URL. The caller closes both (`stopStripeStore`).
 */
export async function startStripeStore(opts: TestAppOptions = {}) {
  const standIn = await new StripeStandIn().start();
  const t = await createTestApp({ ...opts, env: { ...opts.env, STRIPE_API_URL: standIn.url } });
  await setSettings(t, { checkout_rate_limit: 1000 });
  await enableStripe(t);
  return { t, standIn };
}

export async function stopStripeStore(store: { t?: TestApp; standIn?: StripeStandIn }) {
  await store.t?.close();
  await store.standIn?.stop();
}

let events = 0;

/** A Stripe event around `object`, as Stripe sends it. */
export function stripeEvent(
  type: string,
  object: Record<string, unknown>,
  id = `evt_${Date.now().toString(36)}${++events}`,
) {
  return {
    id,
    object: 'event',
    api_version: '2025-01-01',
    created: Math.floor(Date.now() / 1000),
    type,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object },
  };
}

/** The body and Stripe-Signature header of an event, signed with the SDK's own test helper. */
export function signed(
  event: unknown,
  opts: { secret?: string; timestamp?: number } = {},
): { payload: string; headers: Record<string, string> } {
  const payload = JSON.stringify(event);
  const header = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: opts.secret ?? STRIPE_KEYS.stripe_webhook_secret,
    ...(opts.timestamp === undefined ? {} : { timestamp: opts.timestamp }),
  });
  return { payload, headers: { 'content-type': 'application/json', 'stripe-signature': header } };
}

/** Delivers a signed event to the app's webhook route. */
export function deliver(t: TestApp, event: unknown, opts: { secret?: string; timestamp?: number } = {}) {
  const { payload, headers } = signed(event, opts);
  return t.app.inject({ method: 'POST', url: '/v1/stripe/webhook', payload, headers });
}

/** The stand-in's PaymentIntent as the succeeded event carries it. */
export function succeededIntent(standIn: StripeStandIn, id: string, patch: Record<string, unknown> = {}) {
  const intent = standIn.intents.get(id)!;
  return {
    ...intent,
    status: 'succeeded',
    amount_received: intent.amount,
    payment_method: 'pm_card_visa',
    ...patch,
  };
}

/**
 * A subscription bought with Stripe by a customer who kept the card: the card (a PaymentMethod of
 * the stand-in, `brand`/`last4` as given) is the customer's kept one. Answers the signed-in
 * customer's browser too.
 */
export async function keptCard(
  t: TestApp,
  standIn: StripeStandIn,
  card: { brand?: string; last4?: string } = {},
  buyer?: { b: Browser; email: string; customer: { id: number; password: string } },
) {
  const product = await createProduct(t, {
    type: 'subscription',
    price: '9.00',
    subscription: { period: 'month', interval: 1 },
  });
  const email = buyer?.email ?? uniqueEmail('kept');
  const customer = buyer?.customer ?? (await createCustomer(t, email));
  const b = buyer?.b ?? new Browser(t);
  if (!buyer) await b.login(email, customer.password);
  const out = await createOrder(
    t,
    { items: [{ product_id: product.id, qty: 1 }], billing: { ...BILLING, email }, payment_method: 'stripe' },
    b,
  );
  const pay = await payOrder(b, out.order_id, {
    key: out.order_key,
    payment_method: 'stripe',
    payment_data: { save_card: true },
  });
  const intent = (pay.json().next as { payment_intent: string }).payment_intent;
  const method = `pm_kept${out.order_id}x${Math.random().toString(36).slice(2, 8)}`;
  standIn.addCard(standIn.intents.get(intent)!.customer as string, { id: method, ...card });
  await deliver(
    t,
    stripeEvent('payment_intent.succeeded', succeededIntent(standIn, intent, { payment_method: method })),
  );
  const db = t.app.services.database.db;
  const kept = await db
    .selectFrom('stripe_customers')
    .selectAll()
    .where('user_id', '=', customer.id)
    .executeTakeFirstOrThrow();
  if (kept.payment_method_id !== method) throw new Error('the card was not kept');
  const sub = await db
    .selectFrom('subscriptions')
    .select('id')
    .where('parent_order_id', '=', out.order_id)
    .executeTakeFirstOrThrow();
  return { customer, email, b, kept, method, sub, order: out };
}
