import { Type } from 'typebox';
import { requireUser } from '../../http/auth.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { fromMinor } from '../catalogue/money.js';
import type { RenewalService } from './license-renewals.service.js';
import type { OrderRow } from './orders.model.js';

const RenewalOrder = Type.Object({
  order_id: Type.Integer(),
  order_key: Type.String({ description: 'With the id, what pay-order and the receipt take' }),
  status: Type.String(),
  currency: Type.String(),
  total: Type.String({ description: 'The price less renewal_discount_percent' }),
  license_id: Type.Integer(),
});

/** The answer of a route that makes an order acting on a license (its renewal, its move). */
export const licenseOrderAnswer = (order: OrderRow, licenseId: number) => ({
  order_id: order.id,
  order_key: order.order_key,
  status: order.status,
  currency: order.currency,
  total: fromMinor(Number(order.total), order.decimals),
  license_id: licenseId,
});

/** Buying the renewal of a term license (docs/selling.md, 'Buying a renewal'). */
export async function renewalRoutes(app: App, opts: { renewals: RenewalService }) {
  app.post(
    '/account/licenses/:id/renewal-order',
    {
      preValidation: requireUser,
      schema: {
        tags: ['licensing'],
        summary: 'Create a pending order renewing one of my term licenses; paying it extends the license',
        params: IdParams,
        response: { 201: RenewalOrder, ...errors(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const order = await opts.renewals.createOrder(request.params.id, request.user!.id);
      return reply.code(201).send(licenseOrderAnswer(order, request.params.id));
    },
  );
}
