import { type Static, Type } from 'typebox';
import { PlainText } from '../../http/schemas.js';
import { MAX_QUANTITY } from './cart.model.js';

const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });
const AttributeValue = PlainText({ maxLength: 200 });
/** Any string up to 100 printable characters: a malformed key is simply not in the cart. */
const ItemKey = PlainText({ maxLength: 100 });
const CouponCode = PlainText({ maxLength: 100, description: 'Case-insensitive; surrounding spaces ignored' });

export const CurrencyQuery = Type.Object({
  currency: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z]{3}$',
      description: 'Price in this configured currency; remembered in a cookie',
    }),
  ),
});

export const AddBody = Type.Object(
  {
    product_id: Id,
    quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_QUANTITY, default: 1 })),
    variation_id: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647, default: 0 })),
    variation: Type.Optional(
      Type.Unsafe<Record<string, string>>({
        type: 'object',
        maxProperties: 20,
        propertyNames: {
          type: 'string',
          minLength: 1,
          maxLength: 110,
          pattern: '^[^\\u0000-\\u001f\\u007f]*$',
        },
        additionalProperties: AttributeValue,
        description: 'Chosen attributes, keys like attribute_<name>',
      }),
    ),
  },
  {
    additionalProperties: false,
    maxProperties: 24,
    // attribute_<name> fields at the top level, as a product form posts them.
    patternProperties: { '^attribute_[^\\u0000-\\u001f\\u007f]{1,100}$': AttributeValue },
  },
);
export type AddBody = Static<typeof AddBody>;

export const UpdateBody = Type.Object(
  {
    cart_item_key: ItemKey,
    quantity: Type.Integer({ minimum: 0, maximum: MAX_QUANTITY }),
    variation_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2147483647,
        description:
          "Another tier (variation) of the line's product: the line moves to it (docs/selling.md, 'Tiers')",
      }),
    ),
  },
  { additionalProperties: false },
);
export const RemoveBody = Type.Object({ cart_item_key: ItemKey }, { additionalProperties: false });
export { EmptyBody } from '../../http/schemas.js';
export const CouponBody = Type.Object({ coupon_code: CouponCode }, { additionalProperties: false });

/** A decimal amount in the cart's currency, as a string ("49.00", "5000", "1.250"). */
const Amount = Type.String();

export const CartItem = Type.Object({
  key: Type.String(),
  product_id: Type.Integer(),
  variation_id: Type.Integer(),
  quantity: Type.Integer(),
  name: Type.String(),
  price: Type.String({ description: 'Unit price as entered (with tax when prices include tax)' }),
  subtotal: Type.Number({ description: 'Line subtotal without tax, before discounts' }),
  total: Type.Number({ description: 'Line total without tax, after discounts' }),
  image: Type.String(),
  permalink: Type.String(),
  attributes: Type.Record(Type.String(), Type.String()),
  subscription: Type.Boolean({
    description: 'A subscription product: checkout offers to keep the card for its renewals',
  }),
  tiers: Type.Array(
    Type.Object({ variation_id: Type.Integer(), name: Type.String(), price: Type.String() }),
    {
      description:
        "A variable product's tiers (its variations) with their unit prices; POST /cart/update with variation_id changes the line's tier. Empty for a simple product",
    },
  ),
});

export const CartCoupon = Type.Object({
  code: Type.String(),
  discount_type: Type.String(),
  discount_total: Amount,
  discount_tax: Amount,
  free_shipping: Type.Boolean(),
});

export const Cart = Type.Object({
  currency: Type.String(),
  currency_symbol: Type.String(),
  decimals: Type.Integer(),
  rate_id: Type.String(),
  items: Type.Array(CartItem),
  subtotal: Amount,
  subtotal_tax: Amount,
  discount_total: Amount,
  discount_tax: Amount,
  shipping_total: Amount,
  shipping_tax: Amount,
  cart_contents_tax: Amount,
  fee_total: Amount,
  fee_tax: Amount,
  total: Amount,
  total_tax: Amount,
  coupons: Type.Array(CartCoupon),
  needs_shipping: Type.Boolean(),
  needs_payment: Type.Boolean(),
});
export type Cart = Static<typeof Cart>;

export const CartMutation = Type.Object({ message: Type.String(), cart: Cart });
export const CartAdded = Type.Object({ message: Type.String(), cart_item_key: Type.String(), cart: Cart });
