import { Type } from 'typebox';
import { PlainText } from '../../http/schemas.js';
import { EntitlementPolicyInput } from '../catalogue/policy.js';
import { LICENSE_KEY_PATTERN } from './license-key.js';

const NullableString = Type.Union([Type.String(), Type.Null()]);
const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });
const Limit = Type.Integer({ minimum: 0, maximum: 1_000_000, description: '0 = unlimited' });

export const Entitlements = Type.Object({
  license_active: Type.Boolean(),
  update_entitled: Type.Boolean(),
  support_active: Type.Union([Type.Boolean(), Type.Null()]),
  usage_expires_at: NullableString,
  usage_expires_at_utc: Type.String(),
  updates_expires_at: NullableString,
  support_expires_at: NullableString,
  policy_mode: Type.String({ description: 'legacy, explicit or missing' }),
  historical_downloads: Type.Boolean(),
  history_access: Type.Boolean(),
  updates_mode: Type.String(),
  support_mode: Type.String(),
  usage_expiry_valid: Type.Boolean(),
  policy_valid: Type.Boolean(),
  policy_error: NullableString,
  issued_at: Type.String(),
  subscription_status: NullableString,
  subscription_active: Type.Boolean(),
  subscription_linked: Type.Boolean(),
});

export const Activation = Type.Object({
  id: Type.Integer(),
  license_id: Type.Integer(),
  identity_key: Type.String(),
  domain: Type.String(),
  domain_normalized: Type.String(),
  installation_id: Type.String(),
  ip_address: Type.String(),
  machine_id: NullableString,
  user_agent: Type.String(),
  status: Type.String({ description: 'active or deactivated' }),
  activated_at: Type.String(),
  deactivated_at: NullableString,
  activation_revision: Type.Integer(),
  updated_at: Type.String(),
  last_seen_at: Type.Union([Type.String(), Type.Null()], {
    description:
      "When the site last validated, checked for updates or asked for a package (YYYY-MM-DD HH:MM:SS UTC), to within an hour; docs/licensing.md, 'Last seen and stale activations'",
  }),
  // Present only where they apply (docs/licensing.md, '2.3 Staging and development sites', '2.4 Reinstalls').
  environment: Type.Optional(Type.Literal('staging', { description: 'Only on a staging site' })),
  deactivation_reason: Type.Optional(
    Type.String({
      description:
        '"reinstalled" when a reinstall took the activation over, "stale" when it was released for not being seen',
    }),
  ),
  replaced_by: Type.Optional(Type.Integer({ description: 'The activation that took this one over' })),
});

/** A license's standing, as the admin view and validate's answer both give it (same order). */
export const standingFields = {
  status: Type.String(),
  activation_limit: Type.Integer(),
  activation_count: Type.Integer(),
  activations_remaining: Type.Integer(),
  expires_at: NullableString,
  usage_expires_at_utc: Type.String(),
  is_expired: Type.Boolean(),
};

const licenseFields = {
  id: Type.Integer(),
  license_key: Type.String(),
  product_id: Type.Integer(),
  variation_id: Type.Integer(),
  product_name: Type.String(),
  variation_name: Type.String(),
  order_id: Type.Integer(),
  order_item_id: Type.Integer(),
  user_id: Type.Integer(),
  user_email: Type.String(),
  user_name: Type.String(),
  subscription_id: Type.Union([Type.Integer(), Type.Null()]),
  ...standingFields,
  entitlement_policy: Type.String({ description: 'JSON snapshot; empty for a legacy license' }),
  entitlements: Entitlements,
  test: Type.Boolean({
    description: "Issued for an order placed in test mode (docs/payments.md, 'Test mode and live mode')",
  }),
  trial: Type.Boolean({ description: "A trial license (docs/selling.md, 'Trials'): it cannot change tier" }),
  created_at: Type.String(),
  updated_at: Type.String(),
};

export const License = Type.Object(licenseFields);
export const LicenseWithActivations = Type.Object({ ...licenseFields, activations: Type.Array(Activation) });
export const CustomerLicense = Type.Object({
  ...licenseFields,
  product: Type.Object({ id: Type.Integer(), name: Type.String(), slug: NullableString }),
  activations: Type.Array(Activation),
});

export const LicenseList = Type.Object({
  licenses: Type.Array(License),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});

export const LICENSE_SORTS = ['id', 'created_at', 'usage_expires_at', 'status', 'product'] as const;

export const ListQuery = Type.Object(
  {
    search: Type.Optional(
      PlainText({
        maxLength: 200,
        description:
          'The whole key or its last 4 or more characters, the start of the customer email or of a site domain, an installation id',
      }),
    ),
    status: Type.Optional(
      Type.Enum(['active', 'revoked', 'suspended', 'expired'], {
        description: 'expired: not revoked, and the usage expiry has passed (docs/licensing.md)',
      }),
    ),
    expires_before: Type.Optional(
      Type.String({ format: 'date-time', maxLength: 64, description: 'Usage expiry strictly before' }),
    ),
    expires_after: Type.Optional(
      Type.String({ format: 'date-time', maxLength: 64, description: 'Usage expiry strictly after' }),
    ),
    product_id: Type.Optional(Id),
    user_id: Type.Optional(Id),
    test: Type.Optional(
      Type.Boolean({ description: 'true: only the licenses of test orders; false: only real ones' }),
    ),
    sort: Type.Optional(
      Type.Enum(LICENSE_SORTS, { description: 'Default id; ties are broken by id (docs/licensing.md)' }),
    ),
    order: Type.Optional(
      Type.Enum(['asc', 'desc'], { description: 'Default desc for id and created_at, asc otherwise' }),
    ),
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
    per_page: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  },
  { additionalProperties: false },
);

const UsageExpiry = Type.Union([Type.String({ format: 'date-time', maxLength: 64 }), Type.Null()], {
  description: 'RFC 3339; null = no usage expiry',
});

export const CreateLicenseBody = Type.Object(
  {
    product_id: Id,
    variation_id: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647 })),
    user_id: Id,
    license_key: Type.Optional(Type.String({ pattern: LICENSE_KEY_PATTERN })),
    activation_limit: Type.Optional(
      Type.Union([Limit, Type.Null()], { description: 'null/absent = inherit' }),
    ),
    usage_expires_at: Type.Optional(UsageExpiry),
    entitlement_policy: Type.Optional(Type.Union([EntitlementPolicyInput, Type.Null()])),
    order_id: Type.Optional(Type.Union([Id, Type.Null()])),
    order_item_id: Type.Optional(Type.Union([Id, Type.Null()])),
    subscription_id: Type.Optional(Type.Union([Id, Type.Null()])),
  },
  { additionalProperties: false },
);

export const PatchLicenseBody = Type.Object(
  {
    usage_expires_at: Type.Optional(UsageExpiry),
    activation_limit: Type.Optional(Type.Union([Limit, Type.Null()])),
    entitlement_policy: Type.Optional(Type.Union([EntitlementPolicyInput, Type.Null()])),
    status: Type.Optional(
      Type.Union([Type.Literal('active'), Type.Literal('suspended')], {
        description:
          'active reinstates a suspended license, suspended stops it reversibly; a revoked license is 409 license_revoked (docs/licensing.md)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** A license and one of its activations, in the path. */
export const ActivationParams = Type.Object({ id: Id, activation_id: Id });

/** A route that takes no body: an absent body is `{}`, and any field sent is refused. */
export const NoBody = Type.Object({}, { additionalProperties: false });
