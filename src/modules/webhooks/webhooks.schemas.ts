import { type Static, Type } from 'typebox';

export const Attempt = Type.Object(
  {
    event_id: Type.String({ format: 'uuid' }),
    event: Type.String(),
    attempt: Type.Integer({ minimum: 1, maximum: 5 }),
    response_code: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status; null when none' }),
    delivered: Type.Boolean(),
    error: Type.Union([Type.String(), Type.Null()]),
    attempted_at: Type.String({ format: 'date-time', description: 'RFC 3339 UTC' }),
  },
  { additionalProperties: false },
);
export type Attempt = Static<typeof Attempt>;

export const AttemptList = Type.Array(Attempt, { maxItems: 100, description: 'Newest first' });

export const EventParams = Type.Object({ event_id: Type.String({ format: 'uuid' }) });

export const EventState = Type.Object(
  {
    event_id: Type.String({ format: 'uuid' }),
    event: Type.String(),
    status: Type.Union([
      Type.Literal('pending'),
      Type.Literal('delivered'),
      Type.Literal('abandoned'),
      Type.Literal('skipped'),
    ]),
    attempts: Type.Integer({ minimum: 0 }),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { additionalProperties: false },
);
export type EventState = Static<typeof EventState>;
