import type { FastifyBaseLogger } from 'fastify';
import { type Clock, iso, systemClock, TestClock } from './clock.js';
import { type Config, resolvePublicUrl } from './config.js';
import { AppSecrets } from './db/app-secrets.js';
import type { Database } from './db/database.js';
import { RateCounter } from './http/rate-limit.js';
import { AccountsRepository } from './modules/accounts/accounts.repository.js';
import { AccountsService } from './modules/accounts/accounts.service.js';
import { CartRepository } from './modules/cart/cart.repository.js';
import { CartService, CartTokens } from './modules/cart/cart.service.js';
import { CatalogueService } from './modules/catalogue/catalogue.service.js';
import { createCheckout } from './modules/checkout/checkout.module.js';
import type { CheckoutService } from './modules/checkout/checkout.service.js';
import type { PaymentService } from './modules/checkout/payment.service.js';
import type { SubmitService } from './modules/checkout/submit.service.js';
import { createDistribution, type DistributionModule } from './modules/distribution/distribution.module.js';
import { ActivationService } from './modules/licensing/activation.service.js';
import { LicenseRepository } from './modules/licensing/license.repository.js';
import { LicenseService } from './modules/licensing/license.service.js';
import { OAuthRepository } from './modules/licensing/oauth.repository.js';
import { OAuthService } from './modules/licensing/oauth.service.js';
import { StateSigner } from './modules/licensing/oauth.state.js';
import { createOrders } from './modules/orders/orders.module.js';
import type { OrdersService } from './modules/orders/orders.service.js';
import { createReleases, type ReleasesModule } from './modules/releases/releases.module.js';
import type { ReleasesService } from './modules/releases/releases.service.js';
import { SettingsService } from './modules/settings/settings.service.js';
import type { RenewalScheduler } from './modules/subscriptions/renewal.scheduler.js';
import { createSubscriptions } from './modules/subscriptions/subscriptions.module.js';
import type { SubscriptionsService } from './modules/subscriptions/subscriptions.service.js';
import type { WebhookDispatcher } from './modules/webhooks/dispatcher.js';
import { Outbox } from './modules/webhooks/outbox.js';
import { createWebhooks, type WebhookTargetFilter } from './modules/webhooks/webhooks.module.js';
import type { WebhooksService } from './modules/webhooks/webhooks.service.js';

/** Absolute URLs the service hands out; the origin is final only once the server listens. */
export class PublicUrls {
  constructor(public origin: string) {}
  get base(): string {
    return `${this.origin}/v1`;
  }
}

export interface Services {
  database: Database;
  clock: Clock;
  testClock: TestClock | null;
  urls: PublicUrls;
  rates: RateCounter;
  settings: SettingsService;
  accounts: AccountsService;
  catalogue: CatalogueService;
  cart: CartService;
  outbox: Outbox;
  licenses: LicenseService;
  activations: ActivationService;
  /** Customer-approval activation: signed state, approval, activation tokens (docs/oauth.md). */
  oauth: OAuthService;
  webhooks: WebhooksService;
  /** Releases and their artifacts: candidates, artifact checks and streams, withdraw hooks (docs/releases.md). */
  releases: ReleasesService;
  /** Package issuance, update checks, download tokens and their redemption (docs/distribution.md). */
  distribution: DistributionModule;
  /** Delivers the outbox; started when the server listens (tests call start()), stopped on close. */
  dispatcher: WebhookDispatcher;
  /** Orders, status changes and license issuance on payment (docs/checkout.md). */
  orders: OrdersService;
  subscriptions: SubscriptionsService;
  checkout: CheckoutService;
  /** Creates renewal orders when payments fall due; started when the server listens. */
  renewals: RenewalScheduler;
}

/** What the routes need besides the services: the modules' own route-facing parts. */
export interface Modules {
  services: Services;
  releasesModule: ReleasesModule;
  submit: SubmitService;
  payments: PaymentService;
}

export interface WiringOptions {
  /** The server's logger; each module logs through a child named after it. */
  log: FastifyBaseLogger;
  /** The port the server listens on, once it does (webhooks never deliver to it). */
  listeningPort: () => number | null;
  /** Replaces the licensing repository (tests make one database step fail on purpose). */
  licenseRepository?: LicenseRepository;
  /** Overrides the webhook target (url, secret, previous secret) built from the settings: docs/webhooks.md. */
  webhookTarget?: WebhookTargetFilter;
  /** Cuts a webhook attempt off sooner than its 10 s (tests of the timeout need not wait 10 s). */
  webhookAttemptTimeoutMs?: number;
}

const TEST_CLOCK_KEY = 'test_clock_offset_ms';

function makeTestClock(database: Database): TestClock {
  const { db } = database;
  return new TestClock(
    async () => {
      const row = await db
        .selectFrom('app_state')
        .select('value')
        .where('key', '=', TEST_CLOCK_KEY)
        .executeTakeFirst();
      return row ? Number(row.value) : 0;
    },
    async (offset) => {
      const value = String(offset);
      await db
        .insertInto('app_state')
        .values({ key: TEST_CLOCK_KEY, value })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
        .execute();
    },
  );
}

/**
 * Builds every module, in the order of their dependencies, then wires what crosses modules. A
 * module reaches another only through what it is given here.
 */
export function buildModules(config: Config, database: Database, opts: WiringOptions): Modules {
  const testClock = config.testClock ? makeTestClock(database) : null;
  const clock: Clock = testClock ?? systemClock;
  const log = (module: string) => opts.log.child({ module });
  const urls = new PublicUrls(resolvePublicUrl(config, config.port));
  const secrets = new AppSecrets(database.db);
  const rates = new RateCounter(database, clock);
  const settings = new SettingsService(database.db);
  const accounts = new AccountsService(new AccountsRepository(database.db), clock, rates);
  const catalogue = CatalogueService.create(database, clock, settings);
  const cart = new CartService(
    new CartRepository(database.db, database.dialect),
    catalogue,
    settings,
    clock,
    log('cart'),
    new CartTokens(secrets),
  );
  const outbox = new Outbox(clock, () => `${urls.base}/licenses/validate`);
  const licenseRepository = opts.licenseRepository ?? new LicenseRepository(database);
  const licenses = new LicenseService(licenseRepository, clock, settings, outbox, accounts);
  const activations = new ActivationService(licenseRepository, clock, settings);
  const oauth = new OAuthService(
    new OAuthRepository(database.db),
    licenseRepository,
    new StateSigner(secrets, clock),
    clock,
    settings,
    () => `${urls.origin}/account/approve`,
  );
  const { webhooks, dispatcher } = createWebhooks({
    database,
    settings,
    clock,
    testClock,
    log: log('webhooks'),
    self: () => ({ origin: urls.origin, port: opts.listeningPort() }),
    filter: opts.webhookTarget,
    attemptTimeoutMs: opts.webhookAttemptTimeoutMs,
  });
  const { orders } = createOrders({ database, catalogue, licenses, settings, clock });
  const { subscriptions, renewals } = createSubscriptions({
    database,
    orders,
    catalogue,
    accounts,
    settings,
    outbox,
    clock,
    testClock,
    log: log('renewals'),
  });
  const { checkout, submit, payments } = createCheckout({
    database,
    cart,
    catalogue,
    settings,
    orders,
    subscriptions,
    accounts,
    rates,
    clock,
    baseUrl: () => urls.base,
    log: log('checkout'),
  });
  const releasesModule = createReleases({
    database,
    catalogue,
    clock,
    config,
    publicOrigin: () => urls.origin,
  });
  const releases = releasesModule.releases;
  const distribution = createDistribution({
    database,
    clock,
    settings,
    catalogue,
    releases,
    licenseRepository,
    baseUrl: () => urls.base,
  });

  // ---- What crosses modules: when X happens, Y runs (each in X's own transaction). ----
  const now = () => iso(clock.now());
  const { tokens } = distribution;
  // An activation in approval mode goes through the customer's approval (docs/oauth.md).
  activations.useOAuth(oauth);
  // An order is paid: its subscriptions start, or a renewal extends their licenses.
  orders.onPaid((order, paidAt, tx) => subscriptions.orderPaid(order, paidAt, tx));
  // A site is deactivated: its download tokens stop working.
  activations.onDeactivate((trx, activationId) =>
    tokens.invalidate(trx, 'activation_id', activationId, 'deactivated', now()),
  );
  // A license is revoked: its download tokens stop working.
  licenses.onRevoke((trx, licenseId) => tokens.invalidateForLicense(trx, licenseId, 'revoked', now()));
  // A release is withdrawn (or its artifact deleted): its download tokens stop working.
  releases.onWithdraw(({ db, release, reason }) =>
    tokens.invalidate(db, 'release_id', release.id, reason, now()),
  );
  // A deletion preview counts the download tokens still outstanding for each artifact.
  releases.setOutstandingTokenCounter((ids) => tokens.outstanding(ids, now()));

  return {
    services: {
      database,
      clock,
      testClock,
      urls,
      rates,
      settings,
      accounts,
      catalogue,
      outbox,
      cart,
      licenses,
      activations,
      oauth,
      webhooks,
      dispatcher,
      releases,
      distribution,
      orders,
      subscriptions,
      checkout,
      renewals,
    },
    releasesModule,
    submit,
    payments,
  };
}
