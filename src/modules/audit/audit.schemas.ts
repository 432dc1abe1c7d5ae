import { type Static, Type } from 'typebox';

const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });

export const ENTITY_TYPES = [
  'license',
  'product',
  'release',
  'artifact',
  'settings',
  'order',
  'coupon',
  'tax_rate',
  'shipping_zone',
  'user',
  'subscription',
  'payment_gateway',
  'webhook_event',
  'legacy_download',
  'mail_message',
  'signing_key',
  'test_data',
  'import',
] as const;

export const AuditQuery = Type.Object(
  {
    entity_type: Type.Optional(Type.Enum([...ENTITY_TYPES])),
    entity_id: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647 })),
    actor_user_id: Type.Optional(Id),
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
    per_page: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuery>;

export const AuditEvent = Type.Object({
  id: Type.Integer(),
  actor: Type.Object(
    {
      user_id: Type.Union([Type.Integer(), Type.Null()], { description: 'null when a site acted' }),
      email: Type.Union([Type.String(), Type.Null()], { description: 'null when a site acted' }),
      kind: Type.Optional(
        Type.Union([Type.Literal('site'), Type.Literal('system')], {
          description:
            'only when no person acted: a site (by its reinstall), or system (a job of Tollgate itself)',
        }),
      ),
      name: Type.Optional(
        Type.String({
          description: "the site's normalised domain, or the job's name (e.g. stale_activations)",
        }),
      ),
    },
    {
      description:
        'A person (user_id, email), a site or Tollgate itself (kind, name); docs/admin.md, "Audit trail"',
    },
  ),
  entity_type: Type.String(),
  entity_id: Type.Integer({
    description: '0 for the settings, the payment gateways and the signing keys, named in the changes',
  }),
  action: Type.String(),
  changes: Type.Record(Type.String(), Type.Object({ before: Type.Unknown(), after: Type.Unknown() }), {
    description: 'Each changed field, before and after; secrets never appear (docs/admin.md, "Audit trail")',
  }),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
});
