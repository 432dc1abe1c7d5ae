import { type Static, Type } from 'typebox';
import { PlainText } from '../../http/schemas.js';
import { Money, Nullable } from './catalogue.schemas.js';
import { CountryCode } from './tax.schemas.js';

const shippingZoneFields = {
  name: PlainText({ minLength: 1, maxLength: 200 }),
  regions: Type.Array(
    Type.Object(
      { country: CountryCode, state: Type.Optional(PlainText({ maxLength: 100 })) },
      { additionalProperties: false },
    ),
    { minItems: 1, maxItems: 500 },
  ),
  methods: Type.Array(
    Type.Object(
      {
        method_id: Type.Enum(['flat_rate', 'free_shipping', 'local_pickup']),
        title: PlainText({ minLength: 1, maxLength: 200 }),
        cost: Type.Optional(Money),
        min_amount: Type.Optional(Money),
      },
      { additionalProperties: false },
    ),
    { maxItems: 20 },
  ),
};

export const ShippingZoneBody = Type.Object(shippingZoneFields, { additionalProperties: false });
export type ShippingZoneBody = Static<typeof ShippingZoneBody>;

/** Any of the create fields, checked as on create; a list given replaces the stored one. */
export const ShippingZonePatchBody = Type.Partial(Type.Object(shippingZoneFields), {
  additionalProperties: false,
});
export type ShippingZonePatchBody = Static<typeof ShippingZonePatchBody>;

export const ShippingZoneResponse = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  regions: Type.Array(Type.Object({ country: Type.String(), state: Type.String() })),
  methods: Type.Array(
    Type.Object({
      instance_id: Type.Integer(),
      method_id: Type.String(),
      title: Type.String(),
      cost: Nullable(Type.String()),
      min_amount: Nullable(Type.String()),
    }),
  ),
});
