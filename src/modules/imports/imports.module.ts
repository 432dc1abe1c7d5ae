import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { AuditService } from '../audit/audit.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { PublishingService } from '../releases/publishing.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { StripeService } from '../stripe/stripe.service.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { ImportsRepository } from './imports.repository.js';
import { ImportService } from './imports.service.js';

export type { ImportReport, ImportService } from './imports.service.js';

/** Builds the importer of other stores' records (docs/migrating.md, 'Importing'). */
export function createImports(deps: {
  database: Database;
  accounts: AccountsService;
  catalogue: CatalogueService;
  licenses: LicenseService;
  orders: OrdersService;
  subscriptions: SubscriptionsService;
  stripe: StripeService;
  publishing: PublishingService;
  maxUploadBytes: number;
  settings: SettingsService;
  audit: AuditService;
  clock: Clock;
}): ImportService {
  return new ImportService(
    deps.database,
    new ImportsRepository(deps.database),
    deps.accounts,
    deps.catalogue,
    deps.licenses,
    deps.orders,
    deps.subscriptions,
    deps.stripe,
    deps.publishing,
    deps.maxUploadBytes,
    deps.settings,
    deps.audit,
    deps.clock,
  );
}
