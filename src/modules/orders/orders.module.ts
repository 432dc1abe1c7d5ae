import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { AuditService } from '../audit/audit.module.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { Gateways } from './gateways.js';
import { OrdersRepository } from './orders.repository.js';
import { OrdersService } from './orders.service.js';
import { RefundsRepository } from './refunds.repository.js';
import { RefundsService } from './refunds.service.js';

export type { OrdersService } from './orders.service.js';
export type { RefundsService } from './refunds.service.js';

export interface OrdersModule {
  /** Orders, their stock and coupon claims, status changes and license issuance on payment. */
  orders: OrdersService;
  /** Refunds and order notes (docs/payments.md); what a full refund does elsewhere is wired in src/wiring.ts. */
  refunds: RefundsService;
}

/** Builds the orders module; what runs when an order is paid (`onPaid`) is wired in src/wiring.ts. */
export function createOrders(deps: {
  database: Database;
  catalogue: CatalogueService;
  licenses: LicenseService;
  settings: SettingsService;
  clock: Clock;
  /** Records the administrator's status changes (docs/admin.md, 'Audit trail'). */
  audit: AuditService;
}): OrdersModule {
  const repo = new OrdersRepository(deps.database.db, deps.database.dialect);
  const refundsRepo = new RefundsRepository(deps.database.db);
  const gateways = new Gateways();
  return {
    orders: new OrdersService(
      deps.database,
      repo,
      deps.catalogue,
      deps.licenses,
      deps.settings,
      deps.clock,
      deps.audit,
      refundsRepo,
      gateways,
    ),
    refunds: new RefundsService(
      deps.database,
      repo,
      refundsRepo,
      deps.licenses,
      deps.settings,
      deps.clock,
      deps.audit,
      gateways,
    ),
  };
}
