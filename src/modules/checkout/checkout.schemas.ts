import { type Static, Type } from 'typebox';
import { PlainText } from '../../http/schemas.js';

const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });
const Text = (max = 200) => PlainText({ maxLength: max });

const addressFields = {
  first_name: Type.Optional(Text(100)),
  last_name: Type.Optional(Text(100)),
  company: Type.Optional(Text()),
  address_1: Type.Optional(Text()),
  address_2: Type.Optional(Text()),
  city: Type.Optional(Text(100)),
  state: Type.Optional(Text(100)),
  postcode: Type.Optional(Text(20)),
  country: Type.Optional(Type.String({ pattern: '^([A-Za-z]{2})?$' })),
};

export const Billing = Type.Object(
  {
    ...addressFields,
    email: Type.Optional(Type.Union([Type.Literal(''), Type.String({ format: 'email', maxLength: 254 })])),
    phone: Type.Optional(Text(40)),
  },
  { additionalProperties: false },
);
export const Shipping = Type.Object(
  { ...addressFields, ship_to_different: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
/** Quote and shipping-rates only need where the order goes (country, state, postcode). */
export const Destination = Type.Object(
  {
    country: Type.Optional(Type.String({ pattern: '^([A-Za-z]{2})?$' })),
    state: Type.Optional(Text(100)),
    city: Type.Optional(Text(100)),
    postcode: Type.Optional(Text(20)),
    email: Type.Optional(Type.String({ maxLength: 254 })),
  },
  { additionalProperties: false },
);

const Qty = Type.Integer({ minimum: 1, maximum: 9999 });
export const Item = Type.Object(
  {
    product_id: Id,
    variation_id: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647 })),
    qty: Type.Optional(Qty),
    quantity: Type.Optional(Qty),
    meta: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 20 })),
  },
  { additionalProperties: false },
);
const Items = Type.Array(Item, { maxItems: 100 });
const Coupons = Type.Array(Text(100), { maxItems: 20 });
const Method = PlainText({ maxLength: 100 });

const VatNumber = PlainText({
  maxLength: 40,
  description: "A business buyer's VAT number, with its country prefix (docs/taxes.md)",
});

export const QuoteBody = Type.Object(
  {
    items: Type.Optional(Items),
    billing: Type.Optional(Destination),
    shipping: Type.Optional(Destination),
    coupons: Type.Optional(Coupons),
    shipping_method: Type.Optional(Method),
    vat_number: Type.Optional(VatNumber),
  },
  { additionalProperties: false },
);
export type QuoteBody = Static<typeof QuoteBody>;

export const FieldsBody = Type.Object(
  { is_digital_only: Type.Optional(Type.Boolean({ default: false })) },
  { additionalProperties: false },
);

export const RatesBody = Type.Object(
  { shipping: Destination, items: Type.Array(Item, { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);

/** What a gateway needs to take the payment, e.g. the test card's `card_number` (docs/checkout.md). */
const PaymentData = Type.Record(
  Type.String({ maxLength: 100 }),
  Type.Union([Text(500), Type.Number(), Type.Boolean()]),
  { maxProperties: 20 },
);

export const SubmitBody = Type.Object(
  {
    items: Type.Optional(Items),
    billing: Type.Optional(Billing),
    shipping: Type.Optional(Shipping),
    coupons: Type.Optional(Coupons),
    shipping_method: Type.Optional(Method),
    shipping_cost: Type.Optional(Type.Number({ minimum: 0 })),
    shipping_title: Type.Optional(Text()),
    payment_method: Type.Optional(Method),
    /** Checked for its form before the order is made; the payment itself is pay-order's. */
    payment_data: Type.Optional(PaymentData),
    // Notes may hold line breaks and tabs, no other control characters.
    customer_note: Type.Optional(
      Type.String({ maxLength: 2000, pattern: '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$' }),
    ),
    custom_fields: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Type.Union([Text(1000), Type.Number(), Type.Boolean()]), {
        maxProperties: 50,
      }),
    ),
    referral_code: Type.Optional(Text(100)),
    captcha_token: Type.Optional(PlainText({ maxLength: 4096 })),
    vat_number: Type.Optional(VatNumber),
    confirm_country: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z]{2}$',
        description: 'The billing country, confirmed after a 409 tax_country_unconfirmed (docs/taxes.md)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SubmitBody = Static<typeof SubmitBody>;

export const KeyQuery = Type.Object({
  key: Type.Optional(Type.String({ maxLength: 200 })),
  currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$' })),
});

export const PayBody = Type.Object(
  {
    key: Type.Optional(Type.String({ maxLength: 200 })),
    payment_method: Method,
    payment_data: Type.Optional(PaymentData),
  },
  { additionalProperties: false },
);
