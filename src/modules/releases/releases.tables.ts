import type { Generated } from 'kysely';
import type { Id } from '../../db/schema.js';

export type ReleaseStatus = 'draft' | 'published' | 'withdrawn';
/** `available` plus the deletion states (docs/releases.md, 'Deleting artifacts'). */
export type ArtifactState = 'available' | 'delete_pending' | 'delete_failed' | 'deleted';
/** Most to least stable (docs/distribution.md, 'Channels and staged rollouts'). */
export type ReleaseChannel = 'stable' | 'rc' | 'beta' | 'alpha';
export type DeletionJobStatus = 'running' | 'completed' | 'failed';

/** What WordPress shows (migration 2026112591; docs/releases.md, 'Metadata WordPress shows'). */
export interface ReleaseMetadata {
  requires: string | null;
  tested: string | null;
  requires_php: string | null;
  name: string | null;
  description: string | null;
  homepage: string | null;
  author: string | null;
}

export interface ReleasesTables {
  /** SQLite only: moved by triggers on every change issuance depends on (migration 2026112212). */
  release_changes: { id: number; generation: number };
  legacy_downloads: {
    id: Id;
    download_id: string;
    product_id: number;
    file_name: string;
    /** Relative to DATA_DIR/public, e.g. `uploads/2026/11/ab12cd34/plugin.zip`. */
    public_path: string;
    file_size: number;
    file_sha256: string;
    created_at: string;
    removed_at: string | null;
  };
  artifacts: {
    id: Id;
    product_id: number;
    /** artifact_download_id: a UUIDv4, or the legacy catalogue id it was protected from. */
    download_id: string;
    driver: string;
    storage_key: string;
    key_id: string | null;
    file_name: string;
    file_size: number | null;
    stored_size: number | null;
    file_sha256: string;
    state: ArtifactState;
    source_download_id: string | null;
    deletion_op: string | null;
    created_at: string;
    updated_at: string;
    deleted_at: string | null;
    /**
     * Migration 2026112590: base64 MD5 of the plain bytes, and the base64 Ed25519 signature over
     * their SHA-384 digest with its key and time (docs/releases.md, 'Signatures and Content-MD5').
     * Null for external links, and for older artifacts until the signing data step has read them.
     */
    file_md5: string | null;
    signature: string | null;
    signing_key_id: string | null;
    signed_at: string | null;
    /** Migration 2026112810: the bucket's ETag of the object when it was written; null in the vault. */
    stored_etag: string | null;
  };
  releases: {
    id: Id;
    product_id: number;
    version: string;
    status: ReleaseStatus;
    is_current: number;
    release_date: string;
    published_at: string | null;
    withdrawn_at: string | null;
    /** JSON text: a string, or {narrative, points}. */
    changelog: string | null;
    download_count: Generated<number>;
    artifact_id: number;
    file_name: string;
    file_size: number | null;
    file_sha256: string;
    created_at: string;
    updated_at: string;
    /**
     * Migration 2026112594 (docs/distribution.md, 'Channels and staged rollouts'): the release's
     * channel, and the percentage of sites it is offered to (100 everyone, 0 paused).
     */
    channel: Generated<ReleaseChannel>;
    rollout_percent: Generated<number>;
  } & ReleaseMetadata;
  artifact_deletions: {
    id: Id;
    op_id: string;
    product_id: number;
    status: DeletionJobStatus;
    /** JSON array of artifact ids. */
    artifact_ids: string;
    fingerprint: string;
    /** JSON array of {artifact_id, state, error_code}. */
    results: string;
    error_code: string | null;
    attempts: number;
    requested_by: number | null;
    created_at: string;
    updated_at: string;
    completed_at: string | null;
  };
}
