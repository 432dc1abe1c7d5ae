import { createHmac } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, iso, Occasionally } from '../../clock.js';
import type { AppSecrets } from '../../db/app-secrets.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError, type ErrorCode } from '../../http/errors.js';
import { randomHex, safeEqual, sha256 } from '../../random.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { type CurrencyContext, resolveCurrency } from '../catalogue/currency.js';
import type { Destination } from '../catalogue/tax.pricing.js';
import type { CartTotals } from '../pricing/totals.js';
import type { SettingsService } from '../settings/settings.service.js';
import { type AddRequest, assertInStock, assertStock, resolveAddition } from './cart.items.js';
import {
  type CartState,
  emptyState,
  lineKey,
  MAX_COUPONS,
  MAX_LINES,
  MAX_QUANTITY,
  mergeStates,
  sameState,
} from './cart.model.js';
import { covers, type PricingData, priceState } from './cart.pricing.js';
import type { CartRepository, CartRow, CartWrite } from './cart.repository.js';

const HOUR = 3600_000;
/** A customer session (and a guest's cart) lives this long after its last request. */
export const SESSION_IDLE_MS = 48 * HOUR;
/** A signed-in customer's cart lives this long after its last request. */
export const CUSTOMER_CART_IDLE_MS = 30 * 24 * HOUR;
/** Reads extend the expiry at most this often (a write every request would serialise reads). */
const TOUCH_EVERY_MS = HOUR;
const CLEANUP_EVERY_MS = HOUR;
const ATTEMPTS = 5;

const TOKEN = /^[0-9a-f]{64}$/;
const TOKEN_SECRET = 'cart_session_secret';

/** Who is asking, as far as the cart cares. */
export interface CartCaller {
  /** The raw customer-session cookie, if any. */
  token: string | null;
  /** The authenticated user: session cookie on GET, cookie plus nonce, or Basic. */
  userId: number | null;
  /**
   * The user this browser's sign-in cookie belongs to, even on a POST without nonce. Asked only to
   * decide whether a customer's cart may be shown to this browser; it never changes ownership.
   */
  browserUser: () => Promise<number | null>;
}

export interface CartSession {
  /** The raw cookie value to (re)send. */
  token: string;
  idHash: string;
  cartId: number;
  expiresAt: string;
}

const RETRY = Symbol('retry');
const TOKEN_TAKEN = Symbol('token taken');

/**
 * A change of the cart, computed from the locked state and the data read before the lock. It
 * answers RETRY when it needs something `data` lacks (a line added in parallel).
 */
type Op<R> = (state: CartState, data: PricingData) => { state: CartState; result: R } | typeof RETRY;

/** What an operation will need beyond what the stored cart refers to. */
interface Extra {
  products?: number[];
  coupons?: string[];
  /** Load tax rates and shipping zones even though the stored cart has no destination. */
  located?: boolean;
  /** The operation prices the whole cart (a coupon's minimum spend), so `data` must cover it. */
  full?: boolean;
}

/**
 * Customer-session cookie values: 16 random bytes and the first 16 bytes of their HMAC under a
 * server secret, as 64 hex digits. The MAC tells a value this store handed out (and may adopt
 * without having stored it) from one someone chose for a victim's browser (session fixation).
 */
export class CartTokens {
  constructor(private readonly secrets: AppSecrets) {}

  async mint(): Promise<string> {
    const nonce = randomHex(16);
    return nonce + (await this.mac(nonce));
  }

  async issuedHere(token: string): Promise<boolean> {
    return TOKEN.test(token) && safeEqual(token.slice(32), await this.mac(token.slice(0, 32)));
  }

  private async mac(nonce: string): Promise<string> {
    const key = await this.secrets.get(TOKEN_SECRET);
    return createHmac('sha256', key).update(nonce).digest('hex').slice(0, 32);
  }
}

function loadState(row: CartRow, now: Date): CartState {
  // An expired cart reads as empty; its row is reused (a customer keeps one cart row).
  if (row.expires_at <= iso(now)) return emptyState();
  return {
    items: JSON.parse(row.items) as CartState['items'],
    coupons: JSON.parse(row.coupons) as string[],
    destination: row.destination === null ? null : (JSON.parse(row.destination) as CartState['destination']),
    shipping_method: row.shipping_method,
  };
}

/** A coupon code as the cart stores it: trimmed, lower case, never empty. */
function couponCode(raw: string): string {
  const code = raw.trim().toLowerCase();
  if (code === '') throw new ApiError('coupon_code_required');
  return code;
}

/**
 * Carts and customer sessions. A browser's cookie names a session; a session points at a cart; a
 * customer has one cart that all their signed-in browsers share. Every change locks the cart row
 * and is computed from what is stored at that moment, so parallel requests lose nothing. See
 * docs/cart.md.
 */
export class CartService {
  /** Deletes idle sessions and carts, at most once an hour per process, in the background. */
  private readonly cleanup = new Occasionally(
    CLEANUP_EVERY_MS,
    (now) => this.repo.deleteExpired(iso(now)),
    (err) => this.log.warn({ err }, 'cart cleanup failed'),
  );

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: CartRepository,
    private readonly catalogue: CatalogueService,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    private readonly tokens: CartTokens,
  ) {}

  // ---- currency

  /**
   * The currency code to price in: the requested one (refused with `invalid_currency` unless
   * configured), else the remembered one if still configured, else the base currency.
   */
  async chooseCurrency(requested: string | undefined, remembered: string | undefined): Promise<string> {
    const settings = await this.settings.get();
    if (requested !== undefined) {
      const ctx = resolveCurrency(settings, requested);
      if (!ctx) throw new ApiError('invalid_currency', { data: { params: { currency: requested } } });
      return ctx.code;
    }
    return (resolveCurrency(settings, remembered ?? null) ?? resolveCurrency(settings, null)!).code;
  }

  // ---- sessions

  private write(state: CartState, ownerId: number | null, now: Date): CartWrite {
    const idle = ownerId === null ? SESSION_IDLE_MS : CUSTOMER_CART_IDLE_MS;
    return {
      items: JSON.stringify(state.items),
      coupons: JSON.stringify(state.coupons),
      destination: state.destination === null ? null : JSON.stringify(state.destination),
      shipping_method: state.shipping_method,
      expires_at: iso(new Date(now.getTime() + idle)),
    };
  }

  /**
   * The caller's session for a write: the live one its cookie names, else a new one. A cookie
   * value that a read handed out (and nothing stored) is adopted, so that parallel first writes
   * of one browser share one cart; any other value is replaced. Any storage failure is
   * `cart_error` (500).
   */
  async open(caller: CartCaller): Promise<CartSession> {
    return this.storageStep(async () => {
      const found = await this.findSession(caller);
      if (found) return found;
      if (caller.token !== null && (await this.tokens.issuedHere(caller.token))) {
        const adopted = await this.startSession(caller.userId, caller.token);
        if (adopted) return adopted;
        // Adopted in parallel by another request of this browser, or the value of an ended session.
        const raced = await this.findSession(caller);
        if (raced) return raced;
      }
      return (await this.startSession(caller.userId, await this.tokens.mint()))!;
    });
  }

  /**
   * What a read shows (GET /cart, checkout bootstrap): the caller's cart priced, and the cookie
   * value to send. An anonymous read never stores anything: a browser without a live session (a
   * crawler, a first visit) sees the empty cart and gets a cookie value that the first write will
   * adopt, so a crawler cannot grow the database. A signed-in caller is given a session on their
   * cart, as a write would.
   */
  async read(caller: CartCaller, currency: string | null): Promise<{ token: string; totals: CartTotals }> {
    const session =
      caller.userId === null
        ? await this.storageStep(() => this.findSession(caller))
        : await this.open(caller);
    if (session) return { token: session.token, totals: await this.view(session, currency) };
    const state = emptyState();
    const data = await this.loadData(state, null, currency);
    return { token: await this.tokens.mint(), totals: priceState(state, data).totals };
  }

  /** Runs a session step; any storage failure is `cart_error` (500). */
  private async storageStep<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (e) {
      if (e instanceof ApiError) throw e;
      this.log.error({ err: e }, 'cart session could not be initialised');
      throw new ApiError('cart_error');
    }
  }

  /** The live session the caller's cookie names, if it may see that cart (a guest cart merges on sign-in). */
  private async findSession(caller: CartCaller): Promise<CartSession | null> {
    if (caller.token === null || !TOKEN.test(caller.token)) return null;
    const now = this.clock.now();
    const idHash = sha256(caller.token);
    const session = await this.repo.findSession(idHash, iso(now));
    const cart = session ? await this.repo.findCart(session.cart_id) : undefined;
    if (!session || !cart) return null;
    const found = { token: caller.token, idHash, cartId: cart.id, expiresAt: session.expires_at };
    if (cart.user_id === null) {
      if (caller.userId === null) return found;
      await this.mergeGuestCart(caller.token, caller.userId);
      const merged = await this.repo.findSession(idHash, iso(now));
      return merged ? { ...found, cartId: merged.cart_id } : null;
    }
    // Someone else's cart (signed out, or another customer on this browser) is not shown.
    return cart.user_id === (caller.userId ?? (await caller.browserUser())) ? found : null;
  }

  /** Stores a session under `token` on a new guest cart or the customer's cart; null when the token is taken. */
  private async startSession(userId: number | null, token: string): Promise<CartSession | null> {
    const now = this.clock.now();
    const idHash = sha256(token);
    const nowIso = iso(now);
    const expiresAt = iso(new Date(now.getTime() + SESSION_IDLE_MS));
    const cartId = await withTransaction(this.database, async (tx) => {
      const id =
        userId === null
          ? await this.repo.insertCart(
              { ...this.write(emptyState(), null, now), user_id: null, now: nowIso },
              tx,
            )
          : (await this.repo.ensureCartOfUser(userId, this.write(emptyState(), userId, now), nowIso, tx)).id;
      // Taken: roll back, so that the guest cart made for it is not left behind.
      if (!(await this.repo.createSession(idHash, id, nowIso, expiresAt, tx))) throw TOKEN_TAKEN;
      return id;
    }).catch((e) => {
      if (e === TOKEN_TAKEN) return null;
      throw e;
    });
    if (cartId === null) return null;
    this.cleanup.maybe(now);
    return { token, idHash, cartId, expiresAt };
  }

  /**
   * Folds the guest cart of session `guestSessionId` (the raw cookie) into the customer's cart, in
   * one transaction: the customer's cart absorbs the lines and coupons, every session of the guest
   * cart then points at the customer's cart, and the guest cart is deleted. Without a customer
   * cart the guest cart simply becomes theirs. Running it twice (or in parallel) merges once.
   */
  async mergeGuestCart(guestSessionId: string, userId: number): Promise<void> {
    if (!TOKEN.test(guestSessionId)) return;
    const idHash = sha256(guestSessionId);
    const now = this.clock.now();
    await withTransaction(this.database, async (tx) => {
      await this.repo.lockCustomer(userId, tx);
      const session = await this.repo.findSession(idHash, iso(now), tx);
      if (!session) return;
      const guest = await this.repo.lockCart('id', session.cart_id, tx);
      if (!guest || guest.user_id !== null) return;
      const mine = await this.repo.lockCart('user_id', userId, tx);
      const guestState = loadState(guest, now);
      if (!mine) {
        await this.repo.saveCart(
          guest.id,
          { ...this.write(guestState, userId, now), user_id: userId, now: iso(now) },
          tx,
        );
        return;
      }
      const merged = mergeStates(loadState(mine, now), guestState);
      await this.repo.saveCart(mine.id, { ...this.write(merged, userId, now), now: iso(now) }, tx);
      await this.repo.moveSessions(guest.id, mine.id, tx);
      await this.repo.deleteCart(guest.id, tx);
    });
  }

  /**
   * For checkout after a successful order: a guest's cart is deleted with its sessions (the next
   * request starts afresh); a customer's cart is emptied and keeps only its destination.
   */
  async purge(session: CartSession): Promise<void> {
    const now = this.clock.now();
    await withTransaction(this.database, async (tx) => {
      const cart = await this.repo.lockCart('id', session.cartId, tx);
      if (!cart) return;
      if (cart.user_id === null) {
        await this.repo.deleteCart(cart.id, tx);
        return;
      }
      const kept = { ...emptyState(), destination: loadState(cart, now).destination };
      await this.repo.saveCart(cart.id, { ...this.write(kept, cart.user_id, now), now: iso(now) }, tx);
    });
  }

  // ---- pricing data

  private async loadData(
    state: CartState,
    ownerId: number | null,
    currency: string | null,
    extra: Extra = {},
  ): Promise<PricingData> {
    const settings = await this.settings.get();
    const ctx: CurrencyContext = resolveCurrency(settings, currency) ?? resolveCurrency(settings, null)!;
    const productIds = [...new Set([...state.items.map((l) => l.product_id), ...(extra.products ?? [])])];
    const codes = [...new Set([...state.coupons, ...(extra.coupons ?? [])])];
    const located = state.destination !== null || extra.located === true;
    const [products, coupons, taxRates, zones] = await Promise.all([
      Promise.all(productIds.map((id) => this.catalogue.getProduct(id))),
      Promise.all(codes.map((code) => this.catalogue.coupons.getByCode(code))),
      located ? this.catalogue.taxRates.list() : null,
      located ? this.catalogue.shipping.list() : null,
    ]);
    const couponIds = coupons.flatMap((c) => (c ? [c.id] : []));
    return {
      settings,
      currency: ctx,
      products: new Map(productIds.map((id, i) => [id, products[i] ?? null])),
      coupons: new Map(codes.map((code, i) => [code, coupons[i] ?? null])),
      customerUses: ownerId === null ? null : await this.repo.customerUses(couponIds, ownerId),
      taxRates,
      zones,
      now: this.clock.now(),
    };
  }

  // ---- the one write path

  /**
   * Applies `op` to the stored cart under its row lock, so parallel changes of one cart queue up
   * and each starts from the last one's result. Catalogue data is read before the lock (a locked
   * cart never waits on other queries); the stored state is cleaned (lines that can no longer be
   * bought, coupons that no longer apply) only when that data covers all of it. If the locked cart
   * needs data that was not read, the step starts again. A storage failure becomes `failCode`.
   */
  private async mutate<R>(
    session: CartSession,
    currency: string | null,
    failCode: ErrorCode,
    op: Op<R>,
    extra: Extra = {},
  ): Promise<{ totals: CartTotals; result: R }> {
    try {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const row = await this.repo.findCart(session.cartId);
        if (!row) {
          // Merged away by a sign-in in parallel: the session now points at the customer's cart.
          const moved = await this.repo.findSession(session.idHash, iso(this.clock.now()));
          if (!moved) throw new ApiError('cart_error');
          session.cartId = moved.cart_id;
          continue;
        }
        const data = await this.loadData(loadState(row, this.clock.now()), row.user_id, currency, extra);
        const outcome = await withTransaction(this.database, async (tx) => {
          const locked = await this.repo.lockCart('id', session.cartId, tx);
          if (!locked) return RETRY;
          const now = this.clock.now();
          const current = loadState(locked, now);
          if (extra.full && !covers(data, current)) return RETRY;
          const changed = op(current, data);
          if (changed === RETRY) return RETRY;
          const state = covers(data, changed.state) ? priceState(changed.state, data).cleaned : changed.state;
          const expiresAt = iso(new Date(now.getTime() + SESSION_IDLE_MS));
          await this.repo.saveCart(
            locked.id,
            { ...this.write(state, locked.user_id, now), now: iso(now) },
            tx,
          );
          await this.repo.touchSession(session.idHash, expiresAt, tx);
          session.expiresAt = expiresAt;
          return { state, result: changed.result, ownerId: locked.user_id };
        });
        if (outcome === RETRY) continue;
        // Priced after the commit, with fresh data when lines were added in parallel. The change
        // is stored by now, so a failure here is not `failCode` (which says nothing changed).
        const priced = covers(data, outcome.state)
          ? data
          : await this.loadData(outcome.state, outcome.ownerId, currency).catch((err) => {
              this.log.error({ err }, 'cart could not be priced');
              throw new ApiError('cart_error');
            });
        return { totals: priceState(outcome.state, priced).totals, result: outcome.result };
      }
      throw new Error('cart changed too often while being updated');
    } catch (e) {
      if (e instanceof ApiError) throw e;
      this.log.error({ err: e, code: failCode }, 'cart update failed');
      throw new ApiError(failCode);
    }
  }

  // ---- the routes' operations

  /** The priced cart. Stores only when something changed (a line or coupon dropped) or expiry is due. */
  async view(session: CartSession, currency: string | null): Promise<CartTotals> {
    const now = this.clock.now();
    const row = await this.repo.findCart(session.cartId);
    if (row) {
      const state = loadState(row, now);
      const data = await this.loadData(state, row.user_id, currency);
      const { totals, cleaned } = priceState(state, data);
      const due = Date.parse(session.expiresAt) - now.getTime() < SESSION_IDLE_MS - TOUCH_EVERY_MS;
      if (sameState(cleaned, state) && !due) return totals;
    }
    return (await this.mutate(session, currency, 'cart_error', (state) => ({ state, result: null }))).totals;
  }

  async add(session: CartSession, currency: string | null, req: AddRequest) {
    const product = await this.catalogue.getProduct(req.product_id);
    const variationById =
      req.variation_id > 0
        ? (product?.variations.find((v) => v.id === req.variation_id) ??
          (await this.catalogue.getVariation(req.variation_id)))
        : null;
    const { product: p, variation, attributes } = resolveAddition(product, variationById, req);
    assertInStock(p, variation);
    const key = lineKey(p.id, variation?.id ?? 0, attributes);
    const { totals } = await this.mutate(
      session,
      currency,
      'add_to_cart_failed',
      (state, data) => {
        const fresh = data.products.get(p.id) ?? p;
        const existing = state.items.find((l) => l.key === key);
        if (!existing && state.items.length >= MAX_LINES) {
          throw new ApiError('add_to_cart_failed', { data: { reason: 'cart_full', max_lines: MAX_LINES } });
        }
        const quantity = (existing?.quantity ?? 0) + req.quantity;
        if (quantity > MAX_QUANTITY) {
          throw new ApiError('add_to_cart_failed', { data: { reason: 'quantity_limit', max: MAX_QUANTITY } });
        }
        const freshVariation =
          variation && (fresh.variations.find((v) => v.id === variation.id) ?? variation);
        assertStock(state, fresh, freshVariation, key, quantity, 'add_to_cart_failed');
        const items = existing
          ? state.items.map((l) => (l.key === key ? { ...l, quantity } : l))
          : [
              ...state.items,
              { key, product_id: p.id, variation_id: variation?.id ?? 0, quantity, attributes },
            ];
        return { state: { ...state, items }, result: null };
      },
      { products: [p.id] },
    );
    return { key, totals };
  }

  /**
   * Sets a line's quantity (0 removes it) and, with `variationId`, moves it to another tier of its
   * product (docs/selling.md, 'Tiers'): into the line of that tier when the cart has one.
   */
  async update(
    session: CartSession,
    currency: string | null,
    key: string,
    quantity: number,
    variationId?: number,
  ) {
    const { totals } = await this.mutate(session, currency, 'update_failed', (state, data) => {
      const line = state.items.find((l) => l.key === key);
      if (!line) throw new ApiError('update_failed', { data: { reason: 'invalid_key' } });
      if (quantity === 0)
        return { state: { ...state, items: state.items.filter((l) => l !== line) }, result: null };
      const product = data.products.get(line.product_id);
      if (product === undefined) return RETRY;
      const variation = product?.variations.find((v) => v.id === line.variation_id) ?? null;
      if (product?.status !== 'publish' || (line.variation_id > 0 && !variation)) {
        throw new ApiError('update_failed', { data: { reason: 'not_purchasable' } });
      }
      if (variationId !== undefined && variationId !== line.variation_id) {
        const tier = product.variations.find((v) => v.id === variationId);
        if (!tier) throw new ApiError('invalid_variation', { status: 400 });
        const attributes = { ...tier.attributes };
        const newKey = lineKey(product.id, tier.id, attributes);
        const into = state.items.find((l) => l.key === newKey);
        const total = quantity + (into?.quantity ?? 0);
        if (total > MAX_QUANTITY) {
          throw new ApiError('update_failed', { data: { reason: 'quantity_limit', max: MAX_QUANTITY } });
        }
        assertStock(state, product, tier, newKey, total, 'update_failed');
        const moved = { ...line, key: newKey, variation_id: tier.id, attributes, quantity: total };
        const items = state.items.filter((l) => l !== into).map((l) => (l === line ? moved : l));
        return { state: { ...state, items }, result: null };
      }
      assertStock(state, product, variation, key, quantity, 'update_failed');
      const items = state.items.map((l) => (l === line ? { ...l, quantity } : l));
      return { state: { ...state, items }, result: null };
    });
    return totals;
  }

  async remove(session: CartSession, currency: string | null, key: string) {
    const { totals } = await this.mutate(session, currency, 'remove_failed', (state) => {
      if (!state.items.some((l) => l.key === key)) throw new ApiError('item_not_found');
      return { state: { ...state, items: state.items.filter((l) => l.key !== key) }, result: null };
    });
    return totals;
  }

  /** Removes lines, coupons and the shipping choice; the destination stays (it is the customer's). */
  async clear(session: CartSession, currency: string | null) {
    const { totals } = await this.mutate(session, currency, 'cart_error', (state) => ({
      state: { ...state, items: [], coupons: [], shipping_method: null },
      result: null,
    }));
    return totals;
  }

  /**
   * Where the cart ships and is taxed, and the chosen shipping rate id (`flat_rate:1`); no cart
   * route sets them: checkout does, from the customer's address.
   */
  async setDestination(
    session: CartSession,
    currency: string | null,
    destination: Destination | null,
    shippingMethod: string | null = null,
  ) {
    const { totals } = await this.mutate(
      session,
      currency,
      'cart_error',
      (state) => ({
        state: { ...state, destination, shipping_method: shippingMethod },
        result: null,
      }),
      { located: true },
    );
    return totals;
  }

  async applyCoupon(session: CartSession, currency: string | null, rawCode: string) {
    const code = couponCode(rawCode);
    if (!(await this.settings.get()).coupons_enabled) throw new ApiError('coupons_disabled');
    const { totals } = await this.mutate(
      session,
      currency,
      'cart_error',
      (state, data) => {
        const before = priceState(state, data);
        if (before.totals.lines.length === 0) throw new ApiError('empty_cart');
        const coupon = data.coupons.get(code);
        if (!coupon) throw new ApiError('coupon_failed', { data: { reason: 'not_found' } });
        if (coupon.currency !== null && coupon.currency !== data.currency.code) {
          throw new ApiError('coupon_currency_mismatch', { data: { currency: coupon.currency } });
        }
        if (state.coupons.includes(code))
          throw new ApiError('coupon_failed', { data: { reason: 'already_applied' } });
        if (state.coupons.length >= MAX_COUPONS) {
          throw new ApiError('coupon_failed', { data: { reason: 'too_many_coupons' } });
        }
        // An individual-use coupon replaces the others (only once it is known to apply).
        const next = { ...state, coupons: coupon.individual_use ? [code] : [...state.coupons, code] };
        const rejected = priceState(next, data).totals.rejected_coupons.find((r) => r.code === code);
        if (rejected?.reason === 'coupons_disabled') throw new ApiError('coupons_disabled');
        if (rejected) throw new ApiError('coupon_failed', { data: { reason: rejected.reason } });
        return { state: next, result: null };
      },
      { coupons: [code], full: true },
    );
    return totals;
  }

  async removeCoupon(session: CartSession, currency: string | null, rawCode: string) {
    const code = couponCode(rawCode);
    const { totals } = await this.mutate(session, currency, 'remove_coupon_failed', (state) => {
      if (!state.coupons.includes(code)) throw new ApiError('coupon_not_applied');
      return { state: { ...state, coupons: state.coupons.filter((c) => c !== code) }, result: null };
    });
    return totals;
  }
}
