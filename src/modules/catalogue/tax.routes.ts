import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { NoQuery, Success } from './catalogue.schemas.js';
import { TaxRateBody, TaxRatePatchBody, TaxRateResponse } from './tax.schemas.js';
import type { TaxService } from './tax.service.js';

const tags = ['tax'];

const validationCodes = { invalid: { country: 'invalid_country', rate: 'invalid_tax_rate' } } as const;

export async function taxRoutes(app: App, opts: { tax: TaxService }) {
  const { tax } = opts;

  app.post(
    '/tax-rates',
    {
      preValidation: requireAdmin,
      config: { validationCodes },
      schema: {
        tags,
        summary: 'Create a tax rate for a country (and optionally a state and postcodes)',
        body: TaxRateBody,
        response: { 201: TaxRateResponse, ...errors(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send(await tax.create(request.body, actorOf(request))),
  );

  app.get(
    '/tax-rates',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Every tax rate, by priority',
        querystring: NoQuery,
        response: { 200: Type.Array(TaxRateResponse), ...errors(400, 401, 403) },
      },
    },
    () => tax.list(),
  );

  app.patch(
    '/tax-rates/:id',
    {
      preValidation: requireAdmin,
      config: { validationCodes },
      schema: {
        tags,
        summary: "Change any of a tax rate's fields (checked as on create)",
        params: IdParams,
        body: TaxRatePatchBody,
        response: { 200: TaxRateResponse, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => tax.update(request.params.id, request.body, actorOf(request)),
  );

  app.delete(
    '/tax-rates/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Delete a tax rate',
        params: IdParams,
        response: { 200: Success, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await tax.delete(request.params.id, actorOf(request));
      return { success: true };
    },
  );
}
