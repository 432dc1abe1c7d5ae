import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rfc3339 } from '../clock.js';
import { ApiError } from '../http/errors.js';
import type { AccountsService } from '../modules/accounts/accounts.service.js';
import type { ActivationService } from '../modules/licensing/activation.service.js';
import type { CustomerLicenseView, LicenseService } from '../modules/licensing/license.service.js';
import type { TransferService, TransferView } from '../modules/licensing/transfer.service.js';
import { money, type UpgradeService } from '../modules/orders/license-upgrades.service.js';
import type { SettingsService } from '../modules/settings/settings.service.js';
import { accountNav } from './account-nav.js';
import { formOf, formUser, messageOf, signInUrl, viewerOf } from './forms.js';
import { html } from './html.js';
import { seeOther, sendPage, type Viewer } from './layout.js';
import { every } from './subscriptions.js';

export interface LicensesPageOptions {
  accounts: AccountsService;
  licenses: LicenseService;
  transfers: TransferService;
  activations: ActivationService;
  settings: SettingsService;
  upgrades: UpgradeService;
}

/** Outcomes of a deactivation, shown after the redirect by a fixed code (no text ever comes from the URL). */
const NOTICES: Record<string, string> = {
  deactivated: 'The site was deactivated and its activation slot is free again.',
  transfer_sent:
    'The transfer was sent. The license stays yours until the receiver accepts it by the link we emailed them, within 7 days.',
  transfer_cancelled: 'The transfer was cancelled: its link no longer works.',
  transfer_accepted: 'The license was transferred to this account.',
  moved:
    'The site was deactivated and its slot is free for your new site: on the new site, open the plugin’s license settings, enter the license key shown below and activate.',
  upgraded: 'Your license is on its new tier. Its key is the same: nothing changes on your sites.',
};
const ERRORS: Record<string, string> = {
  deactivation_disabled:
    'The store has turned off deactivation from this page. Please contact the store to move a license.',
  not_found: 'That activation was not found on your licenses.',
  failed: 'The site could not be deactivated. Please try again.',
  invalid_email: 'Enter the email address of the person to transfer the license to.',
  transfer_to_self: 'That is the email address of this account: enter the receiver’s address.',
  license_not_transferable: 'This license cannot be transferred: it is revoked or suspended.',
  too_many_transfers: 'Too many transfers were sent. Please wait an hour and try again.',
  transfer_not_found: 'That transfer is no longer pending.',
  transfer_already_accepted: 'That transfer was already accepted.',
  transfer_failed: 'The transfer could not be sent. Please try again.',
  upgrade_failed: 'The tier of this license cannot be changed now. Please try again, or contact the store.',
  coupon_failed: 'That coupon does not apply to this change of tier: nothing was ordered.',
};

/** The codes of a transfer's refusal that the page says in words; any other is `transfer_failed`. */
const TRANSFER_ERRORS = new Set([
  'transfer_to_self',
  'license_not_transferable',
  'too_many_transfers',
  'transfer_not_found',
  'transfer_already_accepted',
]);

const isId = (n: number) => Number.isInteger(n) && n >= 1 && n <= 2147483647;

function statusBadge(l: CustomerLicenseView) {
  if (l.status === 'revoked') return html`<span class="badge bad">Revoked</span>`;
  if (l.status === 'suspended') return html`<span class="badge bad">Suspended</span>`;
  if (l.is_expired) return html`<span class="badge bad">Expired</span>`;
  if (l.entitlements.subscription_linked && !l.entitlements.subscription_active) {
    return html`<span class="badge bad">Subscription inactive</span>`;
  }
  if (!l.entitlements.license_active) return html`<span class="badge off">Inactive</span>`;
  return html`<span class="badge">Active</span>`;
}

/**
 * An activation's status: a stale one says its slot was freed because the site went unseen
 * (docs/licensing.md, 'Last seen and stale activations').
 */
function activationBadge(a: CustomerLicenseView['activations'][number]) {
  if (a.status === 'active') return html`<span class="badge">Active</span>`;
  if (a.deactivation_reason === 'reinstalled')
    return html`<span class="badge off">Replaced by a reinstall</span>`;
  if (a.deactivation_reason === 'stale') {
    return html`<span class="badge off" title="The site was not heard from for a long time, so its activation slot was freed. Activating the site again takes a slot.">Released: not seen</span>`;
  }
  return html`<span class="badge off">Deactivated</span>`;
}

/** A license that may change tier: the rules of LicenseService.upgradable, as the list shows them. */
const mayChangeTier = (l: CustomerLicenseView) =>
  l.status === 'active' &&
  !l.is_expired &&
  !l.trial &&
  (l.subscription_id === null || l.entitlements.subscription_status === 'active');

/**
 * Transfer to another customer (docs/selling.md, 'Transfers'): the pending offer with Cancel, or a
 * form (in a disclosure, so the card stays short) that offers the license to an email.
 */
function transferSection(l: CustomerLicenseView, viewer: Viewer, pending: TransferView | undefined) {
  if (pending) {
    return html`<div class="transfer">
  <p class="notice" role="status">Transfer to <strong>${pending.to_email}</strong> pending until ${pending.expires_at.slice(0, 10)}${pending.keep_activations ? '' : ' (its sites will be deactivated)'}.</p>
  <form method="post" action="/account/transfers/${pending.id}/cancel">
    <input type="hidden" name="_nonce" value="${viewer.nonce}">
    <button type="submit" class="secondary small" aria-label="Cancel transfer of ${l.product_name} to ${pending.to_email}">Cancel transfer</button>
  </form>
</div>`;
  }
  if (l.status !== 'active') return '';
  const field = `transfer-email-${l.id}`;
  return html`<details class="transfer">
  <summary>Transfer to another person</summary>
  <form method="post" action="/account/licenses/${l.id}/transfer">
    <input type="hidden" name="_nonce" value="${viewer.nonce}">
    <label for="${field}">Their email address</label>
    <input id="${field}" name="email" type="email" autocomplete="off" required maxlength="254">
    <label class="check"><input type="checkbox" name="keep_activations" value="1" checked> Keep its sites activated</label>
    <p class="muted">We email them a link to accept, valid 7 days. The license stays yours until they accept.</p>
    <button type="submit" class="primary small">Send transfer</button>
  </form>
</details>`;
}

function licenseCard(
  l: CustomerLicenseView,
  viewer: Viewer,
  canDeactivate: boolean,
  pending: TransferView | undefined,
) {
  const name = l.variation_name ? `${l.product_name} — ${l.variation_name}` : l.product_name;
  const seats =
    l.activation_limit === 0
      ? `${l.activation_count} in use (unlimited)`
      : `${l.activation_count} of ${l.activation_limit} in use`;
  const rows = l.activations.map(
    (a) => html`<tr>
        <td class="site" data-label="Site"><div>${a.domain_normalized}${a.environment === 'staging' ? html` <span class="badge off" title="A staging site: it takes no activation slot">Staging</span>` : ''}${a.last_seen_at ? html`<br><span class="muted last-seen">Last seen ${a.last_seen_at} UTC</span>` : ''}</div></td>
        <td data-label="Installation"><code>${a.installation_id.slice(0, 8)}…</code></td>
        <td class="when" data-label="Activated (UTC)">${a.activated_at}</td>
        <td data-label="Status"><div>${activationBadge(a)}</div></td>
        <td>${
          a.status === 'active' && canDeactivate
            ? html`<div><form method="post" action="/account/licenses/${l.id}/deactivate">
            <input type="hidden" name="_nonce" value="${viewer.nonce}">
            <input type="hidden" name="activation_id" value="${a.id}">
            <button type="submit" class="danger secondary small" aria-label="Deactivate ${a.domain_normalized}">Deactivate</button>
          </form>
          <form method="post" action="/account/licenses/${l.id}/move">
            <input type="hidden" name="_nonce" value="${viewer.nonce}">
            <input type="hidden" name="activation_id" value="${a.id}">
            <button type="submit" class="secondary small" aria-label="Move to another site: ${a.domain_normalized}">Move to another site</button>
          </form></div>`
            : ''
        }</td>
      </tr>`,
  );
  return html`<section class="card license">
  <div class="license-head"><h2>${name}</h2>${statusBadge(l)}</div>
  <dl class="facts">
    <dt>License key</dt><dd class="key">${l.license_key}</dd>
    <dt>Activations</dt><dd>${seats}</dd>
    <dt>Expires</dt><dd>${l.expires_at ? `${l.expires_at} UTC` : 'Never'}</dd>
  </dl>
  ${mayChangeTier(l) ? html`<p><a href="/account/licenses/${l.id}/upgrade" aria-label="Upgrade or downgrade ${name}">Upgrade or downgrade</a></p>` : ''}
  ${
    l.activations.length === 0
      ? html`<p class="muted">Not activated on any site yet.</p>`
      : html`<div class="table-wrap"><table class="stack">
    <thead><tr><th>Site</th><th>Installation</th><th>Activated (UTC)</th><th>Status</th><th></th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`
  }
  ${transferSection(l, viewer, pending)}
</section>`;
}

/** "My licenses": every license of the customer with its activations, and Deactivate per active site. */
export async function licensesPages(app: FastifyInstance, opts: LicensesPageOptions) {
  const { accounts, licenses, transfers, activations, settings, upgrades } = opts;

  app.get('/account', async (_request, reply) => seeOther(reply, '/account/licenses'));

  app.get('/account/licenses', async (request, reply) => {
    const viewer = viewerOf(request);
    if (!viewer) return seeOther(reply, signInUrl('/account/licenses'));
    const notice = messageOf(request, 'notice', NOTICES);
    const error = messageOf(request, 'error', ERRORS);
    const list = await licenses.listForCustomer(viewer.user.id);
    const pending = new Map((await transfers.pendingOfOwner(viewer.user.id)).map((p) => [p.license_id, p]));
    const canDeactivate = (await settings.get()).customer_deactivation_enabled;
    return sendPage(
      reply,
      200,
      'My licenses',
      html`${accountNav('licenses')}
<h1>My licenses</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
${canDeactivate ? '' : html`<p class="muted">Deactivating sites from this page is turned off by the store.</p>`}
${
  list.length === 0
    ? html`<section class="card"><p>You have no licenses yet.</p></section>`
    : list.map((l) => licenseCard(l, viewer, canDeactivate, pending.get(l.id)))
}`,
      viewer,
    );
  });

  /**
   * Upgrade or downgrade (docs/selling.md, 'Upgrades and downgrades'): the tiers the license may
   * move to, each with what the move costs now; choosing one creates its order and goes on to the
   * store's pay page (or, when it costs nothing, applies it at once).
   */
  app.get('/account/licenses/:id/upgrade', async (request, reply) => {
    const viewer = viewerOf(request);
    const licenseId = Number((request.params as { id: string }).id);
    if (!viewer) return seeOther(reply, signInUrl(`/account/licenses/${isId(licenseId) ? licenseId : ''}`));
    if (!isId(licenseId)) return seeOther(reply, '/account/licenses?error=upgrade_failed');
    let quote: Awaited<ReturnType<UpgradeService['quote']>>;
    try {
      quote = await upgrades.quote(licenseId, viewer.user.id);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return seeOther(reply, '/account/licenses?error=upgrade_failed');
    }
    const m = (minor: number) => `${money(minor, quote.currency)} ${quote.currency.code}`;
    const l = quote.license;
    const current = l.variation_name ? `${l.product_name} — ${l.variation_name}` : (l.product_name ?? '');
    const options = quote.targets.map((t, i) => {
      const id = `tier-${i}`;
      const name = t.variation ? `${t.product.name} — ${t.variation.name}` : t.product.name;
      const policy = t.variation?.entitlement_policy ?? t.product.entitlement_policy;
      // A subscription's license keeps its renewal dates; the new tier's price is what they charge.
      const term = quote.billing
        ? `renews at ${m(t.full)} ${every({ billing_period: quote.billing.period, billing_interval: quote.billing.interval })}`
        : policy?.usage.mode === 'days' && policy.usage.days !== undefined
          ? `${policy.usage.days} days from payment`
          : 'No expiry';
      const sites =
        t.activation_limit === 0
          ? 'Unlimited sites'
          : `${t.activation_limit} site${t.activation_limit === 1 ? '' : 's'}`;
      return html`<div class="tier-option">
      <input type="radio" name="target" id="${id}" value="${t.product.id}:${t.variation?.id ?? 0}" required${i === 0 ? ' checked' : ''}>
      <label for="${id}"><span class="tier-name">${name}</span>
        <span class="tier-facts">${sites} · ${term} · ${t.full > quote.current_price ? 'Upgrade' : 'Downgrade'}</span>
        <span class="tier-price">You pay <strong>${m(t.price)}</strong> <span class="muted">(price ${m(t.full)} less ${m(Math.min(quote.credit, t.full))} credit)</span></span></label>
    </div>`;
    });
    return sendPage(
      reply,
      200,
      'Upgrade or downgrade',
      html`${accountNav('licenses')}
<h1>Upgrade or downgrade</h1>
<section class="card">
  <h2>${current}</h2>
  ${
    quote.billing
      ? html`<p>Your license key stays the same. The new tier's sites start when you pay; your subscription then renews at the new tier's price on the same dates.</p>`
      : html`<p>Your license key stays the same. The new tier's sites and periods start when you pay.</p>`
  }
  <dl class="facts">
    <dt>Paid for this tier</dt><dd>${m(quote.paid)}</dd>
    <dt>Days left</dt><dd>${quote.days_left === null ? 'No expiry' : `${quote.days_left} of ${quote.period_days}`}</dd>
    ${quote.billing?.next_payment_at ? html`<dt>Next payment</dt><dd>${rfc3339(quote.billing.next_payment_at).slice(0, 10)}</dd>` : ''}
    <dt>Credit</dt><dd>${m(quote.credit)}</dd>
  </dl>
  ${
    quote.targets.length === 0
      ? html`<p>This license has no other tier to move to.</p>`
      : html`<form method="post" action="/account/licenses/${l.id}/upgrade">
    <input type="hidden" name="_nonce" value="${viewer.nonce}">
    <fieldset class="tiers"><legend>Choose the new tier</legend>${options}</fieldset>
    <label for="upgrade-coupon">Coupon code (optional)</label>
    <input id="upgrade-coupon" name="coupon_code" type="text" autocomplete="off" maxlength="100">
    <div class="actions"><button type="submit" class="primary">Continue</button>
      <a href="/account/licenses">Back to My licenses</a></div>
  </form>`
  }
</section>`,
      viewer,
    );
  });

  app.post('/account/licenses/:id/upgrade', async (request, reply) => {
    const user = await formUser(request, accounts);
    if (!user) return seeOther(reply, signInUrl('/account/licenses'));
    const licenseId = Number((request.params as { id: string }).id);
    const [productId, variationId] = String(formOf(request).target ?? '')
      .split(':')
      .map(Number);
    if (!isId(licenseId) || !isId(productId ?? 0) || !Number.isInteger(variationId) || variationId! < 0) {
      return seeOther(reply, '/account/licenses?error=upgrade_failed');
    }
    try {
      const coupon = String(formOf(request).coupon_code ?? '')
        .trim()
        .slice(0, 100);
      const target = {
        product_id: productId,
        ...(variationId ? { variation_id: variationId } : {}),
        ...(coupon ? { coupon_code: coupon } : {}),
      };
      const { order } = await upgrades.createOrder(licenseId, user.id, target);
      if (order.status !== 'pending') return seeOther(reply, '/account/licenses?notice=upgraded');
      return seeOther(reply, `/checkout/pay/${order.id}?key=${encodeURIComponent(order.order_key)}`);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return seeOther(
        reply,
        `/account/licenses?error=${e.code === 'coupon_failed' ? 'coupon_failed' : 'upgrade_failed'}`,
      );
    }
  });

  /**
   * Deactivate, and "Move to another site" (docs/licensing.md, '4. Deactivate'): the same
   * deactivation in one step, which frees the slot at once; the move's notice says how to
   * activate the new site with the license key.
   */
  for (const [action, notice] of [
    ['deactivate', 'deactivated'],
    ['move', 'moved'],
  ] as const) {
    app.post(`/account/licenses/:id/${action}`, async (request, reply) => {
      const user = await formUser(request, accounts);
      if (!user) return seeOther(reply, signInUrl('/account/licenses'));
      const licenseId = Number((request.params as { id: string }).id);
      const activationId = Number(formOf(request).activation_id);
      if (!isId(licenseId) || !isId(activationId)) {
        return seeOther(reply, '/account/licenses?error=not_found');
      }
      try {
        await activations.customerDeactivate(user.id, licenseId, { activation_id: activationId });
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        if (e.status >= 500) request.log.error({ err: e, code: e.code }, 'customer deactivation failed');
        const code =
          e.code === 'deactivation_disabled'
            ? 'deactivation_disabled'
            : e.code === 'not_found' || e.code === 'no_activation'
              ? 'not_found'
              : 'failed';
        return seeOther(reply, `/account/licenses?error=${code}`);
      }
      return seeOther(reply, `/account/licenses?notice=${notice}`);
    });
  }

  /** Sends a transfer (docs/selling.md, 'Transfers'); the outcome is shown after the redirect by a fixed code. */
  app.post('/account/licenses/:id/transfer', async (request, reply) => {
    const user = await formUser(request, accounts);
    if (!user) return seeOther(reply, signInUrl('/account/licenses'));
    const licenseId = Number((request.params as { id: string }).id);
    const form = formOf(request);
    const email = (form.email ?? '').trim();
    if (!isId(licenseId)) return seeOther(reply, '/account/licenses?error=transfer_failed');
    if (!EMAIL.test(email) || /\p{Cc}/u.test(email) || email.length > 254)
      return seeOther(reply, '/account/licenses?error=invalid_email');
    const sender = { user_id: user.id, email: user.email, administrator: false };
    return outcome(request, reply, 'transfer_sent', () =>
      transfers.offer(licenseId, { email, keep_activations: form.keep_activations === '1' }, sender),
    );
  });

  app.post('/account/transfers/:id/cancel', async (request, reply) => {
    const user = await formUser(request, accounts);
    if (!user) return seeOther(reply, signInUrl('/account/licenses'));
    const transferId = Number((request.params as { id: string }).id);
    if (!isId(transferId)) return seeOther(reply, '/account/licenses?error=transfer_not_found');
    const sender = { user_id: user.id, email: user.email, administrator: false };
    return outcome(request, reply, 'transfer_cancelled', () => transfers.cancel(transferId, sender));
  });
}

/** A plain address, something@host.tld (the API checks its email format the same way). */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

async function outcome(
  request: FastifyRequest,
  reply: FastifyReply,
  notice: string,
  change: () => Promise<unknown>,
) {
  try {
    await change();
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.status >= 500) request.log.error({ err: e, code: e.code }, 'license transfer failed');
    const code = TRANSFER_ERRORS.has(e.code) ? e.code : 'transfer_failed';
    return seeOther(reply, `/account/licenses?error=${code}`);
  }
  return seeOther(reply, `/account/licenses?notice=${notice}`);
}
