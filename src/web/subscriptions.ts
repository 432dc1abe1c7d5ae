import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { AccountsService } from '../modules/accounts/accounts.service.js';
import type { OrderRow } from '../modules/orders/orders.model.js';
import type { OrdersService } from '../modules/orders/orders.service.js';
import type { SubscriptionView } from '../modules/subscriptions/subscriptions.model.js';
import type { SubscriptionsService } from '../modules/subscriptions/subscriptions.service.js';
import { accountNav } from './account-nav.js';
import { formUser, signInUrl, viewerOf } from './forms.js';
import { html } from './html.js';
import { seeOther, sendPage, type Viewer } from './layout.js';
import { subscriptionStatusLabel } from './status-labels.js';

export interface SubscriptionsPagesOptions {
  accounts: AccountsService;
  subscriptions: SubscriptionsService;
  orders: OrdersService;
}

/** Statuses a customer may still cancel (SubscriptionsService.cancelByCustomer changes nothing for the others). */
const CANCELLABLE = new Set(['pending', 'active', 'on-hold']);
/** Renewal orders the pay page takes (on-hold waits for the store to confirm an offline payment). */
const PAYABLE = new Set(['pending', 'failed']);

/** Outcomes of a cancellation, shown after the redirect by a fixed code (no text ever comes from the URL). */
const NOTICES: Record<string, string> = {
  'pending-cancel':
    'The subscription is cancelled. It will not renew; its licenses keep working until the paid period ends.',
  cancelled: 'The subscription is cancelled.',
};
/** A refused cancellation, in words; the code goes in `data-code`. */
const ERRORS: Record<string, string> = {
  not_found: 'That subscription was not found among yours.',
  failed: 'The subscription could not be cancelled. Please try again.',
};

const SUB_ID = /^[1-9][0-9]{0,9}$/;
const PERIODS: Record<string, [string, string]> = {
  day: ['day', 'days'],
  week: ['week', 'weeks'],
  month: ['month', 'months'],
  year: ['year', 'years'],
};

function every(s: SubscriptionView): string {
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

function subscriptionCard(r: Row, viewer: Viewer) {
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
  const { accounts, subscriptions, orders } = opts;

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
    : rows.map((r) => subscriptionCard(r, viewer))
}`,
      viewer,
    );
  }

  app.get('/account/subscriptions', async (request, reply) => {
    const viewer = viewerOf(request);
    if (!viewer) return seeOther(reply, signInUrl('/account/subscriptions'));
    const query = request.query as Record<string, unknown>;
    const notice = typeof query.notice === 'string' ? NOTICES[query.notice] : undefined;
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
}
