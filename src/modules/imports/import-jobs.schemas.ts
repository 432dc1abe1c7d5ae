import { type Static, Type } from 'typebox';

export const IMPORT_SOURCES = ['csv', 'edd', 'freemius', 'woocommerce'] as const;
export const JOB_STATUSES = ['queued', 'running', 'done', 'failed'] as const;
const KINDS = ['customers', 'products', 'releases', 'orders', 'subscriptions', 'licenses', 'activations'];

/** No control characters (a NUL would cut a path short; a newline would forge a log line). */
const printable = '^[^\\u0000-\\u001f\\u007f]*$';

export const StartImportBody = Type.Object(
  {
    source: Type.Enum([...IMPORT_SOURCES]),
    dry_run: Type.Boolean({ default: false, description: 'Read and check everything, write nothing' }),
    db_url: Type.Optional(
      Type.String({
        maxLength: 2048,
        pattern: '^mysql://[^\\u0000-\\u001f\\u007f]+$',
        description:
          "edd and woocommerce: the old store's MySQL database, mysql://user:password@host/database; never stored, logged nor answered",
      }),
    ),
    table_prefix: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_]{1,64}$',
        description: "edd and woocommerce: the WordPress tables' prefix (default wp_)",
      }),
    ),
    dir: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        pattern: printable,
        description:
          'csv and freemius: a folder on the server inside DATA_DIR/imports (a relative path is taken from there) or an IMPORT_ROOTS folder',
      }),
    ),
  },
  { additionalProperties: false },
);
export type StartImportBody = Static<typeof StartImportBody>;

export const ImportJobParams = Type.Object(
  { id: Type.Integer({ minimum: 1, maximum: 2147483647 }) },
  { additionalProperties: false },
);

const KindCount = Type.Object({ created: Type.Integer(), present: Type.Integer(), skipped: Type.Integer() });
const Counts = Type.Record(Type.Enum(KINDS), KindCount, {
  description: 'Per kind of record: made now, found from an earlier run, not imported (see problems)',
});

export const ImportReportSchema = Type.Object({
  ok: Type.Boolean({ description: 'Every row of the source is either in Tollgate or reported' }),
  counts: Counts,
  reconciliation: Type.Array(
    Type.Object({
      kind: Type.String(),
      source: Type.Integer({ description: 'Rows the source holds' }),
      imported: Type.Integer({ description: 'Rows now in Tollgate from this source' }),
      skipped: Type.Integer({ description: 'Rows reported and left out' }),
      ok: Type.Boolean({ description: 'source = imported + skipped' }),
    }),
  ),
  problems: Type.Array(
    Type.Object({
      kind: Type.String(),
      source_id: Type.String(),
      reason: Type.String(),
      detail: Type.Optional(Type.String()),
    }),
    { description: 'The rows not imported and why (the first 10,000)' },
  ),
  problem_count: Type.Integer(),
  revenue: Type.Array(
    Type.Object({
      currency: Type.String(),
      source: Type.Integer({ description: 'What the source says its paid orders came to (minor units)' }),
      imported: Type.Integer({ description: 'The paid orders now in Tollgate from this source' }),
      skipped: Type.Integer({ description: 'The paid orders reported and left out' }),
      ok: Type.Boolean({ description: 'source = imported + skipped' }),
    }),
    { description: 'Paid orders per currency, reconciled with the source' },
  ),
  stripe: Type.Object(
    { customers: Type.Integer(), cards: Type.Integer() },
    { description: 'Imported customers whose Stripe customer is kept, and how many with a card' },
  ),
  // Absent from the reports of jobs run before the importer linked licenses late.
  links: Type.Optional(
    Type.Object(
      {
        orders: Type.Integer({ description: 'Licenses of earlier runs linked to their order now' }),
        subscriptions: Type.Integer({
          description: 'Licenses of earlier runs linked to their subscription now',
        }),
        kept: Type.Array(
          Type.Object({
            license: Type.String({ description: "The license's id in the source" }),
            kind: Type.Enum(['orders', 'subscriptions']),
            source_id: Type.String({ description: 'The order or subscription the source names' }),
            kept_id: Type.Integer({
              description: 'The Tollgate order or subscription the license stays linked to',
            }),
          }),
          { description: 'Licenses already linked to another order or subscription: left as they are' },
        ),
      },
      {
        description:
          'Licenses an earlier run imported without their order or subscription, linked once those were imported',
      },
    ),
  ),
  // Absent from the reports of jobs run before the importer listed them.
  old_gateways: Type.Optional(
    Type.Array(
      Type.Object({
        subscription: Type.String({ description: "The subscription's id in the source" }),
        gateway: Type.String({ description: 'The gateway as the old store names it, e.g. `paypal`' }),
        gateway_profile_id: Type.String({ description: "The gateway's own id of it, e.g. PayPal's `I-…`" }),
        next_payment_at: Type.Union([Type.String(), Type.Null()], {
          description: 'When the source says it next renews: cancel it at the gateway before then',
        }),
      }),
      {
        description:
          "Subscriptions that still renew and that a gateway other than Stripe bills by itself: Tollgate cannot ask that gateway, so the owner cancels each there before Tollgate's first renewal, or the customer pays twice (the first 10,000)",
      },
    ),
  ),
  totals: Type.Object({
    customers: Type.Integer(),
    licenses: Type.Integer(),
    activations: Type.Integer(),
    orders: Type.Integer(),
    subscriptions: Type.Integer(),
    revenue: Type.Record(Type.String(), Type.Integer(), {
      description: 'Paid orders, minor units per currency',
    }),
  }),
});
export type ImportReportBody = Static<typeof ImportReportSchema>;

const jobFields = {
  id: Type.Integer(),
  source: Type.Enum([...IMPORT_SOURCES]),
  dry_run: Type.Boolean(),
  status: Type.Enum([...JOB_STATUSES], {
    description: 'queued, running, done (the report is there), failed (failure says why)',
  }),
  dir: Type.Union([Type.String(), Type.Null()], { description: 'The folder read (csv, freemius)' }),
  table_prefix: Type.Union([Type.String(), Type.Null()]),
  counts: Counts,
  processed: Type.Integer({
    description: 'Customers, orders, subscriptions, licenses and activations handled so far',
  }),
  total: Type.Union([Type.Integer(), Type.Null()], {
    description: 'How many of those the source holds; null until the source was read',
  }),
  failure: Type.Union([
    Type.Object({
      reason: Type.String({
        description:
          'interrupted (the server stopped during the job: run it again, nothing is made twice), source_unavailable, import_failed',
      }),
      message: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  created_by: Type.Integer({ description: 'The administrator who started it' }),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  started_at: Type.Union([Type.String(), Type.Null()]),
  finished_at: Type.Union([Type.String(), Type.Null()]),
};

export const ImportJobSummary = Type.Object(jobFields);
export type ImportJobSummary = Static<typeof ImportJobSummary>;

export const ImportJob = Type.Object({
  ...jobFields,
  report: Type.Union([ImportReportSchema, Type.Null()], { description: 'Once done' }),
});
export type ImportJob = Static<typeof ImportJob>;
