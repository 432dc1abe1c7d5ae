import type { FastifyBaseLogger } from 'fastify';
import { type Clock, iso, systemClock, TestClock } from './clock.js';
import { type Config, resolvePublicUrl } from './config.js';
import { AppSecrets } from './db/app-secrets.js';
import { AppStateRepository } from './db/app-state.repository.js';
import type { Database } from './db/database.js';
import { RateCounter } from './http/rate-limit.js';
import { type AccountsService, createAccounts } from './modules/accounts/accounts.module.js';
import { type AuditService, createAudit } from './modules/audit/audit.module.js';
import { type CartService, createCart } from './modules/cart/cart.module.js';
import { type CatalogueService, createCatalogue } from './modules/catalogue/catalogue.module.js';
import {
  type CheckoutService,
  createCheckout,
  type PaymentService,
  type SubmitService,
} from './modules/checkout/checkout.module.js';
import { createDistribution, type DistributionModule } from './modules/distribution/distribution.module.js';
import {
  createImportJobs,
  createImports,
  type ImportJobService,
  type ImportService,
} from './modules/imports/imports.module.js';
import { createInvoices, type InvoicesService } from './modules/invoices/invoices.module.js';
import {
  createLegacy,
  createLmfwc,
  type LegacyService,
  type LmfwcService,
} from './modules/legacy/legacy.module.js';
import type { ActivationService } from './modules/licensing/activation.service.js';
import type { LicenseRepository } from './modules/licensing/license.repository.js';
import type { LicenseService } from './modules/licensing/license.service.js';
import { createLicensing } from './modules/licensing/licensing.module.js';
import type { OAuthService } from './modules/licensing/oauth.service.js';
import type { ReceiptService } from './modules/licensing/receipt.service.js';
import type { RenewalLinks } from './modules/licensing/renewal-links.js';
import type { StaleActivationWorker } from './modules/licensing/stale-activations.worker.js';
import type { TransferService } from './modules/licensing/transfer.service.js';
import { TrialRepository } from './modules/licensing/trial.repository.js';
import { TrialService } from './modules/licensing/trial.service.js';
import {
  createMail,
  type LicenseExpiryWorker,
  type MailOutbox,
  type MailService,
  type MailTestService,
  type MailWorker,
} from './modules/mail/mail.module.js';
import { createMedia, type MediaService } from './modules/media/media.module.js';
import { RenewalLinkRepository } from './modules/orders/license-renewals.repository.js';
import { RenewalService } from './modules/orders/license-renewals.service.js';
import { UpgradeService } from './modules/orders/license-upgrades.service.js';
import { createOrders, type OrdersService, type RefundsService } from './modules/orders/orders.module.js';
import {
  type BucketMigration,
  createReleases,
  type ReleaseSignatures,
  type ReleasesModule,
  type ReleasesService,
} from './modules/releases/releases.module.js';
import {
  createReports,
  type DailyCounters,
  type InstalledBase,
  type InstalledBaseService,
  type ReportsService,
} from './modules/reports/reports.module.js';
import { createSettings, type SettingsService } from './modules/settings/settings.module.js';
import { createSigning, type SigningService } from './modules/signing/signing.module.js';
import {
  createStripe,
  type RenewalChargeWorker,
  type StripeService,
} from './modules/stripe/stripe.module.js';
import {
  createSubscriptions,
  type RenewalWorker,
  type SubscriptionsService,
} from './modules/subscriptions/subscriptions.module.js';
import { createTax, type TaxModule } from './modules/tax/tax.module.js';
import { TestDataService } from './modules/test-data/test-data.service.js';
import { createVault, type KeyVault } from './modules/vault/vault.module.js';
import {
  createWebhooks,
  type Outbox,
  type WebhooksService,
  type WebhookTargetFilter,
  type WebhookWorker,
} from './modules/webhooks/webhooks.module.js';

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
  /** Trials without payment, once per email and site (docs/selling.md, 'Trials'). */
  trials: TrialService;
  /** License transfers (docs/selling.md, 'Transfers'). */
  transfers: TransferService;
  /** Buying the renewal of a term license (docs/selling.md, 'Buying a renewal'). */
  licenseRenewals: RenewalService;
  /** The signed one-click renewal links of term licenses (docs/selling.md, 'Renewals'). */
  renewalLinks: RenewalLinks;
  /** Upgrades and downgrades of a license (docs/selling.md, 'Upgrades and downgrades'). */
  licenseUpgrades: UpgradeService;
  /** Customer-approval activation: signed state, approval, activation tokens (docs/oauth.md). */
  oauth: OAuthService;
  /** Validate with a signed offline receipt (docs/licensing.md, 'Offline receipts'). */
  receipts: ReceiptService;
  /** The store's signing keys: what receipts (and signed releases) are signed with (docs/administration.md). */
  signing: SigningService;
  /** The store's vault keys: sealing, and rotate-key over every sealed value (docs/releases.md). */
  vault: KeyVault;
  /** Signs artifacts stored before releases were signed: run after the migrations by src/cli.ts. */
  releaseSignatures: ReleaseSignatures;
  /** Moves the vault's artifacts to the bucket: the `vault:migrate-to-s3` command of src/cli.ts. */
  bucketMigration: BucketMigration;
  /** The sealed secrets this process's vault keys cannot open: src/cli.ts refuses to start with any, /v1/health reports them. */
  unopenableSecrets: () => Promise<string[]>;
  webhooks: WebhooksService;
  /** Releases and their artifacts: candidates, artifact checks and streams, withdraw hooks (docs/releases.md). */
  releases: ReleasesService;
  /** Package issuance, update checks, download tokens and their redemption (docs/distribution.md). */
  distribution: DistributionModule;
  /** The compatibility API of the updaters already in the field (docs/migrating.md). */
  legacy: LegacyService;
  /** License Manager for WooCommerce's license routes, for the plugins already in the field (docs/migrating.md). */
  lmfwc: LmfwcService;
  /** Moves another store's customers, products, licenses and sites in (docs/migrating.md, 'Importing'). */
  imports: ImportService;
  /** Import jobs started from the console, run in the background (docs/migrating.md, 'From the console'). */
  importJobs: ImportJobService;
  /** Delivers the outbox; started when the server listens (tests call start()), stopped on close. */
  dispatcher: WebhookWorker;
  /** Orders, status changes and license issuance on payment (docs/checkout.md). */
  orders: OrdersService;
  /** Refunds and order notes (docs/payments.md). */
  refunds: RefundsService;
  /** Invoices and credit notes, numbered when an order is paid or refunded (docs/invoices.md). */
  invoices: InvoicesService;
  /** Deletes the test orders and what they made (docs/payments.md, 'Deleting test data'). */
  testData: TestDataService;
  /** The Stripe gateway: PaymentIntents, its webhook, refunds and disputes (docs/payments.md, 'Stripe'). */
  stripe: StripeService;
  /** Charges kept cards for renewal orders; started when the server listens (tests call tick()), stopped on close. */
  stripeRenewals: RenewalChargeWorker;
  subscriptions: SubscriptionsService;
  checkout: CheckoutService;
  /** Creates renewal orders when payments fall due; started when the server listens. */
  renewals: RenewalWorker;
  /** Releases sites unseen for `stale_activation_days` (docs/licensing.md); started when the server listens. */
  staleActivations: StaleActivationWorker;
  /** Every administrator change, recorded in the change's own transaction (docs/admin.md, 'Audit trail'). */
  audit: AuditService;
  /** The dashboard's report (docs/api.md, 'Reports'). */
  reports: ReportsService;
  /** VAT numbers with VIES and the quarter's tax report (docs/taxes.md). */
  tax: TaxModule;
  /** Update checks and downloads counted in memory; flushed every few seconds and on close. */
  counters: DailyCounters;
  /** What sites run (versions, platform and PHP), seen by the update check and validate; flushed like the counters. */
  installedBase: InstalledBase;
  /** A product's installed-base report, read by administrators (docs/admin.md, 'In the field'). */
  installedBaseReport: InstalledBaseService;
  /** Product images and the logo, resized and stored (docs/storefront.md, 'Images'). */
  media: MediaService;
  /** The mail outbox's list and resend (docs/email.md). */
  mail: MailService;
  /** "Send a test email": one message now through the store's mail server (docs/email.md). */
  mailTest: MailTestService;
  /** How a change adds its email in its own transaction (the hooks below). */
  mailOutbox: MailOutbox;
  /** Sends the mail outbox; started when the server listens (tests call start()), stopped on close. */
  mailWorker: MailWorker;
  /** License expiring/expired notices, run by the mail worker (tests call run()). */
  expiryScan: LicenseExpiryWorker;
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

/** The test clock's offset lives in app_state, so every server process sharing the database sees it. */
function makeTestClock(appState: AppStateRepository): TestClock {
  return new TestClock(
    async () => Number((await appState.get(TEST_CLOCK_KEY)) ?? 0),
    (offset) => appState.set(TEST_CLOCK_KEY, String(offset)),
  );
}

/**
 * Builds every module, in the order of their dependencies, then wires what crosses modules. A
 * module reaches another only through what it is given here.
 */
export function buildModules(config: Config, database: Database, opts: WiringOptions): Modules {
  const appState = new AppStateRepository(database.db);
  const testClock = config.testClock ? makeTestClock(appState) : null;
  const clock: Clock = testClock ?? systemClock;
  const log = (module: string) => opts.log.child({ module });
  const urls = new PublicUrls(resolvePublicUrl(config, config.port));
  const secrets = new AppSecrets(appState);
  const rates = new RateCounter(database, clock);
  const audit = createAudit({ database, clock });
  const { vault } = createVault({ database, config, audit });
  // The Stripe keys are sealed with the vault key.
  const settings = createSettings({ database, audit, vault });
  // The signing keys' private halves are sealed with the vault key.
  const { signing } = createSigning({ database, clock, vault, audit });
  const accounts = createAccounts({ database, clock, rates, audit });
  const catalogue = createCatalogue({ database, clock, settings, audit });
  const cart = createCart({ database, catalogue, settings, clock, log: log('cart'), secrets });
  const { webhooks, outbox, dispatcher } = createWebhooks({
    database,
    settings,
    clock,
    testClock,
    log: log('webhooks'),
    self: () => ({ origin: urls.origin, port: opts.listeningPort() }),
    validationUrl: () => `${urls.base}/licenses/validate`,
    filter: opts.webhookTarget,
    attemptTimeoutMs: opts.webhookAttemptTimeoutMs,
    audit,
  });
  const releasesModule = createReleases({
    database,
    audit,
    catalogue,
    clock,
    config,
    publicOrigin: () => urls.origin,
    // Uploads are signed with the store's signing key.
    signer: signing,
    vault,
  });
  const releases = releasesModule.releases;
  const licensing = createLicensing({
    database,
    clock,
    settings,
    outbox,
    users: accounts,
    rates,
    secrets,
    approvalPage: () => `${urls.origin}/account/approve`,
    renewalPage: () => `${urls.origin}/renew`,
    audit,
    licenseRepository: opts.licenseRepository,
    signing,
    log: log('licensing'),
    testClock,
  });
  const { licenses, activations, oauth, receipts, staleActivations, transfers } = licensing;
  const trials = new TrialService(
    database,
    new TrialRepository(database),
    clock,
    catalogue,
    accounts,
    licenses,
  );
  const { orders, refunds } = createOrders({ database, catalogue, licenses, settings, clock, audit });
  const invoices = createInvoices({ database, orders, settings, clock });
  const licenseRenewals = new RenewalService(
    database,
    clock,
    settings,
    catalogue,
    orders,
    licenses,
    licensing.renewalLinks,
    new RenewalLinkRepository(database.db, database.dialect),
  );
  const licenseUpgrades = new UpgradeService(database, clock, audit, settings, catalogue, orders, licenses);
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
    audit,
  });
  const tax = createTax({ db: database.db, viesUrl: config.viesUrl, viesTimeoutMs: config.viesTimeoutMs });
  const { checkout, submit, payments } = createCheckout({
    database,
    cart,
    catalogue,
    settings,
    orders,
    subscriptions,
    accounts,
    rates,
    tax,
    clock,
    baseUrl: () => urls.base,
    log: log('checkout'),
  });
  const { stripe, renewalCharges: stripeRenewals } = createStripe({
    database,
    settings,
    orders,
    refunds,
    catalogue,
    subscriptions,
    audit,
    clock,
    testClock,
    apiUrl: config.stripeApiUrl,
    log: log('stripe'),
  });
  const distribution = createDistribution({
    database,
    clock,
    settings,
    catalogue,
    releases,
    licenses: licensing.lookup,
    baseUrl: () => urls.base,
    origin: () => urls.origin,
    renewalLinks: licensing.renewalLinks,
    secrets,
  });
  const legacy = createLegacy({
    catalogue,
    activations,
    lookup: licensing.lookup,
    distribution: distribution.distribution,
    settings,
    clock,
    secrets,
    origin: () => urls.origin,
  });
  const lmfwc = createLmfwc({ catalogue, activations, lookup: licensing.lookup, settings, clock });
  const imports = createImports({
    database,
    accounts,
    catalogue,
    licenses,
    orders,
    subscriptions,
    stripe,
    publishing: releasesModule.publishing,
    maxUploadBytes: releasesModule.maxUploadBytes,
    settings,
    audit,
    clock,
  });
  const importJobs = createImportJobs({
    database,
    imports,
    audit,
    clock,
    log: log('imports'),
    roots: config.importRoots,
  });

  const { reports, counters, installedBase, installedBaseReport } = createReports({
    database,
    clock,
    log: log('reports'),
    secrets,
    products: catalogue,
  });
  const { media } = createMedia({
    database,
    clock,
    // The images still shown: every product's image, icon and banner, and the logo; the other files are deleted.
    inUse: async () => {
      const [images, current] = await Promise.all([catalogue.imagesInUse(), settings.get()]);
      return new Set(current.store_logo ? [...images, current.store_logo] : images);
    },
  });
  const { mail, mailTest, mailOutbox, mailWorker, expiryScan } = createMail({
    database,
    settings,
    clock,
    testClock,
    log: log('mail'),
    audit,
    origin: () => urls.origin,
    // A password or sign-in message's link is minted when it is sent: no usable token is ever stored.
    passwordLinks: async (userId, purpose) => {
      const token = await accounts.issuePasswordToken(userId, purpose);
      if (!token) return null;
      const page = purpose === 'signin' ? 'sign-in-link/claim' : 'reset-password';
      return `${urls.origin}/account/${page}?token=${token}`;
    },
    // A transfer's link is minted the same way, while the offer is pending.
    transferLinks: async (transferId) => {
      const token = await transfers.mintToken(transferId);
      return token ? `${urls.origin}/account/transfers/accept?token=${token}` : null;
    },
    // A renewal reminder's one-click link is signed when it is sent (docs/selling.md, 'Renewals').
    renewalLinks: (licenseId, expiresAt) => licensing.renewalLinks.urlFor(licenseId, expiresAt),
    // A paid order's receipt carries its invoice (docs/invoices.md), rendered when it is sent.
    attachments: (kind, data) => invoices.receiptAttachments(kind, data),
  });

  // ---- What crosses modules: when X happens, Y runs (each in X's own transaction). ----
  const now = () => iso(clock.now());
  const { invalidations, tokens } = distribution;
  // The vault key is rotated: the encrypted artifacts are re-sealed, then the Stripe settings and
  // the signing keys' private halves (the order of rotate-key's report).
  vault.holdFiles(releasesModule.artifacts);
  vault.holdSecrets(settings);
  vault.holdSecrets(signing);
  // Stripe is a gateway like the built-in ones: checkout pays through it, refunds go back through it.
  orders.addGateway(stripe.gateway);
  // A renewal order is created: a card its customer kept with Stripe is charged (after the commit).
  // Going live needs a gateway that takes real payments, and switches the test card off.
  settings.onStoreModeChanged(async (mode, tx, actor) => {
    if (mode === 'live') await catalogue.gateways.goLive(tx, actor);
  });
  orders.onCreated((order, tx) => stripe.renewalCreated(order, tx));
  // An imported subscription Stripe billed renews only once Stripe no longer bills it.
  subscriptions.checkOldSubscription((profileId) => stripe.oldSubscription(profileId));
  // An order is paid: its subscriptions start, or a renewal extends their licenses.
  orders.onPaid((order, paidAt, tx) => subscriptions.orderPaid(order, paidAt, tx));
  // A subscription's license is quoted a move to another tier: prorated over its billing period.
  licenseUpgrades.setSubscriptionBilling((id) => subscriptions.billing(id));
  // A subscription's license moved tier (its upgrade order paid): the subscription renews the new tier.
  licenses.onSubscriptionUpgrade((move, tx) => subscriptions.moveTier(move, tx));
  // An order is refunded in full: the subscription it paid for or started is cancelled.
  refunds.onRefunded((order, tx) => subscriptions.orderRefunded(order, tx));
  // A site is deactivated: its download tokens stop working.
  activations.onDeactivate((activationId, tx) => invalidations.activation(activationId, tx));
  // A license is revoked: its download tokens stop working.
  licenses.onRevoke((licenseId, tx) => invalidations.license(licenseId, tx));
  // A release is withdrawn (or its artifact deleted): its download tokens stop working.
  releases.onWithdraw(({ tx, release, reason }) => invalidations.release(release.id, reason, tx));
  // A deletion preview counts the download tokens still outstanding for each artifact.
  releases.setOutstandingTokenCounter((ids) => tokens.outstanding(ids, now()));
  // The releases list shows how many sites took each release (a staged rollout's progress).
  releases.setSiteCounter((productId) => tokens.sitesTaken(productId));
  // An order is paid: its receipt (a renewal's or an offline payment's message) joins the mail outbox.
  // The invoice is numbered before the receipt is queued, in the same transaction.
  orders.onPaid((order, paidAt, tx) => invoices.orderPaid(order, paidAt, tx));
  refunds.onRefund((order, refund, tx) => invoices.refunded(order, refund, tx));
  orders.onPaid((order, _paidAt, tx) => mailOutbox.orderPaid(order, tx));
  // A renewal order is created: "renewal due" with its pay link.
  orders.onCreated((order, tx) => mailOutbox.renewalCreated(order, tx));
  // Its renewal-due message names the kept card that will pay it.
  mailOutbox.describeRenewalCard((order, tx) => stripe.renewalCard(order, tx));
  // An order fails: for a renewal, "renewal payment failed".
  orders.onFailed((order, tx) => mailOutbox.orderFailed(order, tx));
  // An order on hold for a bank transfer or cheque: how to pay it, in the gateway's own words.
  orders.onHeld(async (order, tx) =>
    mailOutbox.orderOnHold(
      order,
      (await catalogue.gateways.find(order.payment_method, tx))?.instructions ?? '',
      tx,
    ),
  );
  // A subscription's status changes: its customer is told.
  subscriptions.onStatusChanged((id, status, reason, tx) =>
    mailOutbox.subscriptionChanged(id, status, reason, tx),
  );
  // Forgot password: the reset email (its link minted when sent).
  accounts.onPasswordResetRequested((user, tx) => mailOutbox.passwordReset(user, tx));
  // A sign-in link was asked for: the email that carries it.
  accounts.onSignInLinkRequested((user, tx) => mailOutbox.signInLink(user, tx));
  // Checkout created an account: the "set your password" email.
  accounts.onCreatedAtCheckout((user, tx) => mailOutbox.accountCreated(user, tx));
  // A license is offered to another customer: the email with the link that accepts it (minted when sent).
  transfers.onOffered((transfer, tx) => mailOutbox.licenseTransfer(transfer, tx));

  const testData = new TestDataService(database, {
    orders,
    licenses,
    subscriptions,
    tokens: distribution.invalidations,
    audit,
  });

  return {
    services: {
      trials,
      transfers,
      licenseRenewals,
      renewalLinks: licensing.renewalLinks,
      licenseUpgrades,
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
      receipts,
      signing,
      vault,
      releaseSignatures: releasesModule.signatures,
      bucketMigration: releasesModule.bucketMigration,
      unopenableSecrets: () => vault.unopenableSecrets(),
      webhooks,
      dispatcher,
      releases,
      distribution,
      legacy,
      lmfwc,
      imports,
      importJobs,
      orders,
      refunds,
      invoices,
      testData,
      stripe,
      stripeRenewals,
      subscriptions,
      checkout,
      renewals,
      staleActivations,
      audit,
      reports,
      tax,
      counters,
      installedBase,
      installedBaseReport,
      media,
      mail,
      mailTest,
      mailOutbox,
      mailWorker,
      expiryScan,
    },
    releasesModule,
    submit,
    payments,
  };
}
