import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { DailyCounters } from './counters.js';
import { ReportsRepository } from './reports.repository.js';
import { ReportsService } from './reports.service.js';

export type { CounterKind, DailyCounters } from './counters.js';
export type { ReportsService } from './reports.service.js';

export interface ReportsModule {
  reports: ReportsService;
  /** Counted by the update check and download routes; flushed on a timer and on close. */
  counters: DailyCounters;
}

/** Builds the dashboard's report and the update check and download counters (docs/admin.md, 'Dashboard'). */
export function createReports(deps: {
  database: Database;
  clock: Clock;
  log: FastifyBaseLogger;
}): ReportsModule {
  const repo = new ReportsRepository(deps.database.db);
  return {
    reports: new ReportsService(repo, deps.clock),
    counters: new DailyCounters(repo, deps.clock, deps.log),
  };
}
