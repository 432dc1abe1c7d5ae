import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { Order } from './orders.schemas.js';
import { ORDER_STATUSES, type OrdersService, SETTABLE_STATUSES } from './orders.service.js';

const Status = Type.Union(ORDER_STATUSES.map((s) => Type.Literal(s)));
const StatusBody = Type.Object(
  { status: Type.Union(SETTABLE_STATUSES.map((s) => Type.Literal(s))) },
  { additionalProperties: false },
);
// Unknown parameters are refused: a misspelt filter must not answer every order.
const ListQuery = Type.Object(
  {
    customer_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
    subscription_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2147483647,
        description: "The subscription's renewal orders; the order that started it is its parent_order_id",
      }),
    ),
    status: Type.Optional(Status),
    test: Type.Optional(
      Type.Boolean({
        description:
          "true: only orders placed in test mode; false: only real ones (docs/payments.md, 'Test mode and live mode')",
      }),
    ),
    sort: Type.Optional(
      Type.Union([Type.Literal('id'), Type.Literal('total')], {
        description: 'id (the default) is the order of creation; ties are broken by id',
      }),
    ),
    order: Type.Optional(
      Type.Union([Type.Literal('asc'), Type.Literal('desc')], {
        description: 'desc (the default): newest first, or largest total first',
      }),
    ),
    page: Type.Integer({ minimum: 1, maximum: 100000, default: 1 }),
    per_page: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  },
  { additionalProperties: false },
);
const tags = ['orders'];

/**
 * Order administration (docs/checkout.md, 'Routes'): read orders, move an offline-paid order on.
 */
export async function ordersRoutes(app: App, opts: { orders: OrdersService }) {
  const { orders } = opts;

  app.get(
    '/orders',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary:
          'List orders (administrator), newest first unless sorted; X-WP-Total and X-WP-TotalPages carry the totals',
        querystring: ListQuery,
        response: { 200: Type.Array(Order) },
      },
    },
    async (request, reply) => {
      const { page, per_page, sort = 'id', order = 'desc', ...filter } = request.query;
      const { items, total } = await orders.list(filter, page, per_page, { by: sort, order });
      reply.header('X-WP-Total', String(total));
      reply.header('X-WP-TotalPages', String(Math.ceil(total / per_page)));
      return items;
    },
  );

  app.get(
    '/orders/:id',
    {
      preValidation: requireAdmin,
      schema: { tags, summary: 'One order (administrator)', params: IdParams, response: { 200: Order } },
    },
    async (request) => orders.get(request.params.id),
  );

  app.post(
    '/orders/:id/status',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: "Change an order's status (administrator); a paid status issues its licenses once",
        params: IdParams,
        body: StatusBody,
        response: { 200: Order },
      },
    },
    async (request) => orders.setStatus(request.params.id, request.body.status, actorOf(request)),
  );
}
