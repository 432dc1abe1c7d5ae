import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountsService } from '../../modules/accounts/accounts.service.js';
import type { CatalogueService } from '../../modules/catalogue/catalogue.service.js';
import { availableCurrencies } from '../../modules/catalogue/currency.js';
import type { PaymentService } from '../../modules/checkout/payment.service.js';
import type { LicenseService } from '../../modules/licensing/license.service.js';
import type { Settings } from '../../modules/settings/settings.schemas.js';
import type { SettingsService } from '../../modules/settings/settings.service.js';
import { type Html, html } from '../html.js';
import { compressedAsset, REVALIDATE, sendAsset } from '../static.js';
import { orderStatusLabel } from '../status-labels.js';
import { STORE_SCRIPT } from './client/store.generated.js';
import { identityOf, STORE_SCRIPT_PATH, type StoreIdentity, sendStorePage } from './layout.js';

export interface CheckoutPagesOptions {
  accounts: AccountsService;
  catalogue: CatalogueService;
  payments: PaymentService;
  licenses: LicenseService;
  settings: SettingsService;
}

/** An order id in a path: digits only, within the database's integer range. */
const ORDER_ID = /^[1-9][0-9]{0,9}$/;
/** An order key as checkout makes them (`order_…`); anything else finds no order. */
const ORDER_KEY = /^[A-Za-z0-9_-]{1,200}$/;

/** Where a page's script reports refusals: read by screen readers, the code in `data-code`. */
const alertRegion = html`<div id="store-alert" class="store-alert" role="alert" tabindex="-1" hidden></div>`;
const needsScript = (what: string) =>
  html`<noscript><p class="notice">${what} needs JavaScript. Switch it on for this site, or buy through the API (see the store's documentation).</p></noscript>`;

/** Each CAPTCHA provider's widget script, and the origins its widget runs from (CSP). */
const CAPTCHA = {
  turnstile: {
    script: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
    widget: 'cf-turnstile',
    origins: ['https://challenges.cloudflare.com'],
  },
  recaptcha: {
    script: 'https://www.google.com/recaptcha/api.js',
    widget: 'g-recaptcha',
    origins: ['https://www.google.com', 'https://www.gstatic.com'],
  },
} as const;

/**
 * Stripe.js, which the checkout and pay pages load only while the Stripe gateway is on
 * (docs/payments.md, 'Stripe'), and the origins Stripe's own CSP guidance names for the Payment
 * Element: its script, its frames (3-D Secure included) and its API.
 */
const STRIPE_JS = {
  script: 'https://js.stripe.com/v3/',
  scripts: ['https://js.stripe.com'],
  frames: ['https://js.stripe.com', 'https://hooks.stripe.com'],
  connect: ['https://api.stripe.com'],
} as const;

/**
 * The pages' policy (src/pages/layout.ts) plus, on checkout with a CAPTCHA provider, that
 * provider's script and frames, and with Stripe on, Stripe.js: nothing else from another origin
 * ever runs.
 */
function storeCsp(captcha: (typeof CAPTCHA)[keyof typeof CAPTCHA] | null, stripe = false): string {
  const captchaOrigins = captcha ? captcha.origins : [];
  const list = (...origins: readonly string[]) => (origins.length ? ` ${origins.join(' ')}` : '');
  return [
    "default-src 'self'",
    `script-src 'self'${list(...captchaOrigins, ...(stripe ? STRIPE_JS.scripts : []))}`,
    `frame-src 'self'${list(...captchaOrigins, ...(stripe ? STRIPE_JS.frames : []))}`,
    `connect-src 'self'${list(...captchaOrigins, ...(stripe ? STRIPE_JS.connect : []))}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    "form-action 'self'",
  ].join('; ');
}

/**
 * The Payment Element's place in the payment fieldset, hidden until Stripe is the chosen method,
 * and Stripe.js itself. `saveCard` offers to keep the card for a subscription's renewals (the
 * checkout's script shows it when the cart holds a subscription).
 */
function stripeField(publishableKey: string, saveCard: boolean): Html {
  return html`<div class="field" id="stripe-field" data-publishable-key="${publishableKey}" hidden>
        <div id="payment-element"></div>
        <div class="check" id="stripe-save"${saveCard ? '' : html` hidden`}><input type="checkbox" id="stripe_save_card" name="stripe_save_card">
          <label for="stripe_save_card">Keep this card to pay my subscription's renewals</label></div>
      </div>
      <script src="${STRIPE_JS.script}" id="stripe-js" async></script>`;
}

function currencySwitcher(s: Settings): Html | string {
  const currencies = availableCurrencies(s);
  if (currencies.length < 2) return '';
  return html`<div class="currency-switch">
  <label for="currency">Currency</label>
  <select id="currency" name="currency">
    ${currencies.map((c) => html`<option value="${c.code}">${c.code} (${c.symbol})</option>`)}
  </select>
</div>`;
}

/** The receipt API's data, and the decimals of its currency (from the settings; 2 for one no longer offered). */
export type Receipt = Exclude<Awaited<ReturnType<PaymentService['receipt']>>, { error: string }> & {
  decimals: number;
};

/** The money of a receipt: numbers in the order's currency, shown with its symbol. */
export const amount = (r: Receipt, n: number) => `${r.currency_symbol}${n.toFixed(r.decimals)}`;

export function orderTable(r: Receipt): Html {
  return html`<div class="table-scroll" role="region" aria-label="Order lines" tabindex="0">
<table class="lines">
  <thead><tr><th scope="col">Product</th><th scope="col" class="num">Quantity</th><th scope="col" class="num">Total</th></tr></thead>
  <tbody>${r.items.map(
    (i) =>
      html`<tr><td>${i.name}</td><td class="num">${i.qty}</td><td class="num">${amount(r, i.total)}</td></tr>`,
  )}</tbody>
</table>
</div>
<dl class="totals">
  <dt>Subtotal</dt><dd>${amount(r, r.subtotal)}</dd>
  ${r.discount_total > 0 ? html`<dt>Discount${r.coupons.length ? ` (${r.coupons.join(', ')})` : ''}</dt><dd>−${amount(r, r.discount_total)}</dd>` : ''}
  ${r.needs_shipping ? html`<dt>Shipping</dt><dd>${amount(r, r.shipping_total)}</dd>` : ''}
  ${r.tax_total > 0 ? html`<dt>Tax</dt><dd>${amount(r, r.tax_total)}</dd>` : ''}
  <dt class="grand">Total</dt><dd class="grand">${amount(r, r.total)} <span class="muted">${r.currency}</span></dd>
</dl>`;
}

export const PAID = new Set(['processing', 'completed']);

/**
 * How to pay an order on hold, in the store owner's words (the gateway's instructions: bank
 * account, payee), with the order number as the reference; nothing when there are none.
 */
export function howToPay(instructions: string, number: string): Html | string {
  if (!instructions) return '';
  return html`<section class="card how-to-pay" aria-labelledby="how-to-pay-title">
  <h2 id="how-to-pay-title">How to pay</h2>
  <p class="instructions">${instructions}</p>
  <p>Use <strong>order #${number}</strong> as the payment reference. Your license keys are issued when the store has received the payment.</p>
</section>`;
}
/** What an order on hold waits for, under its status on the buyer's receipt. */
export const onHoldNote = (status: string) =>
  status === 'on-hold' ? html`<p class="notice">The store has not confirmed your payment yet.</p>` : '';

/**
 * The cart, checkout, receipt and pay pages (docs/storefront.md, 'Buying'). The cart and checkout
 * are shells that the store's script (/store/assets/store.js) fills from the public /v1 cart and
 * checkout APIs; the receipt and pay pages are rendered here from the receipt's data. Receipt and
 * pay carry the order key in their address: `no-store` (set for every customer page by
 * src/pages/pages.ts, and asserted by test/storefront/checkout-pages.test.ts), and `?key=` is
 * redacted from the logs (src/http/redact.ts).
 */
/**
 * A business buyer's VAT number, and the confirmation of the billing country that checkout asks
 * for when the IP address's country differs (shown by the script then; docs/taxes.md).
 */
function taxFields(s: Settings): Html {
  const ours = s.tax_seller_country ? ` than ours (${s.tax_seller_country})` : '';
  return html`<fieldset class="card" id="tax"><legend>Buying for a business</legend>
      <div class="field wide">
        <label for="vat_number">EU VAT number (optional)</label>
        <input id="vat_number" name="vat_number" maxlength="40" autocomplete="off" spellcheck="false" aria-describedby="vat_number-hint vat_number-error">
        <p class="muted hint" id="vat_number-hint">With its country prefix, e.g. FR40303265045. A valid number of another EU country${ours} buys without VAT (reverse charge).</p>
        <p class="field-error" id="vat_number-error" hidden></p>
      </div>
      <div class="field wide" id="confirm-country-field" hidden>
        <div class="radio"><input type="checkbox" id="confirm_country" name="confirm_country">
        <label for="confirm_country" id="confirm_country-label">I confirm my billing country</label></div>
      </div>
    </fieldset>`;
}

export async function checkoutPages(app: FastifyInstance, opts: CheckoutPagesOptions) {
  const { accounts, catalogue, payments, licenses, settings } = opts;

  /** The publishable key while Stripe is switched on and has both its keys; else null (no Stripe.js). */
  async function stripeKey(s: Settings): Promise<string | null> {
    if (!s.stripe_publishable_key || !s.stripe_secret_key) return null;
    return (await catalogue.gateways.find('stripe'))?.enabled ? s.stripe_publishable_key : null;
  }

  // Served with the pages' security headers, compressed; its name has no hash, so a browser
  // revalidates it (ETag) and sees a new release's script at once.
  const script = compressedAsset(STORE_SCRIPT);
  app.get(STORE_SCRIPT_PATH, async (request, reply) =>
    sendAsset(request, reply, script, { type: 'text/javascript; charset=utf-8', cacheControl: REVALIDATE }),
  );

  app.get('/cart', async (_request, reply) => {
    const s = await settings.get();
    reply.header('content-security-policy', storeCsp(null));
    const body = html`<h1>Your cart</h1>
${alertRegion}
${needsScript('The cart')}
<div class="cart-page" data-store-page="cart">
  ${currencySwitcher(s)}
  <section class="card" id="cart-view" aria-live="polite" aria-busy="true"><p class="muted">Loading your cart…</p></section>
</div>`;
    return sendStorePage(reply, 200, identityOf(s), 'Cart', body, { script: true });
  });

  app.get('/checkout', async (_request, reply) => {
    const s = await settings.get();
    const store = identityOf(s);
    const captcha = s.captcha_provider === 'none' ? null : CAPTCHA[s.captcha_provider];
    const stripe = await stripeKey(s);
    reply.header('content-security-policy', storeCsp(captcha, stripe !== null));
    // Stripe switched on without its keys cannot take a payment: it is not offered.
    const gateways = (await catalogue.gateways.list()).filter(
      (g) => g.enabled && (g.id !== 'stripe' || stripe !== null),
    );
    const body = html`<h1>Checkout</h1>
${alertRegion}
${needsScript('Checkout')}
<form id="checkout-form" class="checkout" data-store-page="checkout" novalidate hidden>
  <div class="checkout-main">
    <fieldset class="card" id="billing"><legend>Billing details</legend><div class="fields" id="billing-fields"></div></fieldset>
    ${s.tax_regime === 'digital_services' ? taxFields(s) : ''}
    <fieldset class="card" id="shipping" hidden><legend>Shipping address</legend><div class="fields" id="shipping-fields"></div></fieldset>
    <fieldset class="card" id="shipping-rates" hidden><legend>Shipping method</legend><div id="rates-list"><p class="muted">Enter your address to see the shipping rates.</p></div></fieldset>
    <fieldset class="card" id="payment"><legend>Payment</legend>
      ${
        gateways.length === 0
          ? html`<p>This store takes no payments at the moment.</p>`
          : gateways.map(
              (
                g,
                i,
              ) => html`<div class="radio"><input type="radio" name="payment_method" id="pm-${g.id}" value="${g.id}"${i === 0 ? html` checked` : ''}>
        <label for="pm-${g.id}">${g.title}</label></div>`,
            )
      }
      <div class="field" id="card-field" hidden>
        <label for="card_number">Card number</label>
        <input id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" maxlength="19" aria-describedby="card_number-error card_number-hint">
        <p class="muted hint" id="card_number-hint">Test gateway: 4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined.</p>
        <p class="field-error" id="card_number-error" hidden></p>
      </div>
      ${stripe ? stripeField(stripe, false) : ''}
    </fieldset>
    ${
      captcha
        ? html`<div class="card captcha"><div class="${captcha.widget}" data-sitekey="${s.captcha_site_key}"></div></div>
<script src="${captcha.script}" async defer></script>`
        : ''
    }
  </div>
  <aside class="card summary" aria-labelledby="summary-title">
    <h2 id="summary-title">Your order</h2>
    <div id="order-summary" aria-live="polite"><p class="muted">Loading…</p></div>
    ${store.terms ? html`<p class="terms">By placing your order you agree to the <a href="${store.terms}">terms and conditions</a>.</p>` : ''}
    <button type="submit" id="place-order">Place order</button>
  </aside>
</form>`;
    return sendStorePage(reply, 200, store, 'Checkout', body, { script: true });
  });

  /** The receipt for `id` and `key`, or null: an unknown order and a wrong key look the same. */
  async function receiptOf(rawId: string, key: unknown): Promise<Receipt | null> {
    if (!ORDER_ID.test(rawId) || typeof key !== 'string' || !ORDER_KEY.test(key)) return null;
    const id = Number(rawId);
    if (id > 2147483647) return null;
    // Only the key opens these pages: a signed-in owner reads their orders under My account.
    const r = await payments.receipt(id, key, null);
    if ('error' in r) return null;
    const s = await settings.get();
    const decimals = availableCurrencies(s).find((c) => c.code === r.currency)?.decimals ?? 2;
    return { ...r, decimals };
  }

  const notFound = (reply: FastifyReply, store: StoreIdentity) =>
    sendStorePage(
      reply,
      404,
      store,
      'Order not found',
      html`<section class="card"><h1>Order not found</h1>
<p>This link names no order, or its key is wrong. Use the link exactly as it was given to you after checkout.</p>
<p><a href="/">See all products</a></p></section>`,
    );

  /**
   * The account checkout made for this order, while its buyer is signed in and has no password
   * yet (docs/storefront.md, 'Set a password'): a password set here, with no email needed, so the
   * buyer can sign in again once the session ends. The form posts to Profile's password route.
   */
  async function setPasswordCard(request: FastifyRequest, orderId: number): Promise<Html | ''> {
    const user = request.user;
    const nonce = request.sessionNonce;
    if (!user || !nonce || user.role !== 'customer' || (await accounts.hasPassword(user.id))) return '';
    // Only the order's own customer: the receipt without its key opens for its owner alone.
    if ('error' in (await payments.receipt(orderId, undefined, user))) return '';
    return html`<section class="card set-password" aria-labelledby="set-password-title">
  <h2 id="set-password-title">Set a password for your account</h2>
  <p>We made an account for you with this order (${user.email}). Choose a password now to sign in later and see your licenses, downloads and orders. No email needed.</p>
  <form method="post" action="/account/profile/password" data-form="set-password">
    <input type="hidden" name="_nonce" value="${nonce}">
    <input type="text" name="username" value="${user.email}" autocomplete="username" hidden>
    <label for="new_password">Password</label>
    <input type="password" id="new_password" name="new_password" required minlength="8" maxlength="1024" autocomplete="new-password" aria-describedby="new-password-note">
    <p class="muted" id="new-password-note">At least 8 characters.</p>
    <button type="submit" class="primary">Set password</button>
  </form>
</section>`;
  }

  app.get('/checkout/order-received/:id', async (request, reply) => {
    const s = await settings.get();
    const store = identityOf(s);
    const key = (request.query as Record<string, unknown>).key;
    const r = await receiptOf((request.params as { id: string }).id, key);
    if (!r) return notFound(reply, store);
    const paid = PAID.has(r.status);
    const issued = paid
      ? (await licenses.list({ order_id: r.id, sort: 'id', order: 'asc' }, 1, 100)).licenses
      : [];
    const payLink = `/checkout/pay/${r.id}?key=${encodeURIComponent(String(key))}`;
    const instructions = await payments.paymentInstructions(r.id);
    const body = html`<h1>${paid ? 'Thank you. Your order is paid.' : 'Thank you. Your order is received.'}</h1>
${await setPasswordCard(request, r.id)}
<section class="card receipt" aria-labelledby="order-title">
  <h2 id="order-title">Order #${r.number}</h2>
  <p><span class="muted">Status:</span> <strong data-status="${r.status}">${orderStatusLabel(r.status)}</strong>
  · <span class="muted">Payment:</span> ${r.payment_method || 'none yet'}
  · <span class="muted">Email:</span> ${r.billing.email}</p>
  ${onHoldNote(r.status)}
  ${
    r.status === 'pending' || r.status === 'failed'
      ? html`<p class="notice">This order is not paid yet. <a href="${payLink}">Pay for this order</a></p>`
      : ''
  }
  ${orderTable(r)}
</section>
${howToPay(instructions, r.number)}
${
  issued.length > 0
    ? html`<section class="card licenses-issued" aria-labelledby="keys-title">
  <h2 id="keys-title">Your license ${issued.length === 1 ? 'key' : 'keys'}</h2>
  <p>Keep ${issued.length === 1 ? 'this key' : 'these keys'} safe. To activate, paste the key into your site's license field (in the plugin's or theme's settings) and save: your site then receives updates and support.</p>
  <ul class="keys">${issued.map(
    (
      l,
    ) => html`<li><span class="product">${l.product_name}${l.variation_name ? ` – ${l.variation_name}` : ''}</span>
    <code class="license-key">${l.license_key}</code>
    <span class="muted">${l.activation_limit === 0 ? 'Unlimited sites' : `${l.activation_limit} ${l.activation_limit === 1 ? 'site' : 'sites'}`}</span></li>`,
  )}</ul>
  <p>Download your software under <a href="/account/downloads">Downloads</a>, and see the sites your licenses are active on under <a href="/account/licenses">My licenses</a> (sign in with the email of this order).</p>
</section>`
    : paid
      ? ''
      : html`<section class="card"><p>License keys appear here, and under <a href="/account/licenses">My licenses</a>, once the payment is confirmed.</p></section>`
}`;
    return sendStorePage(reply, 200, store, `Order #${r.number}`, body);
  });

  app.get('/checkout/pay/:id', async (request, reply) => {
    const s = await settings.get();
    const store = identityOf(s);
    const key = (request.query as Record<string, unknown>).key;
    const r = await receiptOf((request.params as { id: string }).id, key);
    if (!r) return notFound(reply, store);
    const open = r.status === 'pending' || r.status === 'failed';
    const stripe = open && r.available_gateways.some((g) => g.id === 'stripe') ? await stripeKey(s) : null;
    reply.header('content-security-policy', storeCsp(null, stripe !== null));
    const receiptLink = `/checkout/order-received/${r.id}?key=${encodeURIComponent(String(key))}`;
    const body = html`<h1>Pay for order #${r.number}</h1>
${alertRegion}
<section class="card">${orderTable(r)}</section>
${
  !open
    ? html`<section class="card"><p>${PAID.has(r.status) ? 'This order is already paid.' : `This order cannot be paid: ${orderStatusLabel(r.status)}.`}</p>
<p><a href="${receiptLink}">See the order</a></p></section>`
    : html`${needsScript('Paying')}
<form id="pay-form" class="card" data-store-page="pay" data-order="${r.id}" data-key="${String(key)}" data-amount="${String(Math.round(r.total * 10 ** r.decimals))}" data-currency="${r.currency}" novalidate hidden>
  <fieldset><legend>Payment method</legend>
  ${r.available_gateways.map(
    (
      g,
      i,
    ) => html`<div class="radio"><input type="radio" name="payment_method" id="pm-${g.id}" value="${g.id}"${(r.payment_method ? g.title === r.payment_method : i === 0) ? html` checked` : ''}>
    <label for="pm-${g.id}">${g.title}</label></div>`,
  )}
  </fieldset>
  <div class="field" id="card-field" hidden>
    <label for="card_number">Card number</label>
    <input id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" maxlength="19" aria-describedby="card_number-error">
    <p class="field-error" id="card_number-error" hidden></p>
  </div>
  ${stripe ? stripeField(stripe, r.subscription !== null && r.created_via !== 'renewal') : ''}
  <button type="submit">Pay ${amount(r, r.total)}</button>
</form>`
}`;
    return sendStorePage(reply, 200, store, `Pay for order #${r.number}`, body, { script: open });
  });
}
