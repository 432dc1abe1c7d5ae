import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { AppSecrets } from '../../db/app-secrets.js';
import type { Database } from '../../db/database.js';
import { DailyCounters } from './counters.js';
import { FieldReports } from './field.js';
import { FieldRepository } from './field.repository.js';
import { FieldService } from './field.service.js';
import { ReportsRepository } from './reports.repository.js';
import { ReportsService } from './reports.service.js';

export type { CounterKind, DailyCounters } from './counters.js';
export type { FieldInput, FieldReports } from './field.js';
export type { FieldService } from './field.service.js';
export type { ReportsService } from './reports.service.js';

export interface ReportsModule {
  reports: ReportsService;
  /** Counted by the update check and download routes; flushed on a timer and on close. */
  counters: DailyCounters;
  /** What sites run, seen by the update check and validate; flushed on a timer and on close. */
  field: FieldReports;
  /** A product's field report (docs/admin.md, 'In the field'). */
  fieldReport: FieldService;
}

/** Builds the dashboard's report, the update check and download counters and the field report (docs/admin.md). */
export function createReports(deps: {
  database: Database;
  clock: Clock;
  log: FastifyBaseLogger;
  secrets: AppSecrets;
  products: { requireProduct(id: number): Promise<unknown> };
}): ReportsModule {
  const repo = new ReportsRepository(deps.database.db);
  const fieldRepo = new FieldRepository(deps.database.db);
  const field = new FieldReports(deps.database, fieldRepo, deps.clock, deps.secrets, deps.log);
  return {
    reports: new ReportsService(repo, deps.clock),
    counters: new DailyCounters(repo, deps.clock, deps.log),
    field,
    fieldReport: new FieldService(fieldRepo, field, deps.clock, deps.products),
  };
}
