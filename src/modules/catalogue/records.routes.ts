import type { Static, TSchema } from 'typebox';
import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { ValidationCodes } from '../../http/validation.js';
import { type Actor, actorOf } from '../audit/audit.model.js';
import { NoQuery, type PageQuery, Success } from './catalogue.schemas.js';
import { paginate } from './pagination.js';

type Id<Params extends TSchema> = Static<Params> extends { id: infer I } ? I : never;

/** One route of a record kind: its OpenAPI summary and the service call it makes. */
interface Route<Run> {
  summary: string;
  /** The route also answers 409 (a unique value taken, or a change the record's state refuses). */
  conflict?: boolean;
  run: Run;
}

/**
 * The owner's records of one kind (products, coupons, tax rates, shipping zones, payment gateways)
 * and the routes that manage them, each present when it is given: `POST path`, `GET path`,
 * `GET path/:id`, `PATCH path/:id` and `DELETE path/:id`.
 */
export interface RecordRoutes<
  Create extends TSchema,
  Patch extends TSchema,
  Query extends TSchema,
  Params extends TSchema,
> {
  /** The collection's path, e.g. `/coupons`. */
  path: string;
  tags: string[];
  /** The record as every route but delete answers it. */
  record: TSchema;
  /** What `:id` is (default a positive integer). */
  params?: Params;
  /** The specific codes of schema violations of the create and patch bodies. */
  validationCodes?: ValidationCodes;
  create?: Route<(body: Static<Create>, actor: Actor) => Promise<unknown>> & { body: Create };
  /**
   * The list: whole (its query `{}` by default), or one page of it, the totals then in the
   * X-WP-Total and X-WP-TotalPages headers (the query has `per_page`).
   */
  list?: Route<(query: Static<Query>) => Promise<unknown[] | { items: unknown[]; total: number }>> & {
    query?: Query;
  };
  get?: Route<(id: Id<Params>) => Promise<unknown>>;
  update?: Route<(id: Id<Params>, body: Static<Patch>, actor: Actor) => Promise<unknown>> & {
    body: Patch;
  };
  delete?: Route<(id: Id<Params>, actor: Actor) => Promise<void>>;
}

/**
 * Declares the routes of one record kind. Every one checks the administrator in preValidation,
 * before the body is validated, so a caller without the right learns nothing about the shapes it
 * would need.
 */
export function recordRoutes<
  Create extends TSchema,
  Patch extends TSchema,
  Query extends TSchema,
  Params extends TSchema = typeof IdParams,
>(app: App, r: RecordRoutes<Create, Patch, Query, Params>): void {
  const { tags, record } = r;
  const one = `${r.path}/:id`;
  const params = r.params ?? IdParams;
  const config = r.validationCodes ? { config: { validationCodes: r.validationCodes } } : {};
  // Fastify's type provider cannot resolve these generic schemas, so each handler names the types
  // they have already validated.
  const idOf = (request: { params: unknown }) => (request.params as { id: Id<Params> }).id;
  const statuses = (route: Route<unknown>, ...more: number[]) =>
    errors(400, 401, 403, ...more, ...(route.conflict ? [409] : []));

  const { create, list, get, update, delete: remove } = r;
  if (create)
    app.post(
      r.path,
      {
        preValidation: requireAdmin,
        ...config,
        schema: {
          tags,
          summary: create.summary,
          body: create.body,
          response: { 201: record, ...statuses(create) },
        },
      },
      async (request, reply) =>
        reply.status(201).send(await create.run(request.body as Static<Create>, actorOf(request))),
    );

  if (list)
    app.get(
      r.path,
      {
        preValidation: requireAdmin,
        schema: {
          tags,
          summary: list.summary,
          querystring: list.query ?? NoQuery,
          response: { 200: Type.Array(record), ...statuses(list) },
        },
      },
      async (request, reply) => {
        const query = request.query as Static<Query>;
        const found = await list.run(query);
        return Array.isArray(found) ? found : paginate(reply, found, (query as PageQuery).per_page);
      },
    );

  if (get)
    app.get(
      one,
      {
        preValidation: requireAdmin,
        schema: { tags, summary: get.summary, params, response: { 200: record, ...statuses(get, 404) } },
      },
      (request) => get.run(idOf(request)),
    );

  if (update)
    app.patch(
      one,
      {
        preValidation: requireAdmin,
        ...config,
        schema: {
          tags,
          summary: update.summary,
          params,
          body: update.body,
          response: { 200: record, ...statuses(update, 404) },
        },
      },
      (request) => {
        return update.run(idOf(request), request.body as Static<Patch>, actorOf(request));
      },
    );

  if (remove)
    app.delete(
      one,
      {
        preValidation: requireAdmin,
        schema: {
          tags,
          summary: remove.summary,
          params,
          response: { 200: Success, ...statuses(remove, 404) },
        },
      },
      async (request) => {
        await remove.run(idOf(request), actorOf(request));
        return { success: true };
      },
    );
}
