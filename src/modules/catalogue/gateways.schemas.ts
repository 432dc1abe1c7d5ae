import { type Static, Type } from 'typebox';

export const GatewayParams = Type.Object({ id: Type.String({ pattern: '^[a-z0-9_]{1,50}$' }) });

export const GatewayPatchBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    /** Empty = every currency. */
    currencies: Type.Optional(
      Type.Array(Type.String({ pattern: '^[A-Z]{3}$' }), { maxItems: 300, uniqueItems: true }),
    ),
    /** What the customer must do to pay (bank account, payee), shown while the order is on hold. */
    instructions: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);
export type GatewayPatchBody = Static<typeof GatewayPatchBody>;

export const GatewayResponse = Type.Object({
  id: Type.String(),
  title: Type.String(),
  enabled: Type.Boolean(),
  currencies: Type.Array(Type.String()),
  instructions: Type.String(),
});
