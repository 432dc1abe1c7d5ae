import { type Static, type TSchema, Type } from 'typebox';
import { PlainText } from '../../http/schemas.js';
import type { ReleaseChannel } from './releases.tables.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Int = Type.Integer({ minimum: 1, maximum: 2147483647 });
const Hex64 = Type.String({ pattern: '^[0-9a-f]{64}$' });
/** Catalogue download ids: the UUIDs this server makes, or ids migrated from an older store. */
const DownloadId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' });

export const ProductIdParams = Type.Object({ product_id: Int });
export const VersionParams = Type.Object({ product_id: Int, version_id: Int });
export const ArtifactParams = Type.Object({ product_id: Int, artifact_id: Int });
export const OpParams = Type.Object({ op: Type.String({ pattern: '^[0-9a-f-]{36}$' }) });
export const IdParams = Type.Object({ id: Int });

/** Checked by the service (parseChangelog) so every malformed changelog is `invalid_changelog`. */
const ChangelogInput = Type.Unknown({
  description: 'narrative string, or {narrative, points:[{type, text}]}',
});
const SetCurrent = Type.Union([Type.Boolean(), Type.Enum(['true', 'false'])]);
/** docs/distribution.md, 'Channels and staged rollouts'. */
export const ChannelSchema = Type.Enum(['stable', 'rc', 'beta', 'alpha'], {
  description: 'stable (the default), rc, beta or alpha: most to least stable',
});
export const RolloutPercent = Type.Integer({
  minimum: 0,
  maximum: 100,
  description: 'percentage of sites offered the release: 100 everyone (the default), 0 paused',
});

/**
 * JSON publication: an external link or a protected legacy catalogue file (docs/releases.md,
 * 'External link (JSON)' and 'Files from the old catalogue').
 */
export const ReleaseJsonBody = Type.Object(
  {
    version: Type.String({ maxLength: 200 }),
    external_url: Type.Optional(Type.String({ maxLength: 2048 })),
    file_sha256: Type.Optional(Type.String({ maxLength: 64 })),
    file_size: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    file_name: Type.Optional(Type.String({ maxLength: 255 })),
    legacy_download_id: Type.Optional(DownloadId),
    changelog: Type.Optional(ChangelogInput),
    set_current: Type.Optional(SetCurrent),
    status: Type.Optional(Type.Enum(['published', 'draft'])),
    channel: Type.Optional(ChannelSchema),
    rollout_percent: Type.Optional(RolloutPercent),
  },
  { additionalProperties: false },
);
export type ReleaseJsonBody = Static<typeof ReleaseJsonBody>;
export type ExternalReleaseBody = ReleaseJsonBody & { external_url: string; file_sha256: string };
export type LegacyReleaseBody = ReleaseJsonBody & { legacy_download_id: string };

/**
 * What WordPress shows of a release (docs/releases.md, 'Metadata WordPress shows'): null clears a
 * field. Versions look like `6.1` or `8.0`; URLs are http(s); text is one bounded line.
 */
const WpVersion = Type.String({ pattern: '^[0-9]{1,4}(\\.[0-9]{1,4}){0,3}$', maxLength: 20 });
const WebUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000 });
export const MetadataInput = {
  requires: Type.Optional(Nullable(WpVersion)),
  tested: Type.Optional(Nullable(WpVersion)),
  requires_php: Type.Optional(Nullable(WpVersion)),
  name: Type.Optional(Nullable(PlainText({ minLength: 1, maxLength: 200 }))),
  description: Type.Optional(Nullable(PlainText({ minLength: 1, maxLength: 2000 }))),
  homepage: Type.Optional(Nullable(WebUrl)),
  author: Type.Optional(Nullable(PlainText({ minLength: 1, maxLength: 200 }))),
};
export type MetadataInput = { [K in keyof typeof MetadataInput]?: string | null };

export const ReleaseUpdateBody = Type.Object(
  {
    changelog: Type.Optional(ChangelogInput),
    is_current: Type.Optional(Type.Boolean()),
    channel: Type.Optional(ChannelSchema),
    rollout_percent: Type.Optional(RolloutPercent),
    ...MetadataInput,
  },
  { additionalProperties: false },
);
export type ReleaseUpdateBody = {
  changelog?: unknown;
  is_current?: boolean;
  channel?: ReleaseChannel;
  rollout_percent?: number;
} & MetadataInput;

export const RolloutBody = Type.Object({ rollout_percent: RolloutPercent }, { additionalProperties: false });
export type RolloutBody = Static<typeof RolloutBody>;

export { EmptyBody } from '../../http/schemas.js';

export const RepublishBody = Type.Object(
  { set_current: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type RepublishBody = Static<typeof RepublishBody>;

export const ProtectBody = Type.Object({ download_id: DownloadId }, { additionalProperties: false });

export const ValidateBody = Type.Object(
  { file_name: PlainText({ minLength: 1, maxLength: 255 }), version: Type.String({ maxLength: 200 }) },
  { additionalProperties: false },
);

const TargetIds = Type.Array(Int, { maxItems: 1000 });
export const DeletionPreviewBody = Type.Object(
  { artifact_ids: Type.Optional(TargetIds), release_ids: Type.Optional(TargetIds) },
  { additionalProperties: false },
);
export type DeletionPreviewBody = Static<typeof DeletionPreviewBody>;

const Confirmation = {
  acknowledgement: Type.Optional(PlainText({ maxLength: 200 })),
  fingerprint: Type.Optional(Type.String({ maxLength: 64 })),
};
export const DeletionExecuteBody = Type.Object(
  { artifact_ids: Type.Optional(TargetIds), release_ids: Type.Optional(TargetIds), ...Confirmation },
  { additionalProperties: false },
);
export type DeletionExecuteBody = Static<typeof DeletionExecuteBody>;
export const ArtifactDeleteBody = Type.Object(Confirmation, { additionalProperties: false });
export type ArtifactDeleteBody = Static<typeof ArtifactDeleteBody>;

// ---- responses ----

const Time = Type.String({ description: 'YYYY-MM-DD HH:MM:SS UTC' });
const ChangelogOut = Nullable(
  Type.Union([
    Type.String(),
    Type.Object({
      narrative: Type.String(),
      points: Type.Array(Type.Object({ type: Type.String(), text: Type.String() })),
    }),
  ]),
);

export const ReleaseResponse = Type.Object({
  version_id: Type.Integer(),
  product_id: Type.Integer(),
  version: Type.String(),
  status: Type.Enum(['draft', 'published', 'withdrawn']),
  is_current: Type.Boolean(),
  published_at: Nullable(Time),
  release_date: Time,
  withdrawn_at: Nullable(Time),
  changelog: ChangelogOut,
  download_count: Type.Integer(),
  artifact_id: Type.Integer(),
  artifact_download_id: Type.String(),
  artifact_state: Type.String(),
  file_name: Type.String(),
  file_size: Nullable(Type.Integer()),
  file_sha256: Type.String(),
  storage_driver: Type.String(),
  manual_download_only: Type.Boolean(),
  external_url: Nullable(Type.String()),
  signature: Nullable(Type.String({ description: 'base64 Ed25519 signature over the SHA-384 of the bytes' })),
  signing_key_id: Nullable(Type.String({ description: 'the key in GET /v1/software/signing-keys' })),
  signed_at: Nullable(Time),
  requires: Nullable(Type.String()),
  tested: Nullable(Type.String()),
  requires_php: Nullable(Type.String()),
  name: Nullable(Type.String()),
  description: Nullable(Type.String()),
  homepage: Nullable(Type.String()),
  author: Nullable(Type.String()),
  channel: ChannelSchema,
  rollout_percent: Type.Integer(),
  sites_taken: Type.Optional(
    Type.Integer({ description: 'releases list only: distinct sites whose download of it is on record' }),
  ),
});

export const VersionsResponse = Type.Object({
  product_id: Type.Integer(),
  config: Type.Object({}, { additionalProperties: true }),
  automatic_storage_driver: Nullable(Type.String()),
  releases: Type.Array(ReleaseResponse),
});

export const LegacyDownloadResponse = Type.Object({
  download_id: Type.String(),
  file_name: Type.String(),
  file_sha256: Hex64,
  file_size: Type.Integer(),
  public_url: Type.String(),
});

export const ProtectResponse = Type.Object({
  artifact_id: Type.Integer(),
  artifact_download_id: Type.String(),
  storage_driver: Type.String(),
  file_sha256: Type.String(),
  file_size: Type.Integer(),
});

export const DeletePublicSourceResponse = Type.Object({
  success: Type.Boolean(),
  version_id: Type.Integer(),
  download_id: Type.String(),
  removed: Type.Boolean(),
});

export const ValidateResponse = Type.Object({
  valid: Type.Boolean(),
  expected_file_name: Type.String(),
  template: Type.String(),
  reasons: Type.Array(Type.String()),
});

export const ArtifactResponse = Type.Object({
  artifact_id: Type.Integer(),
  product_id: Type.Integer(),
  artifact_download_id: Type.String(),
  storage_driver: Type.String(),
  state: Type.String(),
  file_name: Type.String(),
  file_size: Nullable(Type.Integer()),
  file_sha256: Type.String(),
  key_id: Nullable(Type.String()),
  source_download_id: Nullable(Type.String()),
  deletion_op: Nullable(Type.String()),
  releases: Type.Array(
    Type.Object({
      version_id: Type.Integer(),
      version: Type.String(),
      status: Type.String(),
      is_current: Type.Boolean(),
    }),
  ),
});

// The answers below name the fields the console reads; any further field passes through as it is.
const Open = <P extends Record<string, TSchema>>(properties: P) =>
  Type.Object(properties, { additionalProperties: true });
const Counts = Type.Record(Type.String(), Type.Integer());

export const PreviewResponse = Type.Object({
  product_id: Type.Integer(),
  targets: Type.Array(
    Open({
      artifact_id: Type.Integer(),
      storage_driver: Type.String(),
      file_name: Nullable(Type.String()),
      file_size: Nullable(Type.Integer()),
      file_sha256: Nullable(Type.String()),
      stored: Open({ exists: Type.Boolean(), size: Nullable(Type.Integer()) }),
      releases: Type.Array(
        Open({
          version_id: Type.Integer(),
          version: Type.String(),
          status: Type.String(),
          is_current: Type.Boolean(),
        }),
      ),
      outstanding_tokens: Type.Integer(),
    }),
  ),
  totals: Open({
    artifacts: Type.Integer(),
    releases: Type.Integer(),
    published_releases: Type.Integer(),
    current_releases: Type.Integer(),
    outstanding_tokens: Type.Integer(),
    bytes: Type.Integer(),
  }),
  acknowledgement: Type.String(),
  fingerprint: Hex64,
});

export const DeletionJobResponse = Type.Object({
  op_id: Type.String(),
  product_id: Type.Integer(),
  status: Type.Union([Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
  artifact_ids: Type.Array(Type.Integer()),
  results: Type.Array(
    Open({ artifact_id: Type.Integer(), state: Type.String(), error_code: Nullable(Type.String()) }),
  ),
  error_code: Nullable(Type.String()),
  attempts: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
  completed_at: Nullable(Type.String()),
});

export const StorageStatusResponse = Open({
  vault: Open({
    path: Type.String(),
    exists: Type.Boolean(),
    writable: Type.Boolean(),
    mode: Nullable(Type.String()),
    private: Type.Boolean(),
    public_root: Nullable(Type.String()),
    free_bytes: Nullable(Type.Number()),
    total_bytes: Nullable(Type.Number()),
  }),
  public_roots: Type.Array(Type.String()),
  automatic_driver: Nullable(Type.String()),
  automatic_reason: Type.String(),
  drivers: Type.Array(Type.String()),
  max_upload_bytes: Type.Number(),
  encryption: Open({
    algorithm: Type.String(),
    key_source: Type.String(),
    key_id: Nullable(Type.String()),
    key_file: Nullable(Type.String()),
    key_file_mode: Nullable(Type.String()),
    previous_key_ids: Type.Array(Type.String()),
    artifacts_on_previous_keys: Type.Integer(),
    artifacts_with_unknown_key: Type.Integer(),
    secrets_on_previous_keys: Type.Integer(),
    secrets_with_unknown_key: Type.Integer(),
  }),
  staging: Open({ path: Type.String(), files: Type.Integer(), bytes: Type.Number() }),
  counts: Open({
    artifacts: Counts,
    artifact_states: Counts,
    releases: Counts,
    public_sources: Type.Integer(),
    failed_deletion_jobs: Type.Integer(),
  }),
});
