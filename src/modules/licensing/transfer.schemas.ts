import { Type } from 'typebox';
import { Email } from '../../http/schemas.js';

/** An offer of a license to the account of an email (docs/selling.md, 'Transfers'). */
export const OfferBody = Type.Object(
  {
    email: Email,
    keep_activations: Type.Optional(
      Type.Boolean({
        description:
          'true (default): the sites stay activated; false: every active site is deactivated on accept',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AcceptBody = Type.Object(
  {
    token: Type.String({ maxLength: 200, description: "The token of the emailed link's `token` parameter" }),
  },
  { additionalProperties: false },
);

export const Transfer = Type.Object({
  id: Type.Integer(),
  license_id: Type.Integer(),
  from_user_id: Type.Integer(),
  to_email: Type.String(),
  keep_activations: Type.Boolean(),
  status: Type.Enum(['pending', 'accepted', 'cancelled', 'replaced', 'expired'], {
    description:
      '`replaced`: a newer offer of the license took its place; `expired`: pending past expires_at',
  }),
  to_user_id: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The receiving account, once accepted',
  }),
  expires_at: Type.String({ description: 'RFC 3339; the link works for 7 days' }),
  accepted_at: Type.Union([Type.String(), Type.Null()]),
  cancelled_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});
