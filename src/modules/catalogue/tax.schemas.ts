import { type Static, Type } from 'typebox';
import { PlainText } from '../../http/schemas.js';

export const CountryCode = Type.String({ pattern: '^[A-Z]{2}$' });

const taxRateFields = {
  country: CountryCode,
  state: Type.Optional(PlainText({ maxLength: 100 })),
  // WooCommerce-style postcode lists: `;` separates, `...` spans a range, `*` is a wildcard.
  postcode: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9 *.;-]*$', maxLength: 100 })),
  rate: Type.String({ pattern: '^\\d{1,3}(\\.\\d{1,4})?$' }),
  name: PlainText({ minLength: 1, maxLength: 200 }),
  shipping: Type.Optional(Type.Boolean()),
  compound: Type.Optional(Type.Boolean()),
  priority: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
};

export const TaxRateBody = Type.Object(taxRateFields, { additionalProperties: false });
export type TaxRateBody = Static<typeof TaxRateBody>;

/** Any of the create fields, checked as on create; unknown fields are refused the same way. */
export const TaxRatePatchBody = Type.Partial(Type.Object(taxRateFields), { additionalProperties: false });
export type TaxRatePatchBody = Static<typeof TaxRatePatchBody>;

export const TaxRateResponse = Type.Object({
  id: Type.Integer(),
  country: Type.String(),
  state: Type.String(),
  postcode: Type.String(),
  rate: Type.String(),
  name: Type.String(),
  shipping: Type.Boolean(),
  compound: Type.Boolean(),
  priority: Type.Integer(),
});
