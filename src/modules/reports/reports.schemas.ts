import { type Static, Type } from 'typebox';

export const DashboardQuery = Type.Object(
  {
    days: Type.Integer({
      minimum: 1,
      maximum: 366,
      default: 30,
      description: 'How many UTC days, today included (1 to 366)',
    }),
  },
  { additionalProperties: false },
);
export type DashboardQuery = Static<typeof DashboardQuery>;

const Day = Type.String({ description: 'A UTC day, YYYY-MM-DD' });
const Minor = Type.Integer({ description: 'Minor units of the currency (cents for USD)' });
const Decimal = Type.String({ description: 'The same amount as a decimal string, e.g. "49.00"' });

const DayCount = Type.Object({ day: Day, count: Type.Integer() });
const Series = Type.Object({
  total: Type.Integer({ description: 'The sum over the days' }),
  per_day: Type.Array(DayCount, { description: 'Every day of the range, oldest first; 0 when none' }),
});

const CurrencySales = Type.Object({
  currency: Type.String({ description: 'ISO 4217 code of the orders' }),
  decimals: Type.Integer(),
  orders: Type.Integer({ description: 'Paid orders over the range' }),
  total_minor: Minor,
  total: Decimal,
  per_day: Type.Array(Type.Object({ day: Day, orders: Type.Integer(), total_minor: Minor, total: Decimal }), {
    description: 'Every day of the range, oldest first; 0 when none',
  }),
});

const FailingWebhook = Type.Object({
  event_id: Type.String(),
  event: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('abandoned')], {
    description: 'pending: to be tried again; abandoned: every attempt failed',
  }),
  attempts: Type.Integer(),
  failed_at: Type.String({ description: 'ISO 8601 UTC of the last attempt' }),
  response_code: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The HTTP status of the last attempt, null when none came (network error, timeout)',
  }),
  error: Type.Union([Type.String(), Type.Null()]),
});

const Draft = Type.Object({
  release_id: Type.Integer(),
  product_id: Type.Integer(),
  product_name: Type.String(),
  version: Type.String(),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
});

const CurrencyAmount = Type.Object({
  currency: Type.String(),
  decimals: Type.Integer(),
  total_minor: Type.Integer(),
  total: Type.String({ description: 'Decimal string' }),
});

export const Dashboard = Type.Object({
  days: Type.Integer(),
  from: Day,
  to: Type.String({ description: 'The last day, today by the server\u2019s clock (YYYY-MM-DD)' }),
  sales: Type.Array(CurrencySales, {
    description: 'One entry per currency with paid orders in the range (docs/api.md, "Reports")',
  }),
  new_licenses: Series,
  activations: Type.Object({
    active: Type.Integer({ description: 'Active activations now, over all days' }),
    staging: Type.Integer({
      description: 'Of the active ones, those on staging sites (they take no seat; docs/licensing.md)',
    }),
    total: Type.Integer({ description: 'New activations over the range' }),
    per_day: Type.Array(DayCount),
  }),
  update_checks: Series,
  downloads: Series,
  failing_webhooks: Type.Object({
    count: Type.Integer({ description: 'Events whose last attempt failed' }),
    latest: Type.Array(FailingWebhook, { description: 'The latest 5, newest first' }),
  }),
  drafts: Type.Object({
    count: Type.Integer({ description: 'Releases waiting as drafts' }),
    latest: Type.Array(Draft, { description: 'The newest 10' }),
  }),
  renewal_rate: Type.Object(
    {
      renewals: Type.Integer({ description: 'Sale orders paid in the range that renew' }),
      lapsed: Type.Integer({ description: 'Subscriptions that expired or were cancelled in the range' }),
      rate: Type.Union([Type.Number(), Type.Null()], {
        description: 'renewals / (renewals + lapsed), 4 decimals; null when both are 0',
      }),
    },
    { description: 'docs/selling.md, "Reports"' },
  ),
  upgrade_revenue: Type.Array(Type.Intersect([CurrencyAmount, Type.Object({ items: Type.Integer() })]), {
    description:
      'Per currency: order items of sales paid in the range whose meta says license_action "upgrade"',
  }),
  mrr: Type.Array(Type.Intersect([CurrencyAmount, Type.Object({ subscriptions: Type.Integer() })]), {
    description:
      'Per currency: monthly recurring revenue of the subscriptions billing now (docs/selling.md, "Reports")',
  }),
});
export type Dashboard = Static<typeof Dashboard>;
