import type { FastifyBaseLogger } from 'fastify';
import type Stripe from 'stripe';
import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { nextAttempt } from '../../outbox/worker.js';
import { sha256 } from '../../random.js';
import { type Actor, systemActor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { fromMinor } from '../catalogue/money.js';
import { refusal } from '../checkout/checkout.errors.js';
import type { PaymentGateway, PaymentOutcome } from '../orders/gateways.js';
import type { OrderRow } from '../orders/orders.model.js';
import { type OrdersService, PAID } from '../orders/orders.service.js';
import type { RefundsService } from '../orders/refunds.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { CardSummary, RenewalChargeRow, StripeRepository } from './stripe.repository.js';

/** A kept card as the buyer's account shows it (GET /v1/account/cards). */
export interface CardView extends CardSummary {
  /** The card kept last, which renews every subscription not given another. */
  default: boolean;
  /** The buyer's subscriptions that renew on this card. */
  subscriptions: number[];
}

/** Stripe's card brands, as a buyer reads them. */
const BRANDS: Record<string, string> = {
  amex: 'American Express',
  diners: 'Diners Club',
  discover: 'Discover',
  eftpos_au: 'eftpos',
  jcb: 'JCB',
  mastercard: 'Mastercard',
  unionpay: 'UnionPay',
  visa: 'Visa',
  cartes_bancaires: 'Cartes Bancaires',
};
export const brandName = (brand: string): string => BRANDS[brand] ?? 'Card';

/**
 * The SDK, loaded the first time a Stripe secret is used: a store that does not take Stripe never
 * loads it (about 10 MB of a server's idle memory, docs/performance.md, 'Memory').
 */
let sdk: Promise<typeof Stripe> | null = null;
const stripeSdk = (): Promise<typeof Stripe> => {
  sdk ??= import('stripe').then((m) => m.default);
  return sdk;
};

/** Who changes what Stripe's events change, in the audit trail. */
const STRIPE_ACTOR = systemActor('stripe');

/** How old a signed event may be, in seconds: Stripe's own default, against replays. */
const EVENT_TOLERANCE_S = 300;

/**
 * Delays before a renewal charge's attempts 2 to 4, in seconds, when Stripe could not be reached;
 * then the customer pays by the pay link (docs/payments.md, 'Renewals').
 */
export const RENEWAL_RETRY_DELAYS = [60, 600, 3600] as const;

/** What the webhook route answers: whether the event changed anything, or was already handled. */
export interface WebhookOutcome {
  received: true;
  /** `handled` (its effect committed now), `duplicate` (an earlier delivery's did) or `ignored`. */
  result: 'handled' | 'duplicate' | 'ignored';
}

/** Where the SDK sends its requests: Stripe's own API unless STRIPE_API_URL names a stand-in. */
function apiOptions(apiUrl: string | null): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  if (!apiUrl) return {};
  const url = new URL(apiUrl);
  return {
    host: url.hostname,
    port: url.port || (url.protocol === 'https:' ? 443 : 80),
    protocol: url.protocol === 'https:' ? 'https' : 'http',
  };
}

const money = (minor: number, order: Pick<OrderRow, 'decimals' | 'currency'>) =>
  `${fromMinor(minor, order.decimals)} ${order.currency}`;

/**
 * The Stripe gateway (docs/payments.md, 'Stripe'), through the official SDK. Paying an order makes
 * (once per order, under an idempotency key derived from it) a PaymentIntent that the customer
 * confirms on the page with the Payment Element; the order is paid only by the signed
 * `payment_intent.succeeded` event. Every event is handled in one transaction with the insert of
 * its id, so a repeated delivery acts once. Refunds go through Stripe's refund API, disputes flag
 * the order and act on its licenses as a full refund would.
 */
export class StripeService {
  private cached: { secret: string; stripe: Stripe } | null = null;

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: StripeRepository,
    private readonly settings: SettingsService,
    private readonly orders: OrdersService,
    private readonly refunds: RefundsService,
    private readonly catalogue: CatalogueService,
    private readonly subscriptions: Pick<SubscriptionsService, 'listForUser' | 'idsStartedBy'>,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly apiUrl: string | null,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The gateway other modules see (src/wiring.ts adds it to the orders module's gateways). */
  readonly gateway: PaymentGateway = {
    id: 'stripe',
    offline: false,
    pay: (input) => this.pay(input.order, input.payment_data),
    refund: (input) => this.refund(input),
  };

  /** The SDK client for the stored secret key (made again when the key changes), or null when unset. */
  private async client(tx?: Tx): Promise<Stripe | null> {
    const secret = await this.settings.secret('stripe_secret_key', tx);
    if (!secret) return null;
    if (this.cached?.secret !== secret) {
      const Sdk = await stripeSdk();
      this.cached = {
        secret,
        stripe: new Sdk(secret, {
          ...apiOptions(this.apiUrl),
          // One retry of a request that failed in transit: the idempotency key makes it safe.
          maxNetworkRetries: 1,
          timeout: 20_000,
          telemetry: false,
          appInfo: { name: 'Tollgate' },
        }),
      };
    }
    return this.cached.stripe;
  }

  /**
   * The PaymentIntent of an order: the one already made for it, else a new one under a key
   * derived from the order (its id and a hash of its key, so another store on the same Stripe
   * account never meets it), so two submits at once, or a retry, make one PaymentIntent. A
   * subscription customer who agreed (`payment_data.save_card`) gets the card kept for renewals.
   */
  private async pay(order: OrderRow, data: Record<string, unknown>): Promise<PaymentOutcome> {
    const stripe = await this.client();
    const settings = await this.settings.get();
    if (!stripe || !settings.stripe_publishable_key) throw refusal('gateway_unavailable');
    const existing = await this.repo.payment(order.id);
    let intent: Stripe.PaymentIntent;
    try {
      if (existing) {
        intent = await stripe.paymentIntents.retrieve(existing.payment_intent_id);
      } else {
        const saveCard = data.save_card === true && order.customer_id !== null;
        const customer = saveCard ? await this.customerOf(stripe, order) : null;
        intent = await stripe.paymentIntents.create(
          {
            amount: Number(order.total),
            currency: order.currency.toLowerCase(),
            automatic_payment_methods: { enabled: true },
            description: `Order #${order.id}`,
            metadata: { order_id: String(order.id) },
            ...(settings.stripe_statement_descriptor
              ? { statement_descriptor_suffix: settings.stripe_statement_descriptor }
              : {}),
            ...(customer ? { customer, setup_future_usage: 'off_session' as const } : {}),
          },
          { idempotencyKey: `tollgate-order-${order.id}-${sha256(order.order_key).slice(0, 16)}` },
        );
        await this.repo.insertPayment({
          order_id: order.id,
          payment_intent_id: intent.id,
          save_card: customer ? 1 : 0,
          created_at: iso(this.clock.now()),
        });
      }
    } catch (e) {
      if (!(e instanceof (await stripeSdk()).errors.StripeError)) throw e;
      this.log.warn({ order_id: order.id, type: e.type, code: e.code }, 'Stripe refused a PaymentIntent');
      throw refusal('stripe_unavailable');
    }
    return {
      ok: true,
      status: 'pending',
      next: {
        gateway: 'stripe',
        publishable_key: settings.stripe_publishable_key,
        client_secret: intent.client_secret ?? '',
        payment_intent: intent.id,
      },
    };
  }

  /** The customer's Stripe customer, made once (under a key derived from the user) and kept. */
  private async customerOf(stripe: Stripe, order: OrderRow): Promise<string> {
    const userId = order.customer_id!;
    const known = await this.repo.customer(userId);
    if (known) return known.customer_id;
    const email = (JSON.parse(order.billing) as { email?: string }).email;
    const made = await stripe.customers.create(
      { ...(email ? { email } : {}), metadata: { user_id: String(userId) } },
      { idempotencyKey: `tollgate-customer-${userId}-${sha256(order.order_key).slice(0, 16)}` },
    );
    await this.repo.insertCustomer(userId, made.id, iso(this.clock.now()));
    return (await this.repo.customer(userId))!.customer_id;
  }

  /**
   * Gives back part or all of a Stripe order's payment through Stripe's refund API, inside the
   * refund's transaction (src/modules/orders/refunds.service.ts). The idempotency key is the
   * refund's own (the order, its refunded total before, the amount): when the transaction rolls
   * back after Stripe refunded (a lost connection, a crash), the administrator's retry of the same
   * refund gets the same Stripe refund back instead of a second one.
   */
  private async refund(input: {
    order_id: number;
    amount: number;
    reason: string;
    idempotency_key: string;
    tx: Tx;
  }): Promise<string | null> {
    const stripe = await this.client(input.tx);
    if (!stripe) throw new ApiError('stripe_not_configured');
    const payment = await this.repo.payment(input.order_id, input.tx);
    // An order marked paid by hand, without a Stripe payment, has nothing to give back here.
    if (!payment) return null;
    try {
      const made = await stripe.refunds.create(
        {
          payment_intent: payment.payment_intent_id,
          amount: input.amount,
          metadata: { order_id: String(input.order_id) },
        },
        { idempotencyKey: input.idempotency_key },
      );
      return made.id;
    } catch (e) {
      if (!(e instanceof (await stripeSdk()).errors.StripeError)) throw e;
      this.log.warn({ order_id: input.order_id, type: e.type, code: e.code }, 'Stripe refused a refund');
      throw new ApiError('stripe_unavailable');
    }
  }

  /**
   * A renewal order was created (in its transaction): when its customer kept a card with Stripe,
   * the charge joins the renewal charges' outbox, made after the commit by the worker.
   */
  async renewalCreated(order: OrderRow, tx: Tx): Promise<void> {
    if (order.created_via !== 'renewal' || order.customer_id === null) return;
    if (!(await this.renewalMethod(order, tx))) return;
    await this.repo.addRenewalCharge(order.id, iso(this.clock.now()), tx);
  }

  /**
   * The card a renewal order is charged to: the one its buyer chose for the subscription, else the
   * one kept last; null when the buyer keeps none (or Stripe forgot the customer).
   */
  private async renewalMethod(
    order: OrderRow,
    tx?: Tx,
  ): Promise<{ customer_id: string; payment_method_id: string } | null> {
    if (order.customer_id === null) return null;
    const customer = await this.repo.customer(order.customer_id, tx);
    if (!customer) return null;
    const chosen = order.subscription_id ? await this.repo.subscriptionCard(order.subscription_id, tx) : null;
    const method = chosen ?? customer.payment_method_id;
    return method ? { customer_id: customer.customer_id, payment_method_id: method } : null;
  }

  /**
   * How a renewal email names the card that will pay it (docs/email.md): "Visa ending in 4242";
   * null when no card is kept, so the buyer pays by the link; undefined when the store does not
   * take Stripe, so the email says nothing of cards.
   */
  async renewalCard(order: OrderRow, tx: Tx): Promise<string | null | undefined> {
    const gateway = await this.catalogue.gateways.find('stripe', tx);
    if (!gateway?.enabled) return undefined;
    const kept = await this.renewalMethod(order, tx);
    if (!kept) return null;
    const card = await this.repo.card(kept.payment_method_id, tx);
    return card ? `${brandName(card.brand)} ending in ${card.last4}` : 'the card you kept';
  }

  /**
   * The cards the buyer keeps with Stripe (docs/payments.md, 'Saved cards'), as Stripe lists them
   * now, with which one renews what. None when the buyer never kept one, or Stripe is not set up.
   */
  async cards(userId: number): Promise<CardView[]> {
    const customer = await this.repo.customer(userId);
    const stripe = customer ? await this.client() : null;
    if (!customer || !stripe) return [];
    let listed: Stripe.PaymentMethod[];
    try {
      listed = (await stripe.paymentMethods.list({ customer: customer.customer_id, type: 'card', limit: 20 }))
        .data;
    } catch (e) {
      if (!(e instanceof (await stripeSdk()).errors.StripeError)) throw e;
      this.log.warn({ user_id: userId, type: e.type, code: e.code }, 'Stripe did not list the cards');
      throw new ApiError('stripe_unavailable');
    }
    const cards: CardSummary[] = listed.flatMap((pm) =>
      pm.card
        ? [
            {
              id: pm.id,
              brand: pm.card.brand,
              last4: pm.card.last4,
              exp_month: pm.card.exp_month,
              exp_year: pm.card.exp_year,
            },
          ]
        : [],
    );
    await this.repo.rememberCards(customer.customer_id, cards, iso(this.clock.now()));
    const subs = (await this.subscriptions.listForUser(userId)).map((sub) => sub.id);
    const chosen = await this.repo.subscriptionCards(subs);
    return cards.map((card) => ({
      ...card,
      default: card.id === customer.payment_method_id,
      subscriptions: subs.filter((id) => (chosen.get(id) ?? customer.payment_method_id) === card.id),
    }));
  }

  /**
   * The card an imported Stripe customer (docs/migrating.md) renews on, as Stripe says: the
   * customer's default payment method (`invoice_settings.default_payment_method`), else the first
   * card Stripe lists for them (`card` null: none). `undefined` when the store does not take Stripe
   * yet (nothing can be asked); null when Stripe does not know the customer (deleted there).
   * Stripe out of reach is 503 `stripe_unavailable`: the import reports the customer and a later
   * run finishes it.
   */
  async importedCard(
    customerId: string,
  ): Promise<{ customer_id: string; card: string | null } | null | undefined> {
    const stripe = await this.client();
    if (!stripe) return undefined;
    try {
      const customer = await stripe.customers.retrieve(customerId);
      if (customer.deleted) return null;
      const preferred = customer.invoice_settings?.default_payment_method;
      let method: Stripe.PaymentMethod | undefined;
      if (typeof preferred === 'string') method = await stripe.paymentMethods.retrieve(preferred);
      else if (preferred) method = preferred;
      else
        method = (await stripe.paymentMethods.list({ customer: customerId, type: 'card', limit: 1 })).data[0];
      if (method?.card) {
        const { brand, last4, exp_month, exp_year } = method.card;
        await this.repo.rememberCards(
          customerId,
          [{ id: method.id, brand, last4, exp_month, exp_year }],
          iso(this.clock.now()),
        );
      }
      return { customer_id: customerId, card: method?.card ? method.id : null };
    } catch (e) {
      const Sdk = await stripeSdk();
      if (e instanceof Sdk.errors.StripeInvalidRequestError && e.code === 'resource_missing') return null;
      if (!(e instanceof Sdk.errors.StripeError)) throw e;
      this.log.warn({ type: e.type, code: e.code }, 'Stripe did not answer for an imported customer');
      throw new ApiError('stripe_unavailable');
    }
  }

  /**
   * Whether Stripe still bills a subscription of the old store (`sub_…`, docs/migrating.md,
   * 'Subscriptions Stripe still bills'): `ended` once it is `canceled` or `incomplete_expired`, or
   * Stripe no longer knows it (404 `resource_missing`), or it is `active` or `trialing` and set to
   * cancel at its period's end (Stripe charges it no more); else `billing` (Stripe may still charge
   * one it is retrying, pausing or trialling).
   * `undefined` when the store does not take Stripe (nothing can be asked). Stripe out of reach is
   * 503 `stripe_unavailable`. Read-only at Stripe.
   */
  async oldSubscription(subscriptionId: string): Promise<'billing' | 'ended' | undefined> {
    const stripe = await this.client();
    if (!stripe) return undefined;
    try {
      const sub = await stripe.subscriptions.retrieve(subscriptionId);
      if (sub.status === 'canceled' || sub.status === 'incomplete_expired') return 'ended';
      const ending = sub.cancel_at_period_end && (sub.status === 'active' || sub.status === 'trialing');
      return ending ? 'ended' : 'billing';
    } catch (e) {
      const Sdk = await stripeSdk();
      if (e instanceof Sdk.errors.StripeInvalidRequestError && e.code === 'resource_missing') return 'ended';
      if (!(e instanceof Sdk.errors.StripeError)) throw e;
      this.log.warn({ type: e.type, code: e.code }, "Stripe did not answer for an old store's subscription");
      throw new ApiError('stripe_unavailable');
    }
  }

  /** Whether the user keeps a card for renewals here (an import asks Stripe only for those who do not). */
  async keepsCard(userId: number): Promise<boolean> {
    return !!(await this.repo.customer(userId))?.payment_method_id;
  }

  /**
   * Keeps an imported customer's Stripe customer and card (importedCard) for the user, in the
   * import's transaction, as a card kept at a payment here is: their subscriptions renew on it. A
   * user who already keeps another Stripe customer or a card here keeps theirs; an earlier run's
   * link without a card (Stripe was not set up then) gets the card now.
   */
  async linkImported(userId: number, customerId: string, card: string | null, tx: Tx): Promise<void> {
    const kept = await this.repo.customer(userId, tx);
    // Another Stripe customer, or a card already kept: theirs stays.
    if (kept && (kept.customer_id !== customerId || kept.payment_method_id)) return;
    const now = iso(this.clock.now());
    if (!kept) await this.repo.insertCustomer(userId, customerId, now, tx);
    if (card) await this.repo.savePaymentMethod(userId, card, now, tx);
  }

  /** One of the buyer's own cards, or 404 `card_not_found` (someone else's answers the same). */
  private async ownCard(userId: number, paymentMethodId: string): Promise<CardView> {
    const card = (await this.cards(userId)).find((c) => c.id === paymentMethodId);
    if (!card) throw new ApiError('card_not_found');
    return card;
  }

  /**
   * Removes a kept card: Stripe detaches it from the buyer's customer, and no renewal tries it
   * again (the subscriptions that renewed on it fall back to the card kept last, or the pay link).
   */
  async removeCard(userId: number, paymentMethodId: string, actor: Actor): Promise<void> {
    await this.ownCard(userId, paymentMethodId);
    const stripe = (await this.client())!;
    try {
      await stripe.paymentMethods.detach(paymentMethodId);
    } catch (e) {
      if (!(e instanceof (await stripeSdk()).errors.StripeError)) throw e;
      this.log.warn({ user_id: userId, type: e.type, code: e.code }, 'Stripe did not detach a card');
      throw new ApiError('stripe_unavailable');
    }
    await withTransaction(this.database, async (tx) => {
      const now = iso(this.clock.now());
      await this.repo.dropCard(paymentMethodId, tx);
      await this.repo.forgetPaymentMethod(paymentMethodId, now, tx);
      const changes = { payment_method: { before: paymentMethodId, after: null } };
      await this.audit.record(
        actor,
        { entity_type: 'user', entity_id: userId, action: 'card_removed', changes },
        tx,
      );
    });
  }

  /** The buyer's choice of card for one of their subscriptions' renewals. */
  async chooseCard(
    userId: number,
    subscriptionId: number,
    paymentMethodId: string,
    actor: Actor,
  ): Promise<void> {
    const sub = (await this.subscriptions.listForUser(userId)).find((s) => s.id === subscriptionId);
    if (!sub) throw new ApiError('subscription_not_found');
    await this.ownCard(userId, paymentMethodId);
    await withTransaction(this.database, async (tx) => {
      const before = await this.repo.subscriptionCard(subscriptionId, tx);
      await this.repo.chooseSubscriptionCard(subscriptionId, paymentMethodId, iso(this.clock.now()), tx);
      const changes = { payment_method: { before, after: paymentMethodId } };
      await this.audit.record(
        actor,
        { entity_type: 'subscription', entity_id: subscriptionId, action: 'card_chosen', changes },
        tx,
      );
    });
  }

  /** Whether the renewal charges can run: the secret key is set (else they wait). */
  async canCharge(): Promise<boolean> {
    return (await this.client()) !== null;
  }

  /**
   * One attempt at a renewal charge: a PaymentIntent confirmed off-session with the kept card,
   * under a key derived from the order (a retried attempt charges once). Stripe's event pays the
   * order, as any other. A card that is declined or needs the customer (3-D Secure) ends the
   * attempts: the order becomes `failed`, which sends the customer the "renewal payment failed"
   * email with its pay link, where the same PaymentIntent is confirmed in the page. Stripe out of
   * reach is tried again later (RENEWAL_RETRY_DELAYS).
   */
  async chargeRenewal(row: RenewalChargeRow, lease: string, stopping: AbortSignal): Promise<void> {
    const attempt = row.attempts + 1;
    const started = this.clock.now();
    const finish = (status: string, error: string | null, retryAt: string | null = null) =>
      this.repo.outbox.finish(row.id, lease, {
        status,
        attempts: attempt,
        next_attempt_at: retryAt,
        last_error: error,
        updated_at: iso(this.clock.now()),
      });
    const order = await this.orders.find(row.order_id);
    const kept = order ? await this.renewalMethod(order) : null;
    const stripe = await this.client();
    if (order?.status !== 'pending' || !kept || !stripe) {
      await finish('failed', 'the order is no longer waiting for payment, or no card is kept');
      return;
    }
    try {
      stopping.throwIfAborted();
      const intent = await stripe.paymentIntents.create(
        {
          amount: Number(order.total),
          currency: order.currency.toLowerCase(),
          customer: kept.customer_id,
          payment_method: kept.payment_method_id,
          off_session: true,
          confirm: true,
          description: `Renewal order #${order.id}`,
          metadata: { order_id: String(order.id) },
        },
        { idempotencyKey: `tollgate-renewal-${order.id}-${sha256(order.order_key).slice(0, 16)}` },
      );
      await this.repo.insertPayment({
        order_id: order.id,
        payment_intent_id: intent.id,
        save_card: 0,
        created_at: iso(this.clock.now()),
      });
      await finish('charged', null);
    } catch (e) {
      if (stopping.aborted) throw e;
      if (e instanceof (await stripeSdk()).errors.StripeCardError) {
        await this.renewalDeclined(order, e);
        await finish('failed', `${e.code ?? 'card_error'}: ${e.message}`);
        return;
      }
      if (!(e instanceof (await stripeSdk()).errors.StripeError)) throw e;
      const retryAt = nextAttempt(attempt, RENEWAL_RETRY_DELAYS, started);
      await finish(retryAt ? 'pending' : 'failed', `${e.type}: ${e.message}`, retryAt);
      this.log.warn({ order_id: order.id, attempt, type: e.type }, 'renewal charge attempt failed');
    }
  }

  /** The kept card was declined or needs the customer: the order fails, so its pay link is emailed. */
  private async renewalDeclined(order: OrderRow, e: InstanceType<typeof Stripe.errors.StripeCardError>) {
    const intentId = e.payment_intent?.id;
    if (intentId) {
      await this.repo.insertPayment({
        order_id: order.id,
        payment_intent_id: intentId,
        save_card: 0,
        created_at: iso(this.clock.now()),
      });
    }
    const items = await this.orders.items(order.id);
    const products = await this.orders.productsOf(items);
    const settings = await this.settings.get();
    await withTransaction(this.database, async (tx) => {
      const locked = await this.orders.lock(order.id, tx);
      if (!locked) return;
      await this.refunds.systemNote(
        order.id,
        'payment',
        `Stripe renewal charge${intentId ? ` ${intentId}` : ''} with the kept card failed (${e.code ?? 'card_error'}): the customer was sent the pay link.`,
        tx,
      );
      if (locked.status === 'pending')
        await this.orders.transition(locked, 'failed', { products, settings }, tx);
    });
  }

  /**
   * One delivery of the webhook: the signature (with the SDK, against the raw body, at most
   * EVENT_TOLERANCE_S old) or 400 `stripe_signature_invalid`, then the event's effect. Nothing is
   * sent to Stripe here, so the answer comes within one transaction's time.
   */
  async webhook(raw: Buffer, signature: string | undefined): Promise<WebhookOutcome> {
    const secret = await this.settings.secret('stripe_webhook_secret');
    if (!secret) throw new ApiError('stripe_not_configured');
    let event: Stripe.Event;
    const Sdk = await stripeSdk();
    try {
      // Against the real time, not the store's clock: Stripe signs with the real time, and a test
      // clock moved forward must not turn every event stale.
      event = Sdk.webhooks.constructEvent(raw, signature ?? '', secret, EVENT_TOLERANCE_S);
    } catch (e) {
      if (e instanceof Sdk.errors.StripeSignatureVerificationError) {
        throw new ApiError('stripe_signature_invalid');
      }
      // Signed, but not JSON: Stripe never sends that.
      throw new ApiError('rest_invalid_json');
    }
    // Signed, but not shaped as Stripe's events are: nothing to act on safely.
    const object = event.data?.object as { id?: unknown } | undefined;
    if (typeof event.id !== 'string' || typeof event.type !== 'string' || typeof object?.id !== 'string') {
      throw new ApiError('rest_invalid_param', { data: { params: { event: 'not a Stripe event' } } });
    }
    switch (event.type) {
      case 'payment_intent.succeeded':
        return this.succeeded(event.id, event.type, event.data.object);
      case 'payment_intent.payment_failed':
        return this.failed(event.id, event.type, event.data.object);
      case 'charge.dispute.created':
        return this.disputed(event.id, event.type, event.data.object);
      case 'charge.refunded':
        return this.refunded(event.id, event.type, event.data.object);
      case 'charge.dispute.closed':
        return this.disputeClosed(event.id, event.type, event.data.object);
      case 'payment_method.detached':
        return this.methodDetached(event.id, event.type, event.data.object);
      case 'customer.deleted':
        return this.customerDeleted(event.id, event.type, event.data.object);
      default:
        return { received: true, result: 'ignored' };
    }
  }

  /**
   * Runs `effect` with the event claimed in the same transaction: `duplicate` when an earlier
   * delivery's claim committed (its effect with it).
   */
  private async once(
    eventId: string,
    type: string,
    effect: (tx: Tx, now: string) => Promise<void>,
  ): Promise<WebhookOutcome> {
    const handled = await withTransaction(this.database, async (tx) => {
      const now = iso(this.clock.now());
      if (!(await this.repo.claimEvent(eventId, type, now, tx))) return false;
      await effect(tx, now);
      return true;
    });
    return { received: true, result: handled ? 'handled' : 'duplicate' };
  }

  /** The order of one of our PaymentIntents; null for a PaymentIntent another system made. */
  private async orderOf(paymentIntentId: string) {
    const payment = await this.repo.paymentByIntent(paymentIntentId);
    const order = payment ? await this.orders.find(payment.order_id) : undefined;
    return payment && order ? { payment, order } : null;
  }

  /**
   * The payment succeeded: the order becomes `processing` (its licenses issued, subscriptions
   * started) unless it is already paid, refunded or cancelled, or the amount is not its total;
   * those are left as they are, with a note for the store owner. A card the customer agreed to
   * keep is saved for the renewals.
   */
  private async succeeded(
    eventId: string,
    type: string,
    intent: Stripe.PaymentIntent,
  ): Promise<WebhookOutcome> {
    const found = await this.orderOf(intent.id);
    if (!found) return { received: true, result: 'ignored' };
    const { payment, order } = found;
    const items = await this.orders.items(order.id);
    const products = await this.orders.productsOf(items);
    const settings = await this.settings.get();
    const title = (await this.catalogue.gateways.find('stripe'))?.title ?? 'Stripe';
    const cardCountry = await this.cardCountry(intent);
    return this.once(eventId, type, async (tx, now) => {
      const locked = await this.orders.lock(order.id, tx);
      if (!locked) return;
      const paid = money(intent.amount_received, locked);
      const note = (text: string) => this.refunds.systemNote(order.id, 'payment', text, tx);
      if (PAID.has(locked.status) || locked.status === 'refunded' || locked.status === 'cancelled') {
        await note(
          `Stripe payment ${intent.id} of ${paid} succeeded, but the order was already ${locked.status}: refund it if it should not be charged.`,
        );
        return;
      }
      if (
        intent.amount_received !== Number(locked.total) ||
        intent.currency !== locked.currency.toLowerCase()
      ) {
        await note(
          `Stripe payment ${intent.id} of ${intent.amount_received} ${intent.currency.toUpperCase()} (minor units) does not match the order's total; the order was not marked paid.`,
        );
        return;
      }
      let current = locked;
      if (locked.status === 'failed' && locked.stock_held === '[]') {
        const held = await this.orders.holdAgain(locked, items, products, tx);
        if (!held) {
          await note(
            `Stripe payment ${intent.id} of ${paid} succeeded, but the items are out of stock: refund it or restock and mark the order paid.`,
          );
          return;
        }
        current = held;
      }
      if (current.payment_method !== 'stripe') {
        await this.orders.update(current.id, { payment_method: 'stripe', payment_method_title: title }, tx);
        current = { ...current, payment_method: 'stripe', payment_method_title: title };
      }
      await note(`Stripe payment ${intent.id} succeeded: ${paid}.`);
      if (cardCountry) current = await this.orders.recordCardCountry(current, cardCountry, tx);
      await this.orders.transition(current, 'processing', { products, settings }, tx);
      const method =
        typeof intent.payment_method === 'string' ? intent.payment_method : intent.payment_method?.id;
      if (payment.save_card === 1 && method && current.customer_id !== null) {
        await this.repo.savePaymentMethod(current.customer_id, method, now, tx);
        // The card belongs to the subscriptions it was kept for: another subscription paid with
        // another card later keeps renewing on its own.
        for (const id of await this.subscriptions.idsStartedBy(current.id, tx)) {
          await this.repo.chooseSubscriptionCard(id, method, now, tx);
        }
      }
    });
  }

  /**
   * The paying card's country, a piece of the order's evidence of location (docs/taxes.md): the
   * event's PaymentIntent names its PaymentMethod, which Stripe is asked for. Null when there is
   * none, or Stripe cannot say: the payment is recorded all the same.
   */
  private async cardCountry(intent: Stripe.PaymentIntent): Promise<string | null> {
    const method = intent.payment_method;
    if (!method) return null;
    if (typeof method !== 'string') return method.card?.country ?? null;
    try {
      const stripe = await this.client();
      const country = stripe ? (await stripe.paymentMethods.retrieve(method)).card?.country : null;
      return typeof country === 'string' && /^[A-Z]{2}$/.test(country) ? country : null;
    } catch {
      return null;
    }
  }

  /** The payment failed: a pending order becomes `failed` (its stock given back), with a note. */
  private async failed(eventId: string, type: string, intent: Stripe.PaymentIntent): Promise<WebhookOutcome> {
    const found = await this.orderOf(intent.id);
    if (!found) return { received: true, result: 'ignored' };
    const { order } = found;
    const items = await this.orders.items(order.id);
    const products = await this.orders.productsOf(items);
    const settings = await this.settings.get();
    return this.once(eventId, type, async (tx) => {
      const locked = await this.orders.lock(order.id, tx);
      if (!locked) return;
      const why = intent.last_payment_error?.message ?? 'declined';
      await this.refunds.systemNote(order.id, 'payment', `Stripe payment ${intent.id} failed: ${why}`, tx);
      if (locked.status === 'pending')
        await this.orders.transition(locked, 'failed', { products, settings }, tx);
    });
  }

  /**
   * A refund of one of our payments, made here or in the Stripe Dashboard: the charge's
   * `amount_refunded` is the whole refunded so far, and the order records what it has not yet
   * (RefundsService.recordGatewayRefund), under its row lock, so repeated, concurrent and
   * out-of-order deliveries record each refunded cent once.
   */
  private async refunded(eventId: string, type: string, charge: Stripe.Charge): Promise<WebhookOutcome> {
    const intentId =
      typeof charge.payment_intent === 'string' ? charge.payment_intent : charge.payment_intent?.id;
    const found = intentId ? await this.orderOf(intentId) : null;
    if (!found) return { received: true, result: 'ignored' };
    const { order } = found;
    if (charge.currency !== order.currency.toLowerCase() || !Number.isSafeInteger(charge.amount_refunded)) {
      return { received: true, result: 'ignored' };
    }
    return this.once(eventId, type, async (tx) => {
      await this.refunds.recordGatewayRefund(order.id, charge.amount_refunded, charge.id, tx);
    });
  }

  /** A chargeback: the order is flagged, noted, and its licenses follow `refund_license_action`. */
  private async disputed(eventId: string, type: string, dispute: Stripe.Dispute): Promise<WebhookOutcome> {
    const intentId =
      typeof dispute.payment_intent === 'string' ? dispute.payment_intent : dispute.payment_intent?.id;
    const found = intentId ? await this.orderOf(intentId) : null;
    if (!found) return { received: true, result: 'ignored' };
    const { order } = found;
    return this.once(eventId, type, (tx) =>
      this.refunds.recordDispute(
        order.id,
        `Stripe dispute ${dispute.id} opened: ${money(dispute.amount, order)}, reason ${dispute.reason}, status ${dispute.status}.`,
        tx,
      ),
    );
  }

  /**
   * A chargeback decided: `won` (and an inquiry closed with no chargeback, `warning_closed`) takes
   * the dispute's effect back; `lost` records the amount the bank took as a refund at the provider
   * (RefundsService.closeDispute). Any other status is not a decision and is ignored.
   */
  private async disputeClosed(
    eventId: string,
    type: string,
    dispute: Stripe.Dispute,
  ): Promise<WebhookOutcome> {
    const won = dispute.status === 'won' || dispute.status === 'warning_closed';
    if (!won && dispute.status !== 'lost') return { received: true, result: 'ignored' };
    const intentId =
      typeof dispute.payment_intent === 'string' ? dispute.payment_intent : dispute.payment_intent?.id;
    const found = intentId ? await this.orderOf(intentId) : null;
    if (!found) return { received: true, result: 'ignored' };
    const { order } = found;
    if (dispute.currency !== order.currency.toLowerCase() || !Number.isSafeInteger(dispute.amount)) {
      return { received: true, result: 'ignored' };
    }
    const body = `Stripe dispute ${dispute.id} closed: ${dispute.status} (${money(dispute.amount, order)}).`;
    return this.once(eventId, type, (tx) =>
      this.refunds.closeDispute(
        order.id,
        { won, amountMinor: dispute.amount, reference: dispute.id, body },
        STRIPE_ACTOR,
        tx,
      ),
    );
  }

  /**
   * A card removed from its customer at Stripe: it is no longer kept for renewals, so the next
   * renewal order is not charged to it; its renewal email asks for payment by the pay link instead.
   */
  private async methodDetached(
    eventId: string,
    type: string,
    method: Stripe.PaymentMethod,
  ): Promise<WebhookOutcome> {
    return this.once(eventId, type, async (tx, now) => {
      await this.repo.dropCard(method.id, tx);
      for (const userId of await this.repo.forgetPaymentMethod(method.id, now, tx)) {
        const changes = { payment_method: { before: method.id, after: null } };
        await this.audit.record(
          STRIPE_ACTOR,
          { entity_type: 'user', entity_id: userId, action: 'card_detached', changes },
          tx,
        );
      }
    });
  }

  /**
   * A Stripe customer deleted at Stripe: the link to it (and its kept card) is dropped. Nothing
   * else is: the user, orders and subscriptions stay, and renewals are paid by the pay link until
   * the customer keeps a card again with a new payment.
   */
  private async customerDeleted(
    eventId: string,
    type: string,
    customer: Stripe.Customer | Stripe.DeletedCustomer,
  ): Promise<WebhookOutcome> {
    return this.once(eventId, type, async (tx) => {
      for (const userId of await this.repo.forgetCustomer(customer.id, tx)) {
        const changes = { stripe_customer: { before: customer.id, after: null } };
        await this.audit.record(
          STRIPE_ACTOR,
          { entity_type: 'user', entity_id: userId, action: 'stripe_customer_deleted', changes },
          tx,
        );
      }
    });
  }
}
