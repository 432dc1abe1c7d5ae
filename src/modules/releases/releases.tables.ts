import type { Generated } from 'kysely';
import type { Id } from '../../db/schema.js';

export type ReleaseStatus = 'draft' | 'published' | 'withdrawn';
/** `available` plus the deletion states (docs/releases.md, 'Deleting artifacts'). */
export type ArtifactState = 'available' | 'delete_pending' | 'delete_failed' | 'deleted';
export type DeletionJobStatus = 'running' | 'completed' | 'failed';

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
  };
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
