import { Type } from 'typebox';

/** The REST error envelope (docs/api.md, 'Errors'), for OpenAPI. */
export const ErrorBody = Type.Object(
  {
    code: Type.String(),
    message: Type.String(),
    data: Type.Object({ status: Type.Integer() }, { additionalProperties: true }),
  },
  { description: 'REST error', additionalProperties: true },
);

/** Response schemas for the error statuses a route can answer with. */
export function errors(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody]));
}

/** Text that may not carry control characters (header injection, log forging). */
export const PlainText = (opts: { minLength?: number; maxLength: number; description?: string }) =>
  Type.String({ pattern: '^[^\\u0000-\\u001f\\u007f]*$', ...opts });

export const Email = Type.String({ format: 'email', maxLength: 254 });

/** A body that must be absent or `{}`: any field is refused. */
export const EmptyBody = Type.Object({}, { additionalProperties: false });

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) });
