import type { FastifyBaseLogger } from 'fastify';
import type { Clock, TestClock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { OutboxWorker } from '../../outbox/worker.js';
import type { AuditService } from '../audit/audit.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { RefundsService } from '../orders/refunds.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { type RenewalChargeRow, StripeRepository } from './stripe.repository.js';
import { StripeService } from './stripe.service.js';

export type { StripeService } from './stripe.service.js';

/** Charges kept cards for renewal orders (docs/payments.md, 'Renewals'); started when the server listens. */
export type RenewalChargeWorker = OutboxWorker<RenewalChargeRow, true>;

export interface StripeModule {
  stripe: StripeService;
  renewalCharges: RenewalChargeWorker;
}

/** A claim outlives a Stripe request with its one retry (20 s each). */
const LEASE_MS = 60_000;

/** Builds the Stripe gateway and its renewal charges' worker; src/wiring.ts adds its gateway to the orders module's. */
export function createStripe(deps: {
  database: Database;
  settings: SettingsService;
  orders: OrdersService;
  refunds: RefundsService;
  catalogue: CatalogueService;
  subscriptions: SubscriptionsService;
  audit: AuditService;
  clock: Clock;
  testClock: TestClock | null;
  /** STRIPE_API_URL: a stand-in for Stripe's API in tests; null = Stripe's own. */
  apiUrl: string | null;
  log: FastifyBaseLogger;
}): StripeModule {
  const repo = new StripeRepository(deps.database);
  const stripe = new StripeService(
    deps.database,
    repo,
    deps.settings,
    deps.orders,
    deps.refunds,
    deps.catalogue,
    deps.subscriptions,
    deps.audit,
    deps.clock,
    deps.apiUrl,
    deps.log,
  );
  const renewalCharges = new OutboxWorker<RenewalChargeRow, true>(
    {
      name: 'Stripe renewal charges',
      maxInFlight: 2,
      leaseMs: LEASE_MS,
      // Without the secret key the charges wait, as mail waits for its server.
      beforeTick: async () => ((await stripe.canCharge()) ? true : null),
      claim: (now, leaseUntil, limit) => repo.outbox.claimDue(now, leaseUntil, limit),
      handle: (row, leaseUntil, _batch, signal) => stripe.chargeRenewal(row, leaseUntil, signal),
      release: (row, leaseUntil) => repo.outbox.release(row.id, leaseUntil),
      describe: (row) => ({ renewal_charge_id: row.id, order_id: row.order_id }),
    },
    { clock: deps.clock, testClock: deps.testClock, log: deps.log },
  );
  return { stripe, renewalCharges };
}
