import type { Id } from '../../db/schema.js';

export interface ImportsTables {
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
