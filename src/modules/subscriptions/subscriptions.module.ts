import type { FastifyBaseLogger } from 'fastify';
import type { Clock, TestClock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { AuditService } from '../audit/audit.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { Outbox } from '../webhooks/outbox.js';
import { RenewalWorker } from './renewal.worker.js';
import { SubscriptionsRepository } from './subscriptions.repository.js';
import { SubscriptionsService } from './subscriptions.service.js';

export type { RenewalWorker } from './renewal.worker.js';
export type { SubscriptionsService } from './subscriptions.service.js';

export interface SubscriptionsModule {
  subscriptions: SubscriptionsService;
  /** Creates renewal orders when payments fall due; started when the server listens. */
  renewals: RenewalWorker;
}

/** Builds the subscriptions module and its renewal worker. */
export function createSubscriptions(deps: {
  database: Database;
  orders: OrdersService;
  catalogue: CatalogueService;
  accounts: Pick<AccountsService, 'getUser'>;
  settings: SettingsService;
  outbox: Outbox;
  clock: Clock;
  testClock: TestClock | null;
  log: FastifyBaseLogger;
  audit: AuditService;
}): SubscriptionsModule {
  const subscriptions = new SubscriptionsService(
    deps.database,
    new SubscriptionsRepository(deps.database.db, deps.database.dialect),
    deps.orders,
    deps.catalogue,
    deps.accounts,
    deps.settings,
    deps.outbox,
    deps.clock,
    deps.audit,
  );
  return { subscriptions, renewals: new RenewalWorker(subscriptions, deps.testClock, deps.log) };
}
