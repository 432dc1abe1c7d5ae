import { Type } from 'typebox';

const Str = Type.String();
const NullableStr = Type.Union([Type.String(), Type.Null()]);

/**
 * Package body: the six fields of docs/distribution.md, '2. POST /software/package'. Unknown fields
 * are allowed through the schema so the service can answer them in the documented order
 * (missing_params first, then unsupported_parameter).
 */
export const PackageBody = Type.Object(
  {
    slug: Type.Optional(Str),
    purpose: Type.Optional(Str),
    current_version: Type.Optional(NullableStr),
    license_key: Type.Optional(Str),
    site_url: Type.Optional(Str),
    installation_id: Type.Optional(Str),
  },
  { additionalProperties: true },
);

export const CheckInput = Type.Object(
  {
    slug: Type.Optional(Str),
    version: Type.Optional(Str),
    license_key: Type.Optional(Str),
    site_url: Type.Optional(Str),
    installation_id: Type.Optional(Str),
  },
  { additionalProperties: true },
);

export const ChangelogQuery = Type.Object({ slug: Type.Optional(Str), version: Type.Optional(Str) });

export const ExternalLinkParams = Type.Object({
  product_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
  version_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});

export const ExternalLinkQuery = Type.Object(
  {
    license_key: Type.Optional(Str),
    site_url: Type.Optional(Str),
    installation_id: Type.Optional(Str),
    purpose: Type.Optional(Str),
  },
  { additionalProperties: true },
);

const ProductRef = Type.Object({ id: Type.Integer(), name: Str, slug: Str });

export const Entitlement = Type.Object(
  {
    license_required: Type.Boolean(),
    license_active: Type.Boolean(),
    update_entitled: Type.Boolean(),
    support_active: Type.Union([Type.Boolean(), Type.Null()]),
    usage_expires_at: NullableStr,
    updates_expires_at: NullableStr,
    support_expires_at: NullableStr,
    policy_mode: Str,
    historical_downloads: Type.Boolean(),
    updates_mode: Str,
    support_mode: Str,
    usage_expiry_valid: Type.Boolean(),
    policy_valid: Type.Boolean(),
    policy_error: NullableStr,
    issued_at: Str,
    subscription_status: NullableStr,
    subscription_active: Type.Boolean(),
    subscription_linked: Type.Boolean(),
  },
  { description: 'Entitlements subset (see docs/licensing.md, The entitlements object)' },
);

const TokenFields = {
  download_url: NullableStr,
  token_expires_at: NullableStr,
  token_binding_version: Type.Union([Type.Integer(), Type.Null()]),
};

export const PackageResponse = Type.Object({
  success: Type.Literal(true),
  purpose: Str,
  product: ProductRef,
  version_id: Type.Integer(),
  version: Str,
  artifact_download_id: Str,
  file_name: Str,
  file_size: Type.Union([Type.Integer(), Type.Null()]),
  file_sha256: Str,
  signature: Type.Null(),
  signing_key_id: Type.Null(),
  signed_at: Type.Null(),
  release_date: Str,
  manual_download_only: Type.Boolean(),
  ...TokenFields,
  external_link_url: Type.Optional(Str),
  entitlement: Entitlement,
});

export const CheckResponse = Type.Object({
  success: Type.Literal(true),
  update_available: Type.Boolean(),
  available: Type.Boolean(),
  eligible: Type.Boolean(),
  update_eligible: Type.Boolean(),
  product: ProductRef,
  current_version: Str,
  latest_version: Str,
  available_version: NullableStr,
  eligible_version: NullableStr,
  eligibility_reason: NullableStr,
  changelog: Str,
  release_date: NullableStr,
  file_size: Type.Union([Type.Integer(), Type.Null()]),
  file_sha256: NullableStr,
  signature: Type.Null(),
  signing_key_id: Type.Null(),
  signed_at: Type.Null(),
  ...TokenFields,
  manual_download_only: Type.Boolean(),
  external_link_url: Type.Optional(Str),
  entitlement: Entitlement,
  changelog_url: Str,
});

export const ChangelogResponse = Type.Object({
  slug: Str,
  versions: Type.Array(
    Type.Object({
      version: Str,
      release_date: Str,
      changelog: Type.Object({
        narrative: Str,
        points: Type.Array(Type.Object({ type: Str, text: Str })),
      }),
      download_count: Type.Integer(),
      file_size: Type.Integer(),
      file_sha256: Str,
      signature: Type.Null(),
      signing_key_id: Type.Null(),
    }),
  ),
});

export const ExternalLinkResponse = Type.Object({
  success: Type.Literal(true),
  download_url: Str,
  version: Str,
  file_name: Str,
  file_sha256: Str,
  purpose: Str,
  manual_download: Type.Literal(true),
});

export type PackageBodyType = Record<string, unknown>;
