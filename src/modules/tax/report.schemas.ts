import { type Static, Type } from 'typebox';

export const TaxReportQuery = Type.Object(
  {
    quarter: Type.String({
      pattern: '^\\d{4}-Q[1-4]$',
      description: 'A calendar quarter, e.g. 2026-Q4 (UTC)',
    }),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv')], { description: 'json (the default) or csv' }),
    ),
  },
  { additionalProperties: false },
);
export type TaxReportQuery = Static<typeof TaxReportQuery>;

const Decimal = (description: string) => Type.String({ description });

export const TaxReport = Type.Object({
  quarter: Type.String(),
  from: Type.String({ description: "The quarter's first instant (UTC)" }),
  to: Type.String({ description: "The next quarter's first instant (UTC)" }),
  rows: Type.Array(
    Type.Object({
      country: Type.String({ description: "The buyer's country (ISO 3166-1 alpha-2)" }),
      rate: Type.String({ description: 'Percent with four places' }),
      currency: Type.String(),
      orders: Type.Integer({ description: 'Paid orders of the quarter at this rate' }),
      net: Decimal('Their amount without tax'),
      tax: Decimal('The tax charged at this rate'),
      refunds: Type.Integer({ description: 'Refunds made in the quarter' }),
      refunded_net: Decimal('What the refunds gave back without tax'),
      refunded_tax: Decimal('The tax the refunds gave back'),
      total_net: Decimal('net less refunded_net'),
      total_tax: Decimal('tax less refunded_tax: what is declared'),
    }),
    { description: 'Per country, rate and currency, sorted so' },
  ),
  reverse_charge: Type.Array(
    Type.Object({
      order_id: Type.Integer(),
      paid_at: Type.String(),
      country: Type.String(),
      buyer_tax_id: Type.String(),
      currency: Type.String(),
      net: Decimal('The amount, without VAT'),
    }),
    { description: 'Sales with reverse charge: no VAT, listed apart' },
  ),
});
