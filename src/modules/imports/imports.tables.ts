import type { Id } from '../../db/schema.js';

export interface ImportsTables extends ImportJobsTables {
  /** What an import made of each source record (migration 2026112940). */
  import_map: {
    id: Id;
    source: string;
    kind: string;
    source_id: string;
    target_id: number;
    created_at: string;
  };
}

export interface ImportJobsTables {
  /** Imports started from the console, their progress and report (migration 2026113070). */
  import_jobs: {
    id: Id;
    source: string;
    dry_run: number;
    status: string;
    /** 1 while queued or running, null after: at most one such row (a unique index). */
    active: number | null;
    dir: string | null;
    table_prefix: string | null;
    /** JSON: the counts per kind so far. */
    counts: string;
    total: number | null;
    /** JSON: the report, once done. */
    report: string | null;
    failure_reason: string | null;
    failure_message: string | null;
    created_by: number;
    created_at: string;
    started_at: string | null;
    finished_at: string | null;
    /** Written while the job runs; an active job whose heartbeat stopped was interrupted. */
    heartbeat_at: string;
  };
}
