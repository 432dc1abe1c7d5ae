import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { AddRequest } from './cart.items.js';
import {
  AddBody,
  Cart,
  CartAdded,
  CartMutation,
  CouponBody,
  CurrencyQuery,
  EmptyBody,
  RemoveBody,
  UpdateBody,
} from './cart.schemas.js';
import { type CartCaller, type CartService, type CartSession, SESSION_IDLE_MS } from './cart.service.js';
import { toCartObject } from './cart.view.js';

/** The customer-session cookie: names the browser's cart session, guest or signed in. */
export const CART_COOKIE = 'tollgate_cart';
/** The shopper's chosen currency, set by `?currency=`. */
export const CURRENCY_COOKIE = 'tollgate_currency';

const tags = ['cart'];
const query = CurrencyQuery;
const codes = { validationCodes: { invalid: { currency: 'invalid_currency' as const } } };
const couponCodes = {
  validationCodes: { ...codes.validationCodes, missing: { coupon_code: 'coupon_code_required' as const } },
};

/** attribute_* fields of the body and of its `variation` object, the body's winning on a clash. */
function chosenAttributes(body: AddBody): Record<string, string> {
  const top = Object.entries(body as Record<string, unknown>).filter(
    (e): e is [string, string] => e[0].startsWith('attribute_') && typeof e[1] === 'string',
  );
  return { ...body.variation, ...Object.fromEntries(top) };
}

/**
 * Cart API. Every route resolves the currency and the customer session first and
 * (re)sends the session cookie; guests are never asked for a nonce. See docs/cart.md.
 */
export async function cartRoutes(
  app: App,
  opts: {
    cart: CartService;
    accounts: AccountsService;
    secureCookies: boolean;
    /** The store's PUBLIC_URL origin, for items' permalink and image (final once the server listens). */
    origin: () => string;
  },
) {
  const { cart, accounts, origin } = opts;
  const cookie = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: opts.secureCookies };

  async function currencyOf(request: FastifyRequest, reply: FastifyReply): Promise<string> {
    const requested = (request.query as { currency?: string }).currency;
    const currency = await cart.chooseCurrency(requested, request.cookies[CURRENCY_COOKIE]);
    if (requested !== undefined) {
      reply.setCookie(CURRENCY_COOKIE, currency, { ...cookie, maxAge: 365 * 86400 });
    }
    return currency;
  }

  const callerOf = (request: FastifyRequest): CartCaller => ({
    token: request.cookies[CART_COOKIE] ?? null,
    userId: request.user?.id ?? null,
    browserUser: async () =>
      request.sessionId ? ((await accounts.sessionUser(request.sessionId))?.user.id ?? null) : null,
  });

  const keepSession = (reply: FastifyReply, token: string) =>
    reply.setCookie(CART_COOKIE, token, { ...cookie, maxAge: SESSION_IDLE_MS / 1000 });

  /** A write's session: the caller's, or a new one (a cart is stored from the first write on). */
  async function begin(request: FastifyRequest, reply: FastifyReply): Promise<[CartSession, string]> {
    const currency = await currencyOf(request, reply);
    const session = await cart.open(callerOf(request));
    keepSession(reply, session.token);
    return [session, currency];
  }

  app.get(
    '/cart',
    {
      config: codes,
      schema: {
        tags,
        summary: 'The cart',
        querystring: query,
        response: { 200: Cart, ...errors(400, 403, 500) },
      },
    },
    async (request, reply) => {
      const { token, totals } = await cart.read(callerOf(request), await currencyOf(request, reply));
      keepSession(reply, token);
      return toCartObject(totals, origin());
    },
  );

  app.post(
    '/cart/add',
    {
      config: codes,
      schema: {
        tags,
        summary: 'Add a product (or a variation of a variable product) to the cart',
        querystring: query,
        body: AddBody,
        response: { 200: CartAdded, ...errors(400, 403, 404, 500) },
      },
    },
    async (request, reply) => {
      const [session, currency] = await begin(request, reply);
      const req: AddRequest = {
        product_id: request.body.product_id,
        quantity: request.body.quantity ?? 1,
        variation_id: request.body.variation_id ?? 0,
        attributes: chosenAttributes(request.body),
      };
      const { key, totals } = await cart.add(session, currency, req);
      return { message: 'Product added to cart.', cart_item_key: key, cart: toCartObject(totals, origin()) };
    },
  );

  app.post(
    '/cart/update',
    {
      config: codes,
      schema: {
        tags,
        summary: "Set a line's quantity (0 removes it)",
        querystring: query,
        body: UpdateBody,
        response: { 200: CartMutation, ...errors(400, 403, 500) },
      },
    },
    async (request, reply) => {
      const [session, currency] = await begin(request, reply);
      const { cart_item_key: key, quantity, variation_id: variationId } = request.body;
      const totals = await cart.update(session, currency, key, quantity, variationId);
      return { message: 'Cart updated.', cart: toCartObject(totals, origin()) };
    },
  );

  app.post(
    '/cart/remove',
    {
      config: codes,
      schema: {
        tags,
        summary: 'Remove a line',
        querystring: query,
        body: RemoveBody,
        response: { 200: CartMutation, ...errors(400, 403, 404, 500) },
      },
    },
    async (request, reply) => {
      const [session, currency] = await begin(request, reply);
      const totals = await cart.remove(session, currency, request.body.cart_item_key);
      return { message: 'Item removed from cart.', cart: toCartObject(totals, origin()) };
    },
  );

  app.post(
    '/cart/clear',
    {
      config: codes,
      schema: {
        tags,
        summary: 'Empty the cart: lines, shipping choice and coupons',
        querystring: query,
        body: EmptyBody,
        response: { 200: CartMutation, ...errors(400, 403, 500) },
      },
    },
    async (request, reply) => {
      const [session, currency] = await begin(request, reply);
      return { message: 'Cart cleared.', cart: toCartObject(await cart.clear(session, currency), origin()) };
    },
  );

  app.post(
    '/cart/apply-coupon',
    {
      config: couponCodes,
      schema: {
        tags,
        summary: 'Apply a coupon (code case-insensitive)',
        querystring: query,
        body: CouponBody,
        response: { 200: CartMutation, ...errors(400, 403, 500) },
      },
    },
    async (request, reply) => {
      const [session, currency] = await begin(request, reply);
      const totals = await cart.applyCoupon(session, currency, request.body.coupon_code);
      return { message: 'Coupon applied.', cart: toCartObject(totals, origin()) };
    },
  );

  app.post(
    '/cart/remove-coupon',
    {
      config: couponCodes,
      schema: {
        tags,
        summary: 'Remove an applied coupon',
        querystring: query,
        body: CouponBody,
        response: { 200: CartMutation, ...errors(400, 403, 500) },
      },
    },
    async (request, reply) => {
      const [session, currency] = await begin(request, reply);
      const totals = await cart.removeCoupon(session, currency, request.body.coupon_code);
      return { message: 'Coupon removed.', cart: toCartObject(totals, origin()) };
    },
  );
}
