import { Type } from 'typebox';
import { SiteFactInputs } from '../reports/installed-base.schemas.js';

const Str = Type.String();
/** Checked by the service, so that every wrong value is `invalid_channel`. */
const ChannelText =
  "stable (the default), rc, beta or alpha: the site takes the best release of that channel or a more stable one (docs/distribution.md, 'Channels and staged rollouts')";
const ChannelOut = Type.Enum(['stable', 'rc', 'beta', 'alpha']);
/** What a check or package answer says of channels (docs/distribution.md, 'Channels and staged rollouts'). */
const ChannelFields = {
  channel: Type.Enum(['stable', 'rc', 'beta', 'alpha'], {
    description: 'the channel served: the one asked, or the least stable one the license allows',
  }),
  channel_reason: Type.Union([Type.Literal('not_entitled'), Type.Null()], {
    description: 'not_entitled when the license narrowed the channel asked; null otherwise',
  }),
  release_channel: Type.Union([ChannelOut, Type.Null()], {
    description: 'the channel of the release offered (null when none)',
  }),
};
const NullableStr = Type.Union([Type.String(), Type.Null()]);

/**
 * The release signature (docs/distribution.md, 'Verifying a release'): null for an external
 * release, whose bytes the store never reads, and for one not signed yet.
 */
const SignatureFields = {
  signature: Type.Union([Type.String(), Type.Null()], {
    description: 'base64 Ed25519 signature over the SHA-384 digest (48 raw bytes) of the package',
  }),
  signing_key_id: Type.Union([Type.String(), Type.Null()], {
    description: 'the key in GET /v1/software/signing-keys that verifies it',
  }),
  signed_at: Type.Union([Type.String(), Type.Null()], { description: 'YYYY-MM-DD HH:MM:SS UTC' }),
};

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
    channel: Type.Optional(Type.Unknown({ description: ChannelText })),
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
    channel: Type.Optional(Type.Unknown({ description: ChannelText })),
    // What the site runs, for the installed-base report (docs/distribution.md, 'What runs in the field').
    ...SiteFactInputs,
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

/**
 * What WordPress shows of the release being offered (docs/distribution.md, 'Release metadata'):
 * `name` is the release's, else the product's; `icons` and `banners` are the product's; the others
 * are null when unknown.
 */
const ReleaseMetadata = {
  name: Str,
  icons: Type.Object(
    { '1x': Type.Optional(Str), '2x': Type.Optional(Str) },
    {
      description:
        "The product's icon, 128×128 (1x) and 256×256 (2x), as absolute URLs; {} without one (docs/distribution.md, section 10)",
    },
  ),
  banners: Type.Object(
    { low: Type.Optional(Str), high: Type.Optional(Str) },
    {
      description:
        "The product's banner, 772×250 (low) and 1544×500 (high), as absolute URLs; {} without one (docs/distribution.md, section 10)",
    },
  ),
  description: NullableStr,
  homepage: NullableStr,
  author: NullableStr,
  requires: Type.Union([Type.String(), Type.Null()], {
    description: 'WordPress version required (Requires at least)',
  }),
  tested: Type.Union([Type.String(), Type.Null()], { description: 'WordPress version tested up to' }),
  requires_php: NullableStr,
};

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
  ...SignatureFields,
  release_date: Str,
  manual_download_only: Type.Boolean(),
  ...TokenFields,
  external_link_url: Type.Optional(Str),
  entitlement: Entitlement,
  ...ChannelFields,
  ...ReleaseMetadata,
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
  ...SignatureFields,
  ...TokenFields,
  manual_download_only: Type.Boolean(),
  external_link_url: Type.Optional(Str),
  entitlement: Entitlement,
  changelog_url: Str,
  message: Type.Union([Type.String(), Type.Null()], {
    description:
      "What the customer can be shown when eligibility_reason is set (docs/distribution.md, 'Messages a vendor can show')",
  }),
  renewal_url: Type.Union([Type.String(), Type.Null()], {
    description:
      "Where buying or renewing would help: a term license's one-click renewal link (also while it ends within 30 days), else the storefront page of the product, else the setting renewal_url",
  }),
  ...ChannelFields,
  ...ReleaseMetadata,
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
      ...SignatureFields,
      channel: ChannelOut,
      ...ReleaseMetadata,
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
