import { Type } from 'typebox';
import type { ValidationCodes } from '../../http/validation.js';
import { MAX_STATE_LENGTH } from './oauth.state.js';

const Key = Type.String({ maxLength: 128, description: 'The license key' });
const State = Type.String({ maxLength: MAX_STATE_LENGTH, description: 'The signed state of redirect_url' });

/** Query of GET /licenses/oauth/validate; presence is checked by the service (its own codes). */
export const ValidateQuery = Type.Object({
  license_key: Type.Optional(Key),
  state: Type.Optional(State),
});

export const ValidateResponse = Type.Object({
  license_key: Type.String(),
  product_id: Type.Integer(),
  variation_id: Type.Integer(),
  product_name: Type.String(),
  variation_name: Type.String(),
  status: Type.String(),
  activation_limit: Type.Integer(),
  activation_count: Type.Integer(),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  usage_expires_at_utc: Type.String(),
});

export const ConfirmBody = Type.Object(
  {
    license_key: Type.Optional(Key),
    state: Type.Optional(State),
    nonce: Type.Optional(
      Type.String({
        maxLength: 128,
        description:
          'The approval request nonce: the `nonce` parameter of redirect_url, echoed to the callback (not the X-REST-Nonce)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ConfirmResponse = Type.Object({
  success: Type.Literal(true),
  redirect_url: Type.String({ description: 'return_url with activation_token, license_key and nonce' }),
  activation_token: Type.String({ description: 'Single use, 5 minutes' }),
});

/** A field of the wrong type is a missing parameter as far as the client is concerned. */
export const confirmCodes: ValidationCodes = {
  invalid: { license_key: 'missing_params', state: 'invalid_state', nonce: 'invalid_state' },
};
export const validateCodes: ValidationCodes = {
  invalid: { license_key: 'missing_license_key', state: 'invalid_state' },
};
