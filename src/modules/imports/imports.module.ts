import type { FastifyBaseLogger } from 'fastify';
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
import { ImportJobsRepository } from './import-jobs.repository.js';
import { ImportJobService } from './import-jobs.service.js';
import { LicensesImport } from './import-licenses.js';
import { ImportMap } from './import-map.js';
import { PeopleImport } from './import-people.js';
import { ReleasesImport } from './import-releases.js';
import { SalesImport } from './import-sales.js';
import { ImportsRepository } from './imports.repository.js';
import { ImportService } from './imports.service.js';
import { openSource } from './sources.js';

export type { ImportJobService } from './import-jobs.service.js';
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
  const map = new ImportMap(deps.database, new ImportsRepository(deps.database), deps.clock);
  return new ImportService(
    deps.database,
    {
      people: new PeopleImport(deps.database, map, deps.accounts, deps.catalogue, deps.stripe, deps.settings),
      releases: new ReleasesImport(deps.database, map, deps.publishing, deps.maxUploadBytes),
      sales: new SalesImport(
        map,
        deps.orders,
        deps.subscriptions,
        deps.stripe,
        deps.catalogue,
        deps.settings,
        deps.clock,
      ),
      licenses: new LicensesImport(deps.database, map, deps.licenses, deps.clock),
    },
    deps.audit,
  );
}

/** Builds the import jobs the console starts (docs/migrating.md, 'From the console'). */
export function createImportJobs(deps: {
  database: Database;
  imports: ImportService;
  audit: AuditService;
  clock: Clock;
  log: FastifyBaseLogger;
  /** The folders a csv or freemius job may read; the first is where a relative folder is taken from. */
  roots: string[];
}): ImportJobService {
  return new ImportJobService(
    deps.database,
    new ImportJobsRepository(deps.database),
    deps.imports,
    deps.audit,
    deps.clock,
    deps.log,
    { roots: deps.roots, open: openSource },
  );
}
