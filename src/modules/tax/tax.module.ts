import { ViesClient } from './vat.js';

export type { ViesClient } from './vat.js';

export interface TaxModule {
  /** Checks business buyers' VAT numbers with VIES (docs/taxes.md, 'VAT numbers'). */
  vies: ViesClient;
}

/** Builds the tax module: VAT numbers, the evidence of location, the tax report (docs/taxes.md). */
export function createTax(deps: { viesUrl: string; viesTimeoutMs: number }): TaxModule {
  return { vies: new ViesClient(deps.viesUrl, deps.viesTimeoutMs) };
}
