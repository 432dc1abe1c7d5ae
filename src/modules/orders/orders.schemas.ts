import { Type } from 'typebox';

const Money = (description = "Decimal in the order's currency") => Type.String({ description });
const NullableId = Type.Union([Type.Integer(), Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);

const OrderItem = Type.Object({
  id: Type.Integer(),
  product_id: Type.Integer(),
  variation_id: Type.Integer(),
  name: Type.String(),
  quantity: Type.Integer(),
  price: Money(),
  subtotal: Money(),
  total: Money(),
  total_tax: Money(),
  subscription_id: NullableId,
});

/** An order as the administrator routes answer it (OrdersService.view). */
export const Order = Type.Object({
  id: Type.Integer(),
  number: Type.String(),
  order_key: Type.String(),
  status: Type.String(),
  created_via: Type.String(),
  test: Type.Boolean({ description: 'Placed in test mode: no money was taken' }),
  customer_id: NullableId,
  currency: Type.String(),
  currency_symbol: Type.String(),
  base_currency: Type.String(),
  exchange_rate: Type.String({ description: 'Units of the order currency per unit of the base currency' }),
  rate_id: Type.String(),
  prices_include_tax: Type.Boolean(),
  subtotal: Money(),
  subtotal_tax: Money(),
  discount_total: Money(),
  discount_tax: Money(),
  shipping_total: Money(),
  shipping_tax: Money(),
  total_tax: Money(),
  total: Money(),
  payment_method: Type.String(),
  payment_method_title: Type.String(),
  billing: Type.Record(Type.String(), Type.String(), { description: 'The address as given at checkout' }),
  shipping: Type.Record(Type.String(), Type.String()),
  shipping_lines: Type.Array(
    Type.Object({
      id: Type.Integer(),
      method_title: Type.String(),
      method_id: Type.String(),
      total: Money(),
    }),
  ),
  coupons: Type.Array(Type.Object({ code: Type.String(), discount_total: Money(), discount_tax: Money() })),
  customer_note: Type.String(),
  subscription_id: NullableId,
  renewal_due_at: Type.Union([Type.String(), Type.Null()], { description: "A renewal order's due payment" }),
  paid_at: NullableString,
  refunded_total: Money("What the order's refunds add up to"),
  disputed_at: Type.Union([Type.String(), Type.Null()], {
    description: 'When a chargeback was first opened against the order',
  }),
  buyer_tax_id: Type.String({ description: "The buyer's VAT number; '' = none (docs/taxes.md)" }),
  reverse_charge: Type.Boolean({
    description: 'Sold with reverse charge: no VAT, the buyer accounts for it',
  }),
  tax_country: Type.String({ description: "The country whose tax applied; '' = none" }),
  tax_lines: Type.Array(Type.Object({ name: Type.String(), rate: Type.String(), amount: Money() }), {
    description: 'The tax per rate as charged',
  }),
  tax_evidence: Type.Object(
    {
      billing_country: NullableString,
      ip_country: NullableString,
      card_country: NullableString,
      country_confirmed: Type.Boolean(),
      vat_check: Type.Union([
        Type.Object({
          status: Type.String(),
          country: Type.String(),
          name: NullableString,
          checked_at: Type.String(),
        }),
        Type.Null(),
      ]),
    },
    {
      description:
        "Where the buyer is, by billing address, IP and card (docs/taxes.md, 'Evidence of location')",
    },
  ),
  items: Type.Array(OrderItem),
  created_at: Type.String(),
  updated_at: Type.String(),
});
