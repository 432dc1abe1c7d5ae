import { type Static, Type } from 'typebox';
import { MESSAGE_KINDS } from './templates/facts.js';

export const MAIL_STATUSES = ['pending', 'sent', 'failed'] as const;

export const MailQuery = Type.Object(
  {
    status: Type.Optional(Type.Enum([...MAIL_STATUSES])),
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
    per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  },
  { additionalProperties: false },
);
export type MailQuery = Static<typeof MailQuery>;

export const MailMessage = Type.Object({
  id: Type.Integer(),
  kind: Type.Enum([...MESSAGE_KINDS]),
  recipient: Type.String(),
  subject: Type.String(),
  status: Type.Enum([...MAIL_STATUSES], {
    description:
      'pending: waiting to be sent (also while smtp_url is empty); sent; failed: every attempt failed',
  }),
  attempts: Type.Integer(),
  next_attempt_at: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601 UTC' }),
  last_error: Type.Union([Type.String(), Type.Null()], {
    description: "The SMTP server's answer or the connection error of the last failed attempt",
  }),
  sent_at: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601 UTC' }),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
});
export type MailMessage = Static<typeof MailMessage>;

export const MailIdParams = Type.Object(
  { id: Type.Integer({ minimum: 1, maximum: 2147483647 }) },
  { additionalProperties: false },
);

export const ResendBody = Type.Object({}, { additionalProperties: false });

export const TestMailBody = Type.Object(
  {
    to: Type.Optional(
      Type.String({
        format: 'email',
        maxLength: 254,
        description: "The recipient; default: the signed-in administrator's own address",
      }),
    ),
  },
  { additionalProperties: false },
);

export const TestMailSent = Type.Object({ sent: Type.Literal(true), to: Type.String() });
