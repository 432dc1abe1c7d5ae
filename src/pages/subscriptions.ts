import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { AccountsService } from '../modules/accounts/accounts.service.js';
import type { Actor } from '../modules/audit/audit.model.js';
import type { OrderRow } from '../modules/orders/orders.model.js';
import type { OrdersService } from '../modules/orders/orders.service.js';
import { brandName, type CardView, type StripeService } from '../modules/stripe/stripe.service.js';
import type { SubscriptionView } from '../modules/subscriptions/subscriptions.model.js';
import type { SubscriptionsService } from '../modules/subscriptions/subscriptions.service.js';
import { accountNav } from './account-nav.js';
import { formOf, formUser, messageOf, signInUrl, viewerOf } from './forms.js';
import { html } from './html.js';
import { seeOther, sendPage, type Viewer } from './layout.js';
import { subscriptionStatusLabel } from './status-labels.js';

export interface SubscriptionsPagesOptions {
  accounts: AccountsService;
  subscriptions: SubscriptionsService;
  orders: OrdersService;
  stripe: Pick<StripeService, 'cards' | 'removeCard' | 'chooseCard'>;
}

/** Statuses a customer may still cancel (SubscriptionsService.cancelByCustomer changes nothing for the others). */
const CANCELLABLE = new Set(['pending', 'active', 'on-hold']);
/** Renewal orders the pay page takes (on-hold waits for the store to confirm an offline payment). */
const PAYABLE = new Set(['pending', 'failed']);

/** Outcomes of a cancellation, shown after the redirect by a fixed code (no text ever comes from the URL). */
const NOTICES: Record<string, string> = {
  'card-chosen': 'The card for that subscription is saved: its next renewal is charged to it.',
  'card-removed':
    'The card is removed. Subscriptions that renewed on it use your other card, or a pay link by email.',
  'pending-cancel':
    'The subscription is cancelled. It will not renew; its licenses keep working until the paid period ends.',
  cancelled: 'The subscription is cancelled.',
};
/** A refused cancellation, in words; the code goes in `data-code`. */
const ERRORS: Record<string, string> = {
  not_found: 'That subscription was not found among yours.',
  subscription_not_found: 'That subscription was not found among yours.',
  card_not_found: 'That card was not found among yours. Reload the page and try again.',
  stripe_unavailable:
    'The card service could not be reached; nothing was changed. Please try again in a moment.',
  failed: 'The subscription could not be cancelled. Please try again.',
};

const SUB_ID = /^[1-9][0-9]{0,9}$/;
const PERIODS: Record<string, [string, string]> = {
  day: ['day', 'days'],
  week: ['week', 'weeks'],
  month: ['month', 'months'],
  year: ['year', 'years'],
};

/** "every month", "every 3 months": a billing schedule in words (also the upgrade page's). */
export function every(s: Pick<SubscriptionView, 'billing_period' | 'billing_interval'>): string {
  const words = s.billing_period ? PERIODS[s.billing_period] : undefined;
  if (!words) return '';
  const n = s.billing_interval ?? 1;
  return n === 1 ? `every ${words[0]}` : `every ${n} ${words[1]}`;
}

interface Row {
  sub: SubscriptionView;
  name: string;
  renewal: OrderRow | null;
}

/** "Visa ending in 4242", as the renewal email names a card. */
const cardName = (c: CardView) => `${brandName(c.brand)} ending in ${c.last4}`;
const CARD_ID = /^(pm|card)_[A-Za-z0-9]{1,250}$/;

/** The choice of kept card for one subscription's renewals. */
function cardChoice(sub: SubscriptionView, cards: CardView[], viewer: Viewer) {
  const field = `card-${sub.id}`;
  return html`<form method="post" action="/account/subscriptions/${sub.id}/card" class="actions card-choice">
    <input type="hidden" name="_nonce" value="${viewer.nonce}">
    <label for="${field}">Renews on</label>
    <select id="${field}" name="payment_method_id">${cards.map(
      (c) =>
        html`<option value="${c.id}"${c.subscriptions.includes(sub.id) ? ' selected' : ''}>${cardName(c)}</option>`,
    )}</select>
    <button type="submit" class="secondary">Save the card for subscription #${sub.id}</button>
  </form>`;
}

/** The kept cards, each with what it renews and its Remove button. */
function savedCards(cards: CardView[], unavailable: boolean, viewer: Viewer) {
  if (unavailable) {
    return html`<section class="card" aria-labelledby="cards-title"><h2 id="cards-title">Saved cards</h2>
  <p class="warning" data-code="stripe_unavailable">${ERRORS.stripe_unavailable}</p></section>`;
  }
  if (cards.length === 0) return '';
  return html`<section class="card saved-cards" aria-labelledby="cards-title"><h2 id="cards-title">Saved cards</h2>
  <p class="muted">Cards you chose to keep at checkout, stored by our payment provider: this store never sees their numbers.</p>
  <ul class="cards">${cards.map(
    (
      c,
    ) => html`<li data-card="${c.id}"><span><strong>${cardName(c)}</strong>, expires ${String(c.exp_month).padStart(2, '0')}/${c.exp_year}${
      c.subscriptions.length > 0
        ? html`<br><span class="muted">Renews ${c.subscriptions.map((id) => `#${id}`).join(', ')}</span>`
        : ''
    }</span>
    <form method="post" action="/account/cards/${c.id}/remove">
      <input type="hidden" name="_nonce" value="${viewer.nonce}">
      <button type="submit" class="danger secondary">Remove ${cardName(c)}</button>
    </form></li>`,
  )}</ul></section>`;
}

function subscriptionCard(r: Row, viewer: Viewer, cards: CardView[]) {
  const { sub } = r;
  const price =
    sub.recurring_total !== null && sub.currency
      ? `${sub.recurring_total} ${sub.currency} ${every(sub)}`.trim()
      : '';
  const ended = sub.status === 'cancelled' || sub.status === 'expired';
  return html`<section class="card subscription" data-subscription="${sub.id}">
  <div class="license-head"><h2>${r.name}</h2><span class="badge${ended ? ' off' : sub.status === 'on-hold' ? ' bad' : ''}" data-status="${sub.status}">${subscriptionStatusLabel(sub.status)}</span></div>
  <dl class="facts">
    <dt>Subscription</dt><dd>#${sub.id}</dd>
    ${price ? html`<dt>Price</dt><dd>${price}</dd>` : ''}
    <dt>${sub.status === 'pending-cancel' ? 'Paid until' : 'Next payment'}</dt><dd>${
      ended ? '—' : sub.next_payment_at ? `${sub.next_payment_at.slice(0, 10)} (UTC)` : 'Not scheduled'
    }</dd>
    <dt>Started</dt><dd>${sub.created_at.slice(0, 10)}</dd>
  </dl>
  ${
    r.renewal
      ? html`<p class="warning">The renewal order <a href="/account/orders/${r.renewal.id}">#${r.renewal.id}</a> is waiting for payment.
    <a class="pay" href="/checkout/pay/${r.renewal.id}?key=${r.renewal.order_key}">Pay renewal order #${r.renewal.id}</a></p>`
      : ''
  }
  ${cards.length > 0 && !ended ? cardChoice(sub, cards, viewer) : ''}
  ${
    CANCELLABLE.has(sub.status)
      ? html`<form method="post" action="/account/subscriptions/${sub.id}/cancel" class="actions">
    <input type="hidden" name="_nonce" value="${viewer.nonce}">
    <p class="muted">Cancelling stops the renewals. ${
      sub.status === 'active' && sub.next_payment_at
        ? 'Your licenses keep working until the paid period ends.'
        : 'The subscription ends now.'
    }</p>
    <button type="submit" class="danger secondary">Cancel subscription #${sub.id}</button>
  </form>`
      : ''
  }
</section>`;
}

/**
 * Subscriptions (/account/subscriptions, docs/storefront.md 'Subscriptions'): the customer's
 * subscriptions, the unpaid renewal order of each with its pay link, and Cancel, which is the
 * API's customer cancellation (POST /v1/account/subscriptions/{id}/cancel,
 * SubscriptionsService.cancelByCustomer).
 */
export async function subscriptionsPages(app: FastifyInstance, opts: SubscriptionsPagesOptions) {
  const { accounts, subscriptions, orders, stripe } = opts;

  async function render(
    reply: FastifyReply,
    viewer: Viewer & { user: { id: number } },
    status: number,
    notice: string | undefined,
    error: { code: string; text: string } | undefined,
  ) {
    const list = await subscriptions.listForUser(viewer.user.id);
    const products = await orders.productsOf(list);
    // The renewal order of each due payment (createRenewalOrder's `subscription id:due date`), in one query.
    const dueKey = (sub: (typeof list)[number]) =>
      sub.next_payment_at && !['cancelled', 'expired'].includes(sub.status)
        ? `${sub.id}:${sub.next_payment_at}`
        : null;
    const renewals = await orders.findRenewals(list.map(dueKey).filter((k): k is string => k !== null));
    const rows: Row[] = list.map((sub) => {
      const product = products.get(sub.product_id);
      const variation = product?.variations.find((v) => v.id === sub.variation_id);
      const name = product
        ? variation
          ? `${product.name} — ${variation.name}`
          : product.name
        : `Product ${sub.product_id}`;
      const key = dueKey(sub);
      const order = key ? renewals.get(key) : undefined;
      const renewal =
        order && order.customer_id === viewer.user.id && PAYABLE.has(order.status) ? order : null;
      return { sub, name, renewal };
    });
    // The page stays useful when the card service is out of reach: only the cards are missing.
    let cards: CardView[] = [];
    let cardsUnavailable = false;
    try {
      cards = await stripe.cards(viewer.user.id);
    } catch (e) {
      if (!(e instanceof ApiError) || e.code !== 'stripe_unavailable') throw e;
      cardsUnavailable = true;
    }
    return sendPage(
      reply,
      status,
      'Subscriptions',
      html`${accountNav('subscriptions')}
<h1>Subscriptions</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${error ? html`<p class="error" role="alert" data-code="${error.code}">${error.text}</p>` : ''}
${
  rows.length === 0
    ? html`<section class="card"><p>You have no subscriptions. <a href="/">See the products</a></p></section>`
    : rows.map((r) => subscriptionCard(r, viewer, cards))
}
${savedCards(cards, cardsUnavailable, viewer)}`,
      viewer,
    );
  }

  app.get('/account/subscriptions', async (request, reply) => {
    const viewer = viewerOf(request);
    if (!viewer) return seeOther(reply, signInUrl('/account/subscriptions'));
    const notice = messageOf(request, 'notice', NOTICES);
    return render(reply, viewer, 200, notice, undefined);
  });

  app.post('/account/subscriptions/:id/cancel', async (request, reply) => {
    const user = await formUser(request, accounts);
    if (!user) return seeOther(reply, signInUrl('/account/subscriptions'));
    const viewer = { user, email: user.email, nonce: request.sessionNonce! };
    const raw = (request.params as { id: string }).id;
    const refuse = (status: number, code: string) =>
      render(reply, viewer, status, undefined, { code, text: ERRORS[code] ?? ERRORS.failed! });
    if (!SUB_ID.test(raw) || Number(raw) > 2147483647) return refuse(404, 'not_found');
    let status: string;
    try {
      status = (await subscriptions.cancelByCustomer(Number(raw), user.id)).status;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.status >= 500) request.log.error({ err: e, code: e.code }, 'customer cancellation failed');
      // Someone else's subscription and an unknown one are the same 404 `not_found` (the API's rule).
      return e.code === 'not_found' ? refuse(404, 'not_found') : refuse(e.status, e.code);
    }
    return seeOther(
      reply,
      `/account/subscriptions?notice=${status === 'pending-cancel' ? 'pending-cancel' : 'cancelled'}`,
    );
  });

  /** A card form's signed-in buyer, or the sign-in redirect; its refusals re-render the page. */
  async function cardForm(
    request: FastifyRequest,
    reply: FastifyReply,
    act: (userId: number, actor: Actor) => Promise<void>,
    notice: string,
  ) {
    const user = await formUser(request, accounts);
    if (!user) return seeOther(reply, signInUrl('/account/subscriptions'));
    const viewer = { user, email: user.email, nonce: request.sessionNonce! };
    try {
      await act(user.id, { user_id: user.id, email: user.email });
    } catch (e) {
      // The card service out of reach is said on the page, as the API says it (502); nothing changed.
      if (!(e instanceof ApiError) || (e.status >= 500 && e.code !== 'stripe_unavailable')) throw e;
      return render(reply, viewer, e.status, undefined, {
        code: e.code,
        text: ERRORS[e.code] ?? ERRORS.failed!,
      });
    }
    return seeOther(reply, `/account/subscriptions?notice=${notice}`);
  }

  app.post('/account/subscriptions/:id/card', async (request, reply) => {
    const raw = (request.params as { id: string }).id;
    const card = formOf(request).payment_method_id;
    return cardForm(
      request,
      reply,
      async (userId, actor) => {
        if (!SUB_ID.test(raw) || Number(raw) > 2147483647) throw new ApiError('subscription_not_found');
        if (typeof card !== 'string' || !CARD_ID.test(card)) throw new ApiError('card_not_found');
        await stripe.chooseCard(userId, Number(raw), card, actor);
      },
      'card-chosen',
    );
  });

  app.post('/account/cards/:id/remove', async (request, reply) => {
    const card = (request.params as { id: string }).id;
    return cardForm(
      request,
      reply,
      async (userId, actor) => {
        if (!CARD_ID.test(card)) throw new ApiError('card_not_found');
        await stripe.removeCard(userId, card, actor);
      },
      'card-removed',
    );
  });
}
