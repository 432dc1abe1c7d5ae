import { Type } from 'typebox';
import { requireAdmin, requireUser } from '../../http/auth.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import * as S from './transfer.schemas.js';
import type { Sender, TransferService } from './transfer.service.js';

const sender = (user: { id: number; email: string; role: string }): Sender => ({
  user_id: user.id,
  email: user.email,
  administrator: user.role === 'administrator',
});

/** License transfers (docs/selling.md, 'Transfers'): offered by the owner or the customer, accepted by the link. */
export async function transferRoutes(app: App, opts: { transfers: TransferService }) {
  const { transfers } = opts;

  // The owner offers any license and a customer one of their own, by the same call: the service
  // tells them apart by the sender.
  const offer = (path: string, preValidation: typeof requireUser, summary: string, statuses: number[]) =>
    app.post(
      path,
      {
        preValidation,
        schema: {
          tags: ['licensing'],
          summary,
          params: IdParams,
          body: S.OfferBody,
          response: { 201: S.Transfer, ...errors(...statuses) },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await transfers.offer(request.params.id, request.body, sender(request.user!))),
    );

  offer(
    '/licenses/:id/transfers',
    requireAdmin,
    'Offer a license to the account of an email (administrator); replaces a pending offer',
    [400, 401, 403, 404, 409],
  );

  app.get(
    '/licenses/:id/transfers',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['licensing'],
        summary: "A license's transfers, newest first (administrator)",
        params: IdParams,
        response: { 200: Type.Array(S.Transfer), ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => transfers.listOfLicense(request.params.id),
  );

  app.delete(
    '/transfers/:id',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['licensing'],
        summary: 'Cancel a pending transfer (administrator)',
        params: IdParams,
        response: { 200: S.Transfer, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request) => transfers.cancel(request.params.id, sender(request.user!)),
  );

  offer(
    '/account/licenses/:id/transfers',
    requireUser,
    'Offer one of my licenses to the account of an email; replaces a pending offer',
    [400, 401, 404, 409, 429],
  );

  app.get(
    '/account/transfers',
    {
      preValidation: requireUser,
      schema: {
        tags: ['licensing'],
        summary: 'The pending transfers of my licenses',
        response: { 200: Type.Array(S.Transfer), ...errors(401) },
      },
    },
    async (request) => transfers.pendingOfOwner(request.user!.id),
  );

  app.delete(
    '/account/transfers/:id',
    {
      preValidation: requireUser,
      schema: {
        tags: ['licensing'],
        summary: 'Cancel a pending transfer of one of my licenses',
        params: IdParams,
        response: { 200: S.Transfer, ...errors(400, 401, 404, 409) },
      },
    },
    async (request) =>
      transfers.cancel(request.params.id, { ...sender(request.user!), administrator: false }),
  );

  app.post(
    '/transfers/accept',
    {
      schema: {
        tags: ['licensing'],
        summary:
          "Accept a transfer by its emailed link's token: the license moves to the account of the offer's email",
        body: S.AcceptBody,
        response: { 200: S.Transfer, ...errors(400, 403, 404, 409, 410) },
      },
    },
    async (request) => (await transfers.accept(request.body.token, request.user ?? undefined)).transfer,
  );
}
