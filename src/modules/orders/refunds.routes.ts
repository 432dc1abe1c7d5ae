import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { errors, IdParams, PlainText } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import type { RefundsService } from './refunds.service.js';

const Actor = Type.Union([Type.Null(), Type.Object({ user_id: Type.Integer(), email: Type.String() })], {
  description: 'The administrator who acted; null for Tollgate itself',
});

export const RefundBody = Type.Object(
  {
    amount: Type.Union([Type.String({ maxLength: 40 }), Type.Number()], {
      description:
        'A positive decimal in the order\'s currency ("12.50" or 12.5), at most what remains refundable',
    }),
    reason: Type.Optional(PlainText({ maxLength: 500, description: 'Why, shown in the order notes' })),
    restock: Type.Optional(
      Type.Boolean({
        default: true,
        description: 'A full refund gives what the order held back to stock (docs/payments.md)',
      }),
    ),
  },
  { additionalProperties: false },
);

const Refund = Type.Object({
  id: Type.Integer(),
  order_id: Type.Integer(),
  amount: Type.String({ description: "Decimal in the order's currency" }),
  reason: Type.String(),
  full: Type.Boolean({ description: "This refund brought the refunds up to the order's total" }),
  restock: Type.Boolean(),
  created_at: Type.String(),
  actor: Actor,
});

// Newlines are allowed in a note; other control characters are not.
const NoteBody = Type.Object(
  {
    body: Type.String({
      minLength: 1,
      maxLength: 5000,
      pattern: '^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f]*$',
    }),
  },
  { additionalProperties: false },
);

const Note = Type.Object({
  id: Type.Integer(),
  order_id: Type.Integer(),
  kind: Type.Union([
    Type.Literal('payment'),
    Type.Literal('refund'),
    Type.Literal('dispute'),
    Type.Literal('note'),
  ]),
  body: Type.String(),
  created_at: Type.String(),
  actor: Actor,
});

const tags = ['orders'];
const amountCode = { validationCodes: { invalid: { amount: 'invalid_refund_amount' as const } } };

/** Refunds and order notes, for administrators (docs/payments.md). */
export async function refundsRoutes(app: App, opts: { refunds: RefundsService }) {
  const { refunds } = opts;

  app.post(
    '/orders/:id/refunds',
    {
      preValidation: requireAdmin,
      config: amountCode,
      schema: {
        tags,
        summary:
          'Refund a paid order (administrator): a full refund makes it refunded and acts on its licenses, subscriptions and stock',
        params: IdParams,
        body: RefundBody,
        response: { 201: Refund, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await refunds.refund(request.params.id, request.body, actorOf(request))),
  );

  app.get(
    '/orders/:id/refunds',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: "An order's refunds, oldest first, with what remains refundable (administrator)",
        params: IdParams,
        response: {
          200: Type.Object({
            refunds: Type.Array(Refund),
            refunded_total: Type.String(),
            remaining: Type.String(),
          }),
          ...errors(401, 403, 404),
        },
      },
    },
    async (request) => refunds.listRefunds(request.params.id),
  );

  app.post(
    '/orders/:id/notes',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: 'Add a note to an order (administrator)',
        params: IdParams,
        body: NoteBody,
        response: { 201: Note, ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await refunds.addNote(request.params.id, request.body.body, actorOf(request))),
  );

  app.get(
    '/orders/:id/notes',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary:
          "An order's notes, oldest first: payments, refunds, disputes and the administrator's (administrator)",
        params: IdParams,
        response: { 200: Type.Object({ notes: Type.Array(Note) }), ...errors(401, 403, 404) },
      },
    },
    async (request) => refunds.listNotes(request.params.id),
  );
}
