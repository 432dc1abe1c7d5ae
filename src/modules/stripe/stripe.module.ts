import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { RefundsService } from '../orders/refunds.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { StripeRepository } from './stripe.repository.js';
import { StripeService } from './stripe.service.js';

export type { StripeService } from './stripe.service.js';

/** Builds the Stripe gateway; src/wiring.ts adds its gateway to the orders module's. */
export function createStripe(deps: {
  database: Database;
  settings: SettingsService;
  orders: OrdersService;
  refunds: RefundsService;
  catalogue: CatalogueService;
  clock: Clock;
  /** STRIPE_API_URL: a stand-in for Stripe's API in tests; null = Stripe's own. */
  apiUrl: string | null;
  log: FastifyBaseLogger;
}): StripeService {
  return new StripeService(
    deps.database,
    new StripeRepository(deps.database.db),
    deps.settings,
    deps.orders,
    deps.refunds,
    deps.catalogue,
    deps.clock,
    deps.apiUrl,
    deps.log,
  );
}
