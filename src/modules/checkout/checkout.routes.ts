import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../../http/auth.js';
import { ApiError } from '../../http/errors.js';
import { IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { safeEqual } from '../../random.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import { SESSION_DAYS } from '../accounts/accounts.service.js';
import { CART_COOKIE, CURRENCY_COOKIE } from '../cart/cart.routes.js';
import { CurrencyQuery } from '../cart/cart.schemas.js';
import { SESSION_IDLE_MS } from '../cart/cart.service.js';
import { FieldsBody, KeyQuery, PayBody, QuoteBody, RatesBody, SubmitBody } from './checkout.schemas.js';
import type { CheckoutCaller, CheckoutService } from './checkout.service.js';
import type { PaymentService } from './payment.service.js';
import type { SubmitService } from './submit.service.js';

const tags = ['checkout'];
const NO_STORE = 'no-store, no-cache, must-revalidate, max-age=0';
const codes = { validationCodes: { invalid: { currency: 'invalid_currency' as const } } };

/**
 * Checkout API (docs/checkout.md). Checks answer with checkout's own JSON bodies and the statuses
 * listed in docs/checkout.md, 'Failure bodies and HTTP statuses'; malformed requests are ordinary
 * REST errors (docs/api.md, 'Errors').
 */
export async function checkoutRoutes(
  app: App,
  opts: {
    checkout: CheckoutService;
    submit: SubmitService;
    payments: PaymentService;
    accounts: AccountsService;
    secureCookies: boolean;
  },
) {
  const { checkout, submit, payments, accounts } = opts;
  const cookie = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: opts.secureCookies };

  async function caller(request: FastifyRequest, reply: FastifyReply): Promise<CheckoutCaller> {
    const requested = (request.query as { currency?: string } | undefined)?.currency;
    const currency = await checkout.cart.chooseCurrency(requested, request.cookies[CURRENCY_COOKIE]);
    if (requested !== undefined)
      reply.setCookie(CURRENCY_COOKIE, currency, { ...cookie, maxAge: 365 * 86400 });
    return {
      ip: request.ip,
      user: request.user,
      cartToken: request.cookies[CART_COOKIE] ?? null,
      browserUser: async () =>
        request.sessionId ? ((await accounts.sessionUser(request.sessionId))?.user.id ?? null) : null,
      currency,
      nonce: request.sessionNonce,
    };
  }

  const keepCart = (reply: FastifyReply, token: string) =>
    reply.setCookie(CART_COOKIE, token, { ...cookie, maxAge: SESSION_IDLE_MS / 1000 });

  app.get(
    '/checkout/bootstrap',
    {
      config: codes,
      schema: { tags, summary: 'Everything a checkout page needs', querystring: CurrencyQuery },
    },
    async (request, reply) => {
      // Anonymous route: a nonce is verified only when one is sent (docs/checkout.md, 'Routes').
      const nonce = request.headers['x-rest-nonce'];
      if (nonce !== undefined) {
        if (typeof nonce !== 'string' || !request.sessionNonce || !safeEqual(nonce, request.sessionNonce)) {
          throw new ApiError('rest_cookie_invalid_nonce');
        }
      }
      reply.header('cache-control', NO_STORE).header('pragma', 'no-cache');
      const who = await caller(request, reply);
      // A read: an anonymous browser without a cart session stores nothing (docs/cart.md).
      const { token, totals } = await checkout.readCart(who);
      keepCart(reply, token);
      return checkout.bootstrap(who, totals);
    },
  );

  app.post(
    '/checkout/quote',
    {
      config: codes,
      schema: {
        tags,
        summary: 'Price a basket without changing the session',
        querystring: CurrencyQuery,
        body: QuoteBody,
      },
    },
    async (request, reply) => checkout.quote(request.body, await caller(request, reply)),
  );

  app.post(
    '/checkout/fields',
    { schema: { tags, summary: 'The checkout form fields', body: FieldsBody } },
    async (request) => checkout.fields(request.body.is_digital_only ?? false),
  );

  app.get('/countries', { schema: { tags, summary: 'Countries and their states' } }, async () =>
    checkout.countries(),
  );

  app.post(
    '/checkout/shipping-rates',
    {
      config: codes,
      schema: { tags, summary: 'Shipping rates for an address', querystring: CurrencyQuery, body: RatesBody },
    },
    async (request, reply) => checkout.shippingRates(request.body, await caller(request, reply)),
  );

  app.post(
    '/checkout/submit',
    {
      config: codes,
      schema: { tags, summary: 'Place an order', querystring: CurrencyQuery, body: SubmitBody },
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      if (key !== undefined && (typeof key !== 'string' || key.length < 1 || key.length > 255)) {
        throw new ApiError('rest_invalid_param', {
          data: { params: { 'Idempotency-Key': '1 to 255 characters' } },
        });
      }
      const who = await caller(request, reply);
      // The cart session is kept whatever the answer, refusals included.
      const session = await checkout.openCart(who);
      keepCart(reply, session.token);
      const outcome = await submit.submit(request.body, who, session, key);
      if (outcome.login) {
        reply.setCookie(SESSION_COOKIE, outcome.login.sessionId, { ...cookie, maxAge: SESSION_DAYS * 86400 });
      }
      return reply.status(outcome.status).send(outcome.body);
    },
  );

  app.get(
    '/checkout/order/:id',
    { schema: { tags, summary: 'Order receipt', params: IdParams, querystring: KeyQuery } },
    async (request) => payments.receipt(request.params.id, request.query.key, request.user),
  );

  app.post(
    '/checkout/pay-order/:id',
    { schema: { tags, summary: 'Pay an order', params: IdParams, querystring: KeyQuery, body: PayBody } },
    async (request) =>
      payments.pay(
        request.params.id,
        { ...request.body, key: request.body.key ?? request.query.key },
        request.user,
      ),
  );
}
