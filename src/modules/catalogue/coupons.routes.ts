import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { PageQuery, Success } from './catalogue.schemas.js';
import { CouponCreateBody, CouponPatchBody, CouponResponse } from './coupons.schemas.js';
import type { CouponsService } from './coupons.service.js';
import { paginate } from './pagination.js';

const tags = ['coupons'];

export async function couponsRoutes(app: App, opts: { coupons: CouponsService }) {
  const { coupons } = opts;

  app.post(
    '/coupons',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Create a coupon; the code is stored lower-case and must be unique',
        body: CouponCreateBody,
        response: { 201: CouponResponse, ...errors(400, 401, 403, 409) },
      },
    },
    async (request, reply) => reply.status(201).send(await coupons.create(request.body, actorOf(request))),
  );

  app.get(
    '/coupons',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'List coupons, newest first',
        querystring: PageQuery,
        response: { 200: Type.Array(CouponResponse), ...errors(400, 401, 403) },
      },
    },
    async (request, reply) => paginate(reply, await coupons.list(request.query), request.query.per_page),
  );

  app.get(
    '/coupons/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'One coupon',
        params: IdParams,
        response: { 200: CouponResponse, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => coupons.get(request.params.id),
  );

  app.patch(
    '/coupons/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Change any coupon fields (not its usage count)',
        params: IdParams,
        body: CouponPatchBody,
        response: { 200: CouponResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    (request) => coupons.update(request.params.id, request.body, actorOf(request)),
  );

  app.delete(
    '/coupons/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Delete a coupon',
        params: IdParams,
        response: { 200: Success, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await coupons.delete(request.params.id, actorOf(request));
      return { success: true };
    },
  );
}
