import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { TaxReportRepository } from './report.repository.js';
import { TaxReportService } from './report.service.js';
import { ViesClient } from './vat.js';

export type { TaxReportService } from './report.service.js';
export type { ViesClient } from './vat.js';

export interface TaxModule {
  /** Checks business buyers' VAT numbers with VIES (docs/taxes.md, 'VAT numbers'). */
  vies: ViesClient;
  /** The quarter's tax per country and rate (docs/taxes.md, 'The tax report'). */
  report: TaxReportService;
}

/** Builds the tax module: VAT numbers, the evidence of location, the tax report (docs/taxes.md). */
export function createTax(deps: { db: Kysely<DB>; viesUrl: string; viesTimeoutMs: number }): TaxModule {
  return {
    vies: new ViesClient(deps.viesUrl, deps.viesTimeoutMs),
    report: new TaxReportService(new TaxReportRepository(deps.db)),
  };
}
