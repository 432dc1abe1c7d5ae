import type { App } from '../../http/types.js';
import { recordRoutes } from './records.routes.js';
import { TaxRateBody, TaxRatePatchBody, TaxRateResponse } from './tax.schemas.js';
import type { TaxService } from './tax.service.js';

export async function taxRoutes(app: App, opts: { tax: TaxService }) {
  const { tax } = opts;
  recordRoutes(app, {
    path: '/tax-rates',
    tags: ['tax'],
    record: TaxRateResponse,
    validationCodes: { invalid: { country: 'invalid_country', rate: 'invalid_tax_rate' } },
    create: {
      summary: 'Create a tax rate for a country (and optionally a state and postcodes)',
      body: TaxRateBody,
      run: (body, actor) => tax.create(body, actor),
    },
    list: { summary: 'Every tax rate, by priority', run: () => tax.list() },
    update: {
      summary: "Change any of a tax rate's fields (checked as on create)",
      body: TaxRatePatchBody,
      run: (id, body, actor) => tax.update(id, body, actor),
    },
    delete: { summary: 'Delete a tax rate', run: (id, actor) => tax.delete(id, actor) },
  });
}
