import { Type } from 'typebox';
import { requireUser } from '../../http/auth.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import type { StripeService } from './stripe.service.js';

/** Stripe's events are a few kilobytes; anything far larger is not one. */
const WEBHOOK_BODY_LIMIT = 256 * 1024;

const Outcome = Type.Object({
  received: Type.Literal(true),
  result: Type.Union([Type.Literal('handled'), Type.Literal('duplicate'), Type.Literal('ignored')], {
    description:
      'handled: its effect committed now; duplicate: an earlier delivery of this event id was handled; ignored: not an event Tollgate acts on, or a PaymentIntent it did not make',
  }),
});

/**
 * The endpoint registered with Stripe (docs/payments.md, 'Stripe'). Its own plugin, so that only
 * here the JSON body is kept as the raw bytes the signature covers; the service verifies it.
 */
export async function stripeRoutes(app: App, opts: { stripe: StripeService }) {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
    done(null, body),
  );
  app.post(
    '/stripe/webhook',
    {
      bodyLimit: WEBHOOK_BODY_LIMIT,
      schema: {
        tags: ['payments'],
        summary: 'Stripe webhook endpoint',
        description:
          "Receives the events of the Stripe account (payment_intent.succeeded, payment_intent.payment_failed, charge.dispute.created, charge.dispute.closed, charge.refunded, payment_method.detached, customer.deleted), signed in the Stripe-Signature header with the endpoint's signing secret (setting stripe_webhook_secret). The body is the event as Stripe sends it (application/json, at most 256 KiB). An unsigned, wrongly signed or more than 5 minutes old event changes nothing (400 stripe_signature_invalid); each event id acts once.",
        headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String({ maxLength: 8192 })) }),
        response: { 200: Outcome, ...errors(400, 413, 415, 503) },
      },
    },
    async (request) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      return opts.stripe.webhook(raw, request.headers['stripe-signature']);
    },
  );
}

/** A Stripe PaymentMethod id as Stripe makes them (`pm_…`, `card_…` for older cards). */
const CardId = Type.String({ pattern: '^(pm|card)_[A-Za-z0-9]{1,250}$', maxLength: 255 });

const Card = Type.Object({
  id: Type.String(),
  brand: Type.String({ description: "Stripe's brand name: visa, mastercard, amex…" }),
  last4: Type.String(),
  exp_month: Type.Integer(),
  exp_year: Type.Integer(),
  default: Type.Boolean({
    description: 'The card kept last: it renews every subscription not given another',
  }),
  subscriptions: Type.Array(Type.Integer(), { description: 'The subscriptions that renew on this card' }),
});

/**
 * The signed-in buyer's cards kept with Stripe (docs/payments.md, 'Saved cards'): listed from
 * Stripe, removed there, and chosen per subscription. Card numbers never reach Tollgate.
 */
export async function stripeAccountRoutes(app: App, opts: { stripe: StripeService }) {
  const tags = ['payments'];
  app.get(
    '/account/cards',
    {
      preValidation: requireUser,
      schema: {
        tags,
        summary: "The signed-in buyer's cards kept with Stripe for renewals",
        response: { 200: Type.Object({ cards: Type.Array(Card) }), ...errors(401, 502) },
      },
    },
    async (request) => ({ cards: await opts.stripe.cards(request.user!.id) }),
  );

  app.delete(
    '/account/cards/:id',
    {
      preValidation: requireUser,
      schema: {
        tags,
        summary: 'Remove a kept card: Stripe detaches it, and no renewal tries it again',
        params: Type.Object({ id: CardId }),
        response: { 200: Type.Object({ success: Type.Boolean() }), ...errors(400, 401, 404, 502) },
      },
    },
    async (request) => {
      await opts.stripe.removeCard(request.user!.id, request.params.id, actorOf(request));
      return { success: true };
    },
  );

  app.put(
    '/account/subscriptions/:id/card',
    {
      preValidation: requireUser,
      schema: {
        tags,
        summary: "Choose which kept card pays one of the buyer's subscriptions' renewals",
        params: IdParams,
        body: Type.Object({ payment_method_id: CardId }, { additionalProperties: false }),
        response: {
          200: Type.Object({ subscription_id: Type.Integer(), payment_method_id: Type.String() }),
          ...errors(400, 401, 404, 502),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      await opts.stripe.chooseCard(request.user!.id, id, request.body.payment_method_id, actorOf(request));
      return { subscription_id: id, payment_method_id: request.body.payment_method_id };
    },
  );
}
