import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { AuditService } from '../audit/audit.module.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { OrdersRepository } from './orders.repository.js';
import { OrdersService } from './orders.service.js';

export type { OrdersService } from './orders.service.js';

export interface OrdersModule {
  /** Orders, their stock and coupon claims, status changes and license issuance on payment. */
  orders: OrdersService;
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
  return {
    orders: new OrdersService(
      deps.database,
      repo,
      deps.catalogue,
      deps.licenses,
      deps.settings,
      deps.clock,
      deps.audit,
    ),
  };
}
