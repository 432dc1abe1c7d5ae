import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions, LogController } from 'fastify';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { installAnonymousWriteLimit } from './http/anonymous-writes.js';
import { installAuth } from './http/auth.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/error-handler.js';
import { installInputEdge } from './http/input.js';
import { loggerOptions, logsRequests, requestLogger } from './http/redact.js';
import { serializerCompiler } from './http/serialization.js';
import type { App } from './http/types.js';
import { validatorCompiler } from './http/validation.js';
import type { Metrics } from './metrics.js';
import { accountsRoutes } from './modules/accounts/accounts.routes.js';
import { auditRoutes } from './modules/audit/audit.routes.js';
import { cartRoutes } from './modules/cart/cart.routes.js';
import { catalogueRoutes } from './modules/catalogue/catalogue.routes.js';
import { checkoutRoutes } from './modules/checkout/checkout.routes.js';
import { distributionRoutes } from './modules/distribution/distribution.routes.js';
import { importJobsRoutes } from './modules/imports/import-jobs.routes.js';
import { invoicesRoutes } from './modules/invoices/invoices.routes.js';
import { eddHandler, legacyRoutes } from './modules/legacy/legacy.routes.js';
import { lmfwcRoutes } from './modules/legacy/lmfwc.routes.js';
import { activationRoutes } from './modules/licensing/activation.routes.js';
import { licenseRoutes } from './modules/licensing/license.routes.js';
import { oauthRoutes } from './modules/licensing/oauth.routes.js';
import { transferRoutes } from './modules/licensing/transfer.routes.js';
import { trialRoutes } from './modules/licensing/trial.routes.js';
import { mailRoutes } from './modules/mail/mail.routes.js';
import { mediaRoutes } from './modules/media/media.routes.js';
import { renewalRoutes } from './modules/orders/license-renewals.routes.js';
import { upgradeRoutes } from './modules/orders/license-upgrades.routes.js';
import { ordersRoutes } from './modules/orders/orders.routes.js';
import { refundsRoutes } from './modules/orders/refunds.routes.js';
import { releasesRoutes } from './modules/releases/releases.routes.js';
import { publicUploadsRoutes } from './modules/releases/upload.routes.js';
import { reportsRoutes } from './modules/reports/reports.routes.js';
import { settingsRoutes } from './modules/settings/settings.routes.js';
import { signingRoutes } from './modules/signing/signing.routes.js';
import { stripeAccountRoutes, stripeRoutes } from './modules/stripe/stripe.routes.js';
import { subscriptionsRoutes } from './modules/subscriptions/subscriptions.routes.js';
import { systemRoutes } from './modules/system/system.routes.js';
import { taxRoutes } from './modules/tax/tax.routes.js';
import { testDataRoutes } from './modules/test-data/test-data.routes.js';
import { vaultRoutes } from './modules/vault/vault.routes.js';
import { listeningPort } from './modules/webhooks/target.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import { adminConsole } from './pages/admin.js';
import { customerPages } from './pages/pages.js';
import { buildModules, type Services, type WiringOptions } from './wiring.js';

export { PublicUrls, type Services } from './wiring.js';

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    /** The metrics listener when METRICS_PORT is set, else null (docs/operations.md, 'Metrics'). */
    metrics: Metrics | null;
  }
}

export interface BuildOptions extends Omit<WiringOptions, 'log' | 'listeningPort'> {
  /** Where log lines go (tests capture them); defaults to stdout. */
  logStream?: NodeJS.WritableStream;
  /** The built console (console); defaults to dist/admin. */
  adminDir?: string;
}

/** The server: its plugins, hooks and routes over the modules of src/wiring.ts; never listens (tests use inject, main.ts listens). */
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

  const { logStream: _, adminDir, ...wiring } = opts;
  const { services, releasesModule, submit, payments } = buildModules(config, database, {
    ...wiring,
    log: app.log,
    listeningPort: () => listeningPort(app.server),
  });
  const {
    testClock,
    accounts,
    settings,
    activations,
    receipts,
    signing,
    licenses,
    oauth,
    catalogue,
    cart,
    webhooks,
    dispatcher,
    renewals,
    staleActivations,
    distribution,
    orders,
    refunds,
    subscriptions,
    checkout,
    audit,
    reports,
    counters,
    installedBase,
    installedBaseReport,
    media,
    mail,
    mailWorker,
  } = services;
  app.decorate('services', services);
  // Only with METRICS_PORT: without it no metrics hook exists and requests cost what they did, and
  // prom-client is never loaded (docs/performance.md, 'Memory').
  const metricsModule = config.metricsPort === null ? null : await import('./metrics.js');
  const metrics =
    config.metricsPort === null || metricsModule === null
      ? null
      : new metricsModule.Metrics(config.host, config.metricsPort, {
          database,
          clock: services.clock,
          testClock,
          webhooks,
          mail,
          log: app.log,
        });
  app.decorate('metrics', metrics);
  if (metrics) {
    metrics.install(app);
    // Its own listener, opened with the server's and closed with it (src/cli.ts awaits the opening).
    app.addHook('onListen', async () => {
      await metrics.listen();
    });
    app.addHook('onClose', async () => metrics.close());
  }

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Only JSON (and multipart where a route registers it) is accepted; anything else is 415.
  app.removeContentTypeParser('text/plain');
  installErrorHandling(app, metricsModule?.Metrics.noteError);
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
  app.addHook('onListen', async () => staleActivations.start());
  app.addHook('onClose', async () => staleActivations.stop());
  app.addHook('onListen', async () => services.stripeRenewals.start());
  app.addHook('onClose', async () => services.stripeRenewals.stop());
  app.addHook('onListen', async () => mailWorker.start());
  app.addHook('onClose', async () => mailWorker.stop());
  // Update checks and downloads are flushed every few seconds while listening, and once more on close.
  app.addHook('onListen', async () => counters.start());
  app.addHook('onClose', async () => counters.stop());
  // So are the sites of the installed-base report (what versions, platforms and PHP run where).
  app.addHook('onListen', async () => installedBase.start());
  app.addHook('onClose', async () => installedBase.stop());
  // An import job left active by a stopped process is failed; a running one stops between two records.
  app.addHook('onListen', async () => services.importJobs.recover());
  app.addHook('onClose', async () => services.importJobs.stop());
  // Cookies are parsed by the auth hook, and only when a request carries any (src/http/auth.ts).
  await app.register(cookie, { hook: false });
  if (testClock) app.addHook('onRequest', async () => testClock.sync());
  installAuth(app, accounts);
  installAnonymousWriteLimit(app, services.clock);
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
      await api.register(systemRoutes, { testClock, unopenableSecrets: services.unopenableSecrets });
      await api.register(accountsRoutes, { accounts, secureCookies: config.publicUrl.startsWith('https:') });
      await api.register(settingsRoutes, { settings });
      await api.register(activationRoutes, { activations, receipts, installedBase });
      await api.register(signingRoutes, { signing });
      await api.register(licenseRoutes, { licenses, activations });
      await api.register(trialRoutes, { trials: services.trials });
      await api.register(transferRoutes, { transfers: services.transfers });
      await api.register(renewalRoutes, { renewals: services.licenseRenewals });
      await api.register(upgradeRoutes, { upgrades: services.licenseUpgrades });
      await api.register(oauthRoutes, { oauth });
      await api.register(catalogueRoutes, { catalogue });
      await api.register(cartRoutes, {
        cart,
        accounts,
        secureCookies: config.publicUrl.startsWith('https:'),
        origin: () => services.urls.origin,
      });
      await api.register(webhooksRoutes, { webhooks });
      await api.register(releasesRoutes, { module: releasesModule });
      await api.register(vaultRoutes, { vault: services.vault });
      await api.register(distributionRoutes, { ...distribution, counters, installedBase });
      await api.register(ordersRoutes, { orders });
      await api.register(refundsRoutes, { refunds });
      await api.register(invoicesRoutes, { invoices: services.invoices });
      await api.register(testDataRoutes, { testData: services.testData });
      await api.register(stripeRoutes, { stripe: services.stripe });
      await api.register(stripeAccountRoutes, { stripe: services.stripe });
      await api.register(subscriptionsRoutes, { subscriptions, orders });
      await api.register(auditRoutes, { audit });
      await api.register(reportsRoutes, { reports, installedBaseReport });
      await api.register(taxRoutes, { report: services.tax.report });
      await api.register(mediaRoutes, { media, catalogue, settings });
      await api.register(mailRoutes, { mail, mailTest: services.mailTest });
      await api.register(importJobsRoutes, { jobs: services.importJobs });
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
  // The compatibility API of the updaters already in the field, at the old store's address
  // (docs/migrating.md, 'Sites already in the field').
  await app.register(legacyRoutes, { legacy: services.legacy });
  await app.register(lmfwcRoutes, { lmfwc: services.lmfwc });
  // The legacy catalogue's public uploads folder, served like a web server's (docs/releases.md).
  await app.register(publicUploadsRoutes, { uploadsDir: releasesModule.storage.uploadsDir });
  // The customer's pages (sign in, approve an activation, My licenses) live outside /v1.
  await app.register(customerPages, {
    accounts,
    licenses,
    transfers: services.transfers,
    activations,
    oauth,
    settings,
    catalogue,
    releases: services.releases,
    media,
    payments,
    orders,
    upgrades: services.licenseUpgrades,
    invoices: services.invoices,
    subscriptions,
    renewals: services.licenseRenewals,
    stripe: services.stripe,
    downloads: services.distribution.account,
    legacy: eddHandler(services.legacy),
    origin: () => services.urls.origin,
    mailAvailable: () => mail.available(),
    secureCookies: config.publicUrl.startsWith('https:'),
  });
  // The store owner's console, a single-page app on the /v1 API (docs/admin.md).
  await app.register(adminConsole, { dir: adminDir });
  return app as unknown as App;
}
