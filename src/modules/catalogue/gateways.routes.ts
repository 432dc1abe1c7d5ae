import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { NoQuery } from './catalogue.schemas.js';
import { GatewayParams, GatewayPatchBody, GatewayResponse } from './gateways.schemas.js';
import type { GatewaysService } from './gateways.service.js';

const tags = ['gateways'];

export async function gatewaysRoutes(app: App, opts: { gateways: GatewaysService }) {
  const { gateways } = opts;

  app.get(
    '/payment-gateways',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'The built-in payment gateways',
        querystring: NoQuery,
        response: { 200: Type.Array(GatewayResponse), ...errors(400, 401, 403) },
      },
    },
    () => gateways.list(),
  );

  app.patch(
    '/payment-gateways/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary:
          'Switch a gateway on or off, limit its currencies (empty list = all), set its payment instructions',
        params: GatewayParams,
        body: GatewayPatchBody,
        response: { 200: GatewayResponse, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => gateways.update(request.params.id, request.body, actorOf(request)),
  );
}
