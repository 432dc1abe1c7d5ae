import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { type Actor, diff } from '../audit/audit.model.js';
import type { AuditService, ChangeRecorder } from '../audit/audit.service.js';
import { requireCountry } from './countries.js';
import { canonicalDecimal, decimalWithin } from './money.js';
import type { RuleRow, RulesRepository } from './rules.repository.js';
import type { TaxRateBody, TaxRatePatchBody } from './tax.schemas.js';

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
  /** Records an administrator's change in its transaction (docs/admin.md, 'Audit trail'). */
  private readonly recordIn: ChangeRecorder;

  constructor(
    private readonly repo: RulesRepository<'tax_rates'>,
    private readonly database: Pick<Database, 'db'>,
    audit: AuditService,
  ) {
    this.recordIn = audit.recorderOf('tax_rate');
  }

  /** Every rate, by priority then creation: what the cart's tax calculation reads. */
  async list(): Promise<TaxRate[]> {
    return (await this.repo.list()).map(toTaxRate);
  }

  async create(input: TaxRateBody, actor?: Actor): Promise<TaxRate> {
    const values = normalise(input);
    return withTransaction(this.database, async (tx) => {
      const rate = toTaxRate(await this.repo.insert(values, tx));
      await this.recordIn(actor, rate.id, 'create', diff({}, editable(rate)), tx);
      return rate;
    });
  }

  /**
   * The patch is merged onto the stored rate and the whole checked as a create is, so a rate can
   * never be saved in a shape create would refuse.
   */
  async update(id: number, patch: TaxRatePatchBody, actor?: Actor): Promise<TaxRate> {
    return withTransaction(this.database, async (tx) => {
      const row = await this.repo.find(id, tx);
      if (!row) throw new ApiError('tax_rate_not_found');
      const before = toTaxRate(row);
      const values = normalise({ ...before, ...patch });
      const updated = await this.repo.update(id, values, tx);
      if (!updated) throw new ApiError('tax_rate_not_found');
      const after = toTaxRate(updated);
      await this.recordIn(actor, id, 'update', diff(editable(before), editable(after)), tx);
      return after;
    });
  }

  async delete(id: number, actor?: Actor): Promise<void> {
    await withTransaction(this.database, async (tx) => {
      const row = await this.repo.find(id, tx);
      if (!row || !(await this.repo.delete(id, tx))) throw new ApiError('tax_rate_not_found');
      await this.recordIn(actor, id, 'delete', diff(editable(toTaxRate(row)), {}, ['name']), tx);
    });
  }
}

function normalise(input: TaxRateBody) {
  requireCountry(input.country);
  const rate = canonicalDecimal(input.rate, 4);
  if (rate === null || !decimalWithin(rate, '0', '100')) throw new ApiError('invalid_tax_rate');
  return {
    country: input.country,
    state: input.state ?? '',
    postcode: input.postcode ?? '',
    rate,
    name: input.name,
    // Most jurisdictions tax shipping too, so a rate applies to it unless told otherwise.
    shipping: input.shipping === false ? 0 : 1,
    compound: input.compound ? 1 : 0,
    priority: input.priority ?? 1,
  };
}

/** The fields an administrator sets (the audit trail's before and after). */
function editable(rate: TaxRate): Record<string, unknown> {
  const { id: _, ...fields } = rate;
  return fields;
}

function toTaxRate(row: RuleRow<'tax_rates'>): TaxRate {
  return { ...row, shipping: row.shipping === 1, compound: row.compound === 1 };
}
