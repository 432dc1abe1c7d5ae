import { Type } from 'typebox';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
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
          "Receives the events of the Stripe account (payment_intent.succeeded, payment_intent.payment_failed, charge.dispute.created, charge.refunded), signed in the Stripe-Signature header with the endpoint's signing secret (setting stripe_webhook_secret). The body is the event as Stripe sends it (application/json, at most 256 KiB). An unsigned, wrongly signed or more than 5 minutes old event changes nothing (400 stripe_signature_invalid); each event id acts once.",
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
