import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions, LogController } from 'fastify';
import { type Clock, systemClock, TestClock } from './clock.js';
import { type Config, resolvePublicUrl } from './config.js';
import { AppSecrets } from './db/app-secrets.js';
import type { Database } from './db/database.js';
import { installAuth } from './http/auth.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/error-handler.js';
import { installInputEdge } from './http/input.js';
import { RateCounter } from './http/rate-limit.js';
import { loggerOptions, logsRequests, requestLogger } from './http/redact.js';
import { serializerCompiler } from './http/serialization.js';
import type { App } from './http/types.js';
import { validatorCompiler } from './http/validation.js';
import { AccountsRepository } from './modules/accounts/accounts.repository.js';
import { accountsRoutes } from './modules/accounts/accounts.routes.js';
import { AccountsService } from './modules/accounts/accounts.service.js';
import { CartRepository } from './modules/cart/cart.repository.js';
import { cartRoutes } from './modules/cart/cart.routes.js';
import { CartService, CartTokens } from './modules/cart/cart.service.js';
import { catalogueRoutes } from './modules/catalogue/catalogue.routes.js';
import { CatalogueService } from './modules/catalogue/catalogue.service.js';
import { checkoutRoutes } from './modules/checkout/checkout.routes.js';
import { CheckoutService } from './modules/checkout/checkout.service.js';
import { PaymentService } from './modules/checkout/payment.service.js';
import { SubmitService } from './modules/checkout/submit.service.js';
import { createDistribution, type DistributionModule } from './modules/distribution/distribution.module.js';
import { distributionRoutes } from './modules/distribution/distribution.routes.js';
import { activationRoutes } from './modules/licensing/activation.routes.js';
import { ActivationService } from './modules/licensing/activation.service.js';
import { LicenseRepository } from './modules/licensing/license.repository.js';
import { licenseRoutes } from './modules/licensing/license.routes.js';
import { LicenseService } from './modules/licensing/license.service.js';
import { OAuthRepository } from './modules/licensing/oauth.repository.js';
import { oauthRoutes } from './modules/licensing/oauth.routes.js';
import { OAuthService } from './modules/licensing/oauth.service.js';
import { StateSigner } from './modules/licensing/oauth.state.js';
import { OrdersRepository } from './modules/orders/orders.repository.js';
import { ordersRoutes } from './modules/orders/orders.routes.js';
import { OrdersService } from './modules/orders/orders.service.js';
import { createReleases } from './modules/releases/releases.module.js';
import { releasesRoutes } from './modules/releases/releases.routes.js';
import type { ReleasesService } from './modules/releases/releases.service.js';
import { publicUploadsRoutes } from './modules/releases/upload.routes.js';
import { settingsRoutes } from './modules/settings/settings.routes.js';
import { SettingsService } from './modules/settings/settings.service.js';
import { RenewalScheduler } from './modules/subscriptions/renewal.scheduler.js';
import { subscriptionsRoutes } from './modules/subscriptions/subscriptions.routes.js';
import { SubscriptionsService } from './modules/subscriptions/subscriptions.service.js';
import { systemRoutes } from './modules/system/system.routes.js';
import type { WebhookDispatcher } from './modules/webhooks/dispatcher.js';
import { Outbox } from './modules/webhooks/outbox.js';
import { listeningPort } from './modules/webhooks/target.js';
import { createWebhooks, type WebhookTargetFilter } from './modules/webhooks/webhooks.module.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import type { WebhooksService } from './modules/webhooks/webhooks.service.js';
import { customerPages } from './web/pages.js';

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

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}

export interface BuildOptions {
  /** Where log lines go (tests capture them); defaults to stdout. */
  logStream?: NodeJS.WritableStream;
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

/** Wires services and routes; never listens (tests use inject, main.ts listens). */
export async function buildApp(config: Config, database: Database, opts: BuildOptions = {}): Promise<App> {
  const logger: FastifyServerOptions['logger'] = opts.logStream
    ? { ...loggerOptions(config.logLevel), stream: opts.logStream }
    : loggerOptions(config.logLevel);
  const app = Fastify({
    logger,
    childLoggerFactory: requestLogger,
    // The level is fixed at start: above `info`, Fastify's per-request lines would only be built
    // to be dropped (an object and a call on every request), so they are not made at all.
    logController: new LogController({ disableRequestLogging: !logsRequests(config.logLevel) }),
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const testClock = config.testClock ? makeTestClock(database) : null;
  const clock: Clock = testClock ?? systemClock;
  const rates = new RateCounter(database, clock);
  const secrets = new AppSecrets(database.db);
  const settings = new SettingsService(database.db);
  const accounts = new AccountsService(new AccountsRepository(database.db), clock, rates);
  const catalogue = CatalogueService.create(database, clock, settings);
  const cart = new CartService(
    new CartRepository(database.db, database.dialect),
    catalogue,
    settings,
    clock,
    app.log.child({ module: 'cart' }),
    new CartTokens(secrets),
  );
  const urls = new PublicUrls(resolvePublicUrl(config, config.port));
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
  activations.useOAuth(oauth);
  const { webhooks, dispatcher } = createWebhooks({
    database,
    settings,
    clock,
    testClock,
    log: app.log.child({ module: 'webhooks' }),
    self: () => ({ origin: urls.origin, port: listeningPort(app.server) }),
    filter: opts.webhookTarget,
    attemptTimeoutMs: opts.webhookAttemptTimeoutMs,
  });
  const orders = new OrdersService(
    new OrdersRepository(database.db, database.dialect),
    catalogue,
    licenses,
    settings,
    clock,
  );
  const subscriptions = new SubscriptionsService(
    database.db,
    database.dialect,
    orders,
    catalogue,
    accounts,
    settings,
    outbox,
    clock,
  );
  const checkout = new CheckoutService(cart, catalogue, settings, orders.repo, clock);
  const submit = new SubmitService(
    checkout,
    orders.repo,
    accounts,
    subscriptions,
    rates,
    () => urls.base,
    app.log.child({ module: 'checkout' }),
  );
  const payments = new PaymentService(checkout, orders, subscriptions, submit);
  const renewals = new RenewalScheduler(subscriptions, testClock, app.log.child({ module: 'renewals' }));
  const releasesModule = createReleases({
    database,
    catalogue,
    clock,
    config,
    publicOrigin: () => urls.origin,
  });
  const distributionModule = createDistribution({
    database,
    clock,
    settings,
    catalogue,
    releases: releasesModule.releases,
    licenses,
    activations,
    licenseRepository,
    baseUrl: () => urls.base,
  });
  const services: Services = {
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
    releases: releasesModule.releases,
    distribution: distributionModule,
    orders,
    subscriptions,
    checkout,
    renewals,
  };
  app.decorate('services', services);

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Only JSON (and multipart where a route registers it) is accepted; anything else is 415.
  app.removeContentTypeParser('text/plain');
  installErrorHandling(app);
  // During shutdown, answers carry Connection: close so keep-alive sockets do not hold the exit.
  // An answer whose headers left before the close began still says keep-alive, and its connection
  // turns idle after Fastify has closed the idle ones: Node would keep it for the keep-alive
  // timeout (72 s). Node reads that timeout when an answer ends, so from now on it is 1 ms.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    app.server.keepAliveTimeout = 1;
  });
  // Hooks on every request are written callback-style: an async hook costs a promise per request.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  // Webhook delivery runs in every serving process; inject-only tests start it themselves.
  app.addHook('onListen', async () => dispatcher.start());
  app.addHook('onClose', async () => dispatcher.stop());
  app.addHook('onListen', async () => renewals.start());
  app.addHook('onClose', async () => renewals.stop());
  // Cookies are parsed by the auth hook, and only when a request carries any (src/http/auth.ts).
  await app.register(cookie, { hook: false });
  if (testClock) app.addHook('onRequest', async () => testClock.sync());
  installAuth(app, accounts);
  installInputEdge(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tollgate API',
        version: '1',
        description:
          'Licensing, software distribution, webhooks and storefront for vendors of self-hosted software.',
      },
      components: {
        securitySchemes: {
          cookie: { type: 'apiKey', in: 'cookie', name: 'tollgate_session' },
          nonce: { type: 'apiKey', in: 'header', name: 'X-REST-Nonce' },
          basic: { type: 'http', scheme: 'basic' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  await app.register(
    async (v1) => {
      const api = v1 as unknown as App;
      api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      await api.register(systemRoutes, { testClock });
      await api.register(accountsRoutes, { accounts, secureCookies: config.publicUrl.startsWith('https:') });
      await api.register(settingsRoutes, { settings });
      await api.register(activationRoutes, { activations });
      await api.register(licenseRoutes, { licenses, activations });
      await api.register(oauthRoutes, { oauth });
      await api.register(catalogueRoutes, { catalogue });
      await api.register(cartRoutes, {
        cart,
        accounts,
        secureCookies: config.publicUrl.startsWith('https:'),
      });
      await api.register(webhooksRoutes, { webhooks });
      await api.register(releasesRoutes, { module: releasesModule });
      await api.register(distributionRoutes, distributionModule);
      await api.register(ordersRoutes, { orders });
      await api.register(subscriptionsRoutes, { subscriptions, orders });
      await api.register(checkoutRoutes, {
        checkout,
        submit,
        payments,
        accounts,
        secureCookies: config.publicUrl.startsWith('https:'),
      });
    },
    { prefix: '/v1' },
  );
  // The legacy catalogue's public uploads folder, served like a web server's (docs/releases.md).
  await app.register(publicUploadsRoutes, { uploadsDir: releasesModule.storage.uploadsDir });
  // The customer's pages (sign in, approve an activation, My licenses) live outside /v1.
  await app.register(customerPages, {
    accounts,
    licenses,
    activations,
    oauth,
    settings,
    secureCookies: config.publicUrl.startsWith('https:'),
  });
  return app as unknown as App;
}
