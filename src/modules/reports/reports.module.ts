import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { AppSecrets } from '../../db/app-secrets.js';
import type { Database } from '../../db/database.js';
import { DailyCounters } from './counters.js';
import { InstalledBase } from './installed-base.js';
import { InstalledBaseRepository } from './installed-base.repository.js';
import { InstalledBaseService } from './installed-base.service.js';
import { ReportsRepository } from './reports.repository.js';
import { ReportsService } from './reports.service.js';

export type { CounterKind, DailyCounters } from './counters.js';
export type { InstalledBase, SiteFacts } from './installed-base.js';
export type { InstalledBaseService } from './installed-base.service.js';
export type { ReportsService } from './reports.service.js';

export interface ReportsModule {
  reports: ReportsService;
  /** Counted by the update check and download routes; flushed on a timer and on close. */
  counters: DailyCounters;
  /** What sites run, seen by the update check and validate; flushed on a timer and on close. */
  installedBase: InstalledBase;
  /** A product's installed-base report (docs/admin.md, 'In the field'). */
  installedBaseReport: InstalledBaseService;
}

/** Builds the dashboard's report, the update check and download counters and the installed-base report (docs/admin.md). */
export function createReports(deps: {
  database: Database;
  clock: Clock;
  log: FastifyBaseLogger;
  secrets: AppSecrets;
  products: { requireProduct(id: number): Promise<unknown> };
}): ReportsModule {
  const repo = new ReportsRepository(deps.database.db);
  const installedBaseRepo = new InstalledBaseRepository(deps.database.db);
  const installedBase = new InstalledBase(
    deps.database,
    installedBaseRepo,
    deps.clock,
    deps.secrets,
    deps.log,
  );
  return {
    reports: new ReportsService(repo, deps.clock),
    counters: new DailyCounters(repo, deps.clock, deps.log),
    installedBase,
    installedBaseReport: new InstalledBaseService(
      installedBaseRepo,
      installedBase,
      deps.clock,
      deps.products,
    ),
  };
}
