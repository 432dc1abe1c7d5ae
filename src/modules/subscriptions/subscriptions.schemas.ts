import { Type } from 'typebox';
import { SUBSCRIPTION_STATUSES } from './subscriptions.model.js';

const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const SubscriptionStatus = Type.Union(SUBSCRIPTION_STATUSES.map((s) => Type.Literal(s)));

/** A subscription as every administrator route answers it (subscriptionView). */
const subscriptionFields = {
  id: Type.Integer(),
  user_id: Type.Integer(),
  product_id: Type.Integer(),
  variation_id: Type.Integer(),
  status: Type.String(),
  status_reason: Type.String({
    description:
      "Why it last changed status, e.g. `renewal_payment_overdue`, `old_subscription_active` (held: the old store's Stripe subscription still bills it, docs/migrating.md); empty when none was given",
  }),
  billing_period: NullableString,
  billing_interval: Type.Union([Type.Integer(), Type.Null()]),
  quantity: Type.Integer(),
  currency: NullableString,
  recurring_total: Type.Union([Type.String(), Type.Null()], { description: 'Decimal string' }),
  payment_method: Type.String(),
  parent_order_id: Type.Union([Type.Integer(), Type.Null()]),
  gateway_profile_id: Type.String({
    description: "The old gateway's id of an imported subscription (Stripe's `sub_…`); empty otherwise",
  }),
  next_payment_at: NullableString,
  created_at: Type.String(),
  updated_at: Type.String(),
};

/** One subscription (GET /subscriptions/:id, a status change). */
export const SubscriptionView = Type.Object(subscriptionFields);

export const SubscriptionListItem = Type.Object({
  ...subscriptionFields,
  user_email: Type.String({ description: "The customer's email; empty when the account is gone" }),
  user_name: Type.String({ description: "The customer's first and last name" }),
  product_name: Type.String({ description: 'Empty when the product is gone' }),
});

export const SUBSCRIPTION_SORTS = ['id', 'created_at', 'next_payment_at'] as const;

export const SubscriptionListQuery = Type.Object(
  {
    status: Type.Optional(SubscriptionStatus),
    user_id: Type.Optional(Id),
    product_id: Type.Optional(Id),
    sort: Type.Optional(
      Type.Enum(SUBSCRIPTION_SORTS, {
        description: 'Default id; ties are broken by id; no next payment sorts first ascending',
      }),
    ),
    order: Type.Optional(
      Type.Enum(['asc', 'desc'], {
        description: 'Default desc for id and created_at, asc for next_payment_at',
      }),
    ),
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
    per_page: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  },
  { additionalProperties: false },
);
