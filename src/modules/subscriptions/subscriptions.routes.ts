import { Type } from 'typebox';
import { requireAdmin, requireUser } from '../../http/auth.js';
import { errors, IdParams, PlainText } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { Order } from '../orders/orders.schemas.js';
import type { OrdersService } from '../orders/orders.service.js';
import { SUBSCRIPTION_STATUSES } from './subscriptions.model.js';
import { SubscriptionListItem, SubscriptionListQuery, SubscriptionView } from './subscriptions.schemas.js';
import type { SubscriptionsService } from './subscriptions.service.js';

const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });
const Status = Type.Union(SUBSCRIPTION_STATUSES.map((s) => Type.Literal(s)));
const CreateBody = Type.Object(
  {
    user_id: Id,
    product_id: Id,
    variation_id: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647 })),
    status: Type.Optional(Status),
    next_payment_at: Type.Optional(Type.Union([Type.Null(), Type.String({ format: 'date-time' })])),
  },
  { additionalProperties: false },
);
const StatusBody = Type.Object(
  { status: Status, reason: Type.Optional(PlainText({ maxLength: 500 })) },
  { additionalProperties: false },
);
const tags = ['subscriptions'];

/** Subscription administration (docs/checkout.md, 'Routes' and 'Subscriptions and renewals'). */
export async function subscriptionsRoutes(
  app: App,
  opts: { subscriptions: SubscriptionsService; orders: OrdersService },
) {
  const { subscriptions, orders } = opts;

  app.post(
    '/subscriptions',
    {
      preValidation: requireAdmin,
      schema: { tags, summary: 'Create a subscription (administrator)', body: CreateBody },
    },
    async (request, reply) =>
      reply.status(201).send(await subscriptions.create(request.body, actorOf(request))),
  );

  app.get(
    '/subscriptions',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary:
          'List subscriptions (administrator), newest first; X-WP-Total and X-WP-TotalPages carry the totals',
        querystring: SubscriptionListQuery,
        response: { 200: Type.Array(SubscriptionListItem), ...errors(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { page, per_page, ...query } = request.query;
      const list = await subscriptions.list(query, page, per_page);
      reply.header('X-WP-Total', String(list.total));
      reply.header('X-WP-TotalPages', String(Math.ceil(list.total / per_page)));
      return list.items;
    },
  );

  app.get(
    '/subscriptions/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'One subscription (administrator)',
        params: IdParams,
        response: { 200: SubscriptionView },
      },
    },
    async (request) => subscriptions.get(request.params.id),
  );

  app.post(
    '/subscriptions/:id/status',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Change the status; emits subscription.status_changed',
        params: IdParams,
        body: StatusBody,
        response: { 200: SubscriptionView },
      },
    },
    async (request) =>
      subscriptions.setStatus(
        request.params.id,
        request.body.status,
        request.body.reason ?? '',
        actorOf(request),
      ),
  );

  app.post(
    '/subscriptions/:id/renewal-orders',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Create the pending renewal order of the due payment',
        params: IdParams,
        response: { 201: Order },
      },
    },
    async (request, reply) => {
      const order = await subscriptions.createRenewalOrder(request.params.id, actorOf(request));
      return reply.status(201).send(await orders.get(order.id));
    },
  );

  app.get(
    '/account/subscriptions',
    { preValidation: requireUser, schema: { tags, summary: "The signed-in customer's subscriptions" } },
    async (request) => subscriptions.listForUser(request.user!.id),
  );

  app.post(
    '/account/subscriptions/:id/cancel',
    {
      preValidation: requireUser,
      schema: {
        tags,
        summary: 'Cancel as the customer: pending-cancel while a paid period remains, else cancelled',
        params: IdParams,
      },
    },
    async (request) => subscriptions.cancelByCustomer(request.params.id, request.user!.id),
  );
}
