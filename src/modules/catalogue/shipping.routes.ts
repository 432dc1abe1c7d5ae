import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { NoQuery, Success } from './catalogue.schemas.js';
import { ShippingZoneBody, ShippingZonePatchBody, ShippingZoneResponse } from './shipping.schemas.js';
import type { ShippingService } from './shipping.service.js';

const tags = ['shipping'];

export async function shippingRoutes(app: App, opts: { shipping: ShippingService }) {
  const { shipping } = opts;

  app.post(
    '/shipping-zones',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Create a shipping zone with its regions and methods',
        body: ShippingZoneBody,
        response: { 201: ShippingZoneResponse, ...errors(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send(await shipping.create(request.body, actorOf(request))),
  );

  app.get(
    '/shipping-zones',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Every shipping zone, in creation order',
        querystring: NoQuery,
        response: { 200: Type.Array(ShippingZoneResponse), ...errors(400, 401, 403) },
      },
    },
    () => shipping.list(),
  );

  app.patch(
    '/shipping-zones/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Change a shipping zone: its name, or its regions or methods replaced whole',
        params: IdParams,
        body: ShippingZonePatchBody,
        response: { 200: ShippingZoneResponse, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => shipping.update(request.params.id, request.body, actorOf(request)),
  );

  app.delete(
    '/shipping-zones/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Delete a shipping zone',
        params: IdParams,
        response: { 200: Success, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await shipping.delete(request.params.id, actorOf(request));
      return { success: true };
    },
  );
}
