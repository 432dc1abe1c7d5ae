import { Type } from 'typebox';

export const SigningKey = Type.Object({
  id: Type.String({ description: '`k1-` and 8 hex characters of the SHA-256 of the raw public key' }),
  public_key: Type.String({ description: 'The raw 32-byte Ed25519 public key, base64' }),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  retired_at: Type.Union([Type.String(), Type.Null()], {
    description: 'ISO 8601 UTC; null for the active key, which signs',
  }),
});

export const SigningKeyList = Type.Object({ keys: Type.Array(SigningKey) });

/** No query parameters and no body fields: anything sent is 400 `invalid_parameters`. */
export const NoQuery = Type.Object({}, { additionalProperties: false });
export const RotateBody = Type.Object({}, { additionalProperties: false });
