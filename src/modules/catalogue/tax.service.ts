import { ApiError } from '../../http/errors.js';
import { requireCountry } from './countries.js';
import { canonicalDecimal, decimalWithin } from './money.js';
import type { RuleRow, RulesRepository } from './rules.repository.js';
import type { TaxRateBody } from './tax.schemas.js';

export interface TaxRate {
  id: number;
  country: string;
  /** "" = the whole country. */
  state: string;
  /** "" = every postcode. */
  postcode: string;
  /** Percent with exactly four places, e.g. "20.0000". */
  rate: string;
  name: string;
  shipping: boolean;
  compound: boolean;
  priority: number;
}

export class TaxService {
  constructor(private readonly repo: RulesRepository<'tax_rates'>) {}

  /** Every rate, by priority then creation: what the cart's tax calculation reads. */
  async list(): Promise<TaxRate[]> {
    return (await this.repo.list()).map(toTaxRate);
  }

  async create(input: TaxRateBody): Promise<TaxRate> {
    requireCountry(input.country);
    const rate = canonicalDecimal(input.rate, 4);
    if (rate === null || !decimalWithin(rate, '0', '100')) throw new ApiError('invalid_tax_rate');
    const row = await this.repo.insert({
      country: input.country,
      state: input.state ?? '',
      postcode: input.postcode ?? '',
      rate,
      name: input.name,
      // Most jurisdictions tax shipping too, so a rate applies to it unless told otherwise.
      shipping: input.shipping === false ? 0 : 1,
      compound: input.compound ? 1 : 0,
      priority: input.priority ?? 1,
    });
    return toTaxRate(row);
  }

  async delete(id: number): Promise<void> {
    if (!(await this.repo.delete(id))) throw new ApiError('tax_rate_not_found');
  }
}

function toTaxRate(row: RuleRow<'tax_rates'>): TaxRate {
  return { ...row, shipping: row.shipping === 1, compound: row.compound === 1 };
}
