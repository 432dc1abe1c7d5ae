import { type Static, Type } from 'typebox';
import { Money, Nullable } from './catalogue.schemas.js';

/** Printable text without surrounding whitespace: codes are typed by shoppers. */
const CouponCode = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[^\\s\\u0000-\\u001f\\u007f]([^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f])?$',
});

const Limit = Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000_000 }));
const ProductIds = Type.Array(Type.Integer({ minimum: 1, maximum: 2147483647 }), {
  maxItems: 1000,
  uniqueItems: true,
});

const fields = {
  code: CouponCode,
  discount_type: Type.Enum(['percent', 'fixed_cart', 'fixed_product']),
  amount: Money,
  expires_at: Type.Optional(Nullable(Type.String({ format: 'date-time', maxLength: 40 }))),
  usage_limit: Type.Optional(Limit),
  usage_limit_per_user: Type.Optional(Limit),
  minimum_amount: Type.Optional(Nullable(Money)),
  maximum_amount: Type.Optional(Nullable(Money)),
  individual_use: Type.Optional(Type.Boolean()),
  product_ids: Type.Optional(ProductIds),
  excluded_product_ids: Type.Optional(ProductIds),
  /** null = the base currency. */
  currency: Type.Optional(Nullable(Type.String({ pattern: '^[A-Z]{3}$' }))),
  free_shipping: Type.Optional(Type.Boolean()),
};

export const CouponCreateBody = Type.Object(fields, { additionalProperties: false });
export type CouponCreateBody = Static<typeof CouponCreateBody>;

export const CouponPatchBody = Type.Partial(Type.Object(fields), { additionalProperties: false });
export type CouponPatchBody = Static<typeof CouponPatchBody>;

export const CouponResponse = Type.Object({
  id: Type.Integer(),
  code: Type.String(),
  discount_type: Type.Enum(['percent', 'fixed_cart', 'fixed_product']),
  amount: Type.String(),
  expires_at: Nullable(Type.String()),
  usage_limit: Nullable(Type.Integer()),
  usage_limit_per_user: Nullable(Type.Integer()),
  usage_count: Type.Integer(),
  minimum_amount: Nullable(Type.String()),
  maximum_amount: Nullable(Type.String()),
  individual_use: Type.Boolean(),
  product_ids: Type.Array(Type.Integer()),
  excluded_product_ids: Type.Array(Type.Integer()),
  currency: Nullable(Type.String()),
  free_shipping: Type.Boolean(),
  created_at: Type.String(),
});
