import type { FastifyInstance } from 'fastify';
import { ApiError } from '../http/errors.js';
import { installFormParser } from '../http/input.js';
import type { AccountsService } from '../modules/accounts/accounts.service.js';
import type { CatalogueService } from '../modules/catalogue/catalogue.service.js';
import type { PaymentService } from '../modules/checkout/payment.service.js';
import type { AccountDownloadsService } from '../modules/distribution/account-downloads.service.js';
import type { InvoicesService } from '../modules/invoices/invoices.service.js';
import type { ActivationService } from '../modules/licensing/activation.service.js';
import type { LicenseService } from '../modules/licensing/license.service.js';
import type { OAuthService } from '../modules/licensing/oauth.service.js';
import type { TransferService } from '../modules/licensing/transfer.service.js';
import type { MediaService } from '../modules/media/media.service.js';
import type { RenewalService } from '../modules/orders/license-renewals.service.js';
import type { UpgradeService } from '../modules/orders/license-upgrades.service.js';
import type { OrdersService } from '../modules/orders/orders.service.js';
import type { ReleasesService } from '../modules/releases/releases.service.js';
import type { SettingsService } from '../modules/settings/settings.service.js';
import type { StripeService } from '../modules/stripe/stripe.service.js';
import type { SubscriptionsService } from '../modules/subscriptions/subscriptions.service.js';
import { approvePages } from './approve.js';
import { downloadsPages } from './downloads.js';
import { viewerOf } from './forms.js';
import { html } from './html.js';
import { contentSecurityPolicy, STYLESHEET_PATH, sendPage } from './layout.js';
import { licensesPages } from './licenses.js';
import { ordersPages } from './orders.js';
import { passwordPages } from './password.js';
import { profilePages } from './profile.js';
import { signInPages } from './sign-in.js';
import { signInLinkPages } from './sign-in-link.js';
import { compressedAsset, REVALIDATE, sendAsset } from './static.js';
import type { LegacyPage } from './store/catalogue.js';
import { cataloguePages } from './store/catalogue.js';
import { checkoutPages } from './store/checkout.js';
import { identityOf } from './store/layout.js';
import { mediaRoutes } from './store/media.js';
import { renewPages } from './store/renew.js';
import { STYLESHEET } from './style.js';
import { subscriptionsPages } from './subscriptions.js';
import { transferPages } from './transfer.js';

export interface PagesOptions {
  /** Answers `GET /?edd_action=…`, the updaters already in the field (src/modules/legacy). */
  legacy?: LegacyPage;
  accounts: AccountsService;
  licenses: LicenseService;
  transfers: TransferService;
  activations: ActivationService;
  oauth: OAuthService;
  settings: SettingsService;
  catalogue: CatalogueService;
  releases: ReleasesService;
  media: MediaService;
  /** Receipts and pay-order, for the receipt and pay pages. */
  payments: PaymentService;
  /** My orders. */
  orders: OrdersService;
  /** Changing a license's tier from My licenses (docs/selling.md, 'Upgrades and downgrades'). */
  upgrades: UpgradeService;
  /** The invoice and credit notes of an order in My orders (docs/invoices.md). */
  invoices: InvoicesService;
  /** The one-click renewal link of a term license (docs/selling.md, 'Renewals'). */
  renewals: RenewalService;
  /** Subscriptions (the customer's cancellation). */
  subscriptions: SubscriptionsService;
  /** The cards kept with Stripe, on the Subscriptions page (docs/payments.md, 'Saved cards'). */
  stripe: Pick<StripeService, 'cards' | 'removeCard' | 'chooseCard'>;
  /** Downloads (the customer's account tokens, docs/storefront.md 'Downloads'). */
  downloads: AccountDownloadsService;
  /** Whether the store can email a buyer now (docs/email.md): the pages never say "check your email" otherwise. */
  mailAvailable: () => Promise<boolean>;
  /** The store's PUBLIC_URL origin (final once the server listens). */
  origin: () => string;
  secureCookies: boolean;
}

/** What a customer reads when a page cannot do what was asked: by code, never an internal message. */
const PAGE_ERRORS: Partial<Record<string, [string, string]>> = {
  rate_limited: ['Too many requests', 'Please wait a minute and try again.'],
  invalid_state: [
    'This approval link is invalid or has expired',
    'Approval links work for 10 minutes. Go back to your site and start the activation again.',
  ],
  missing_state: ['This approval link is incomplete', 'Go back to your site and start the activation again.'],
  missing_params: ['Something was missing', 'Go back to your site and start the activation again.'],
  license_not_found: ['License not found', 'The license of this request no longer exists.'],
  rest_cookie_invalid_nonce: [
    'This form has expired',
    'The page was open for too long or came from another site. Go back, reload the page and try again.',
  ],
  revoked: ['This license is revoked', 'A revoked license cannot be activated on a site.'],
  expired: ['This license has expired', 'Renew the license to activate it on a site.'],
  subscription_inactive: [
    'The subscription is not active',
    'Renew the subscription to activate the license.',
  ],
  license_inactive: ['This license is not active', 'It cannot be activated on a site.'],
  invalid_usage_expiry: ['This license cannot be used', 'Please contact the store.'],
};

/**
 * The customer's pages (sign in, approve an activation, My licenses), outside /v1. Every answer
 * carries a strict CSP, refuses framing and sends no Referer (the approval URL holds the state;
 * the callback URL holds the activation token), and is never cached.
 */
export async function customerPages(app: FastifyInstance, opts: PagesOptions) {
  installFormParser(app);
  // Pages are not part of the REST API's OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });

  // Every page wears the store's identity (settings are cached for a second: no query per page).
  app.addHook('preHandler', async (request) => {
    request.storeIdentity = identityOf(await opts.settings.get());
  });

  app.addHook('onSend', async (_request, reply, payload) => {
    if (!reply.hasHeader('content-security-policy')) {
      reply.header('content-security-policy', contentSecurityPolicy());
    }
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });

  app.setErrorHandler(async (err: Error, request, reply) => {
    const apiError = err instanceof ApiError ? err : null;
    const status = apiError?.status ?? ((err as { statusCode?: number }).statusCode || 500);
    if (status >= 500) request.log.error({ err }, 'page failed');
    const retryAfter = apiError?.data?.retry_after;
    if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
    const [title, text] = (apiError && PAGE_ERRORS[apiError.code]) ?? [
      status >= 500 ? 'Something went wrong' : 'This request cannot be completed',
      status >= 500 ? 'Please try again in a moment.' : 'Go back and try again.',
    ];
    return sendPage(
      reply,
      status,
      title,
      html`<section class="card"><h1>${title}</h1><p>${text}</p>
  <p><a href="/account/licenses">Go to My licenses</a></p></section>`,
      viewerOf(request),
    );
  });

  // Compressed, and revalidated (ETag) as its name has no hash (src/pages/static.ts).
  const stylesheet = compressedAsset(STYLESHEET);
  app.get(STYLESHEET_PATH, async (request, reply) =>
    sendAsset(request, reply, stylesheet, { type: 'text/css; charset=utf-8', cacheControl: REVALIDATE }),
  );

  await app.register(signInPages, opts);
  await app.register(signInLinkPages, opts);
  await app.register(approvePages, { accounts: opts.accounts, oauth: opts.oauth });
  await app.register(licensesPages, opts);
  await app.register(transferPages, opts);
  await app.register(downloadsPages, opts);
  await app.register(passwordPages, opts);
  // The storefront (docs/storefront.md): catalogue, product pages, images and the store's styles.
  await app.register(mediaRoutes, { media: opts.media });
  await app.register(cataloguePages, opts);
  // Buying: cart, checkout, receipt and pay pages, and the store's script (docs/storefront.md).
  await app.register(checkoutPages, opts);
  await app.register(renewPages, opts);
  await app.register(ordersPages, opts);
  await app.register(subscriptionsPages, opts);
  await app.register(profilePages, opts);
}
