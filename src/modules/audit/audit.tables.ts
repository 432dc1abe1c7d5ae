import type { Generated } from 'kysely';
import type { Id } from '../../db/schema.js';

/** One administrator change (docs/admin.md, 'Audit trail'); `changes` is JSON text. */
export interface AuditTables {
  audit_events: {
    id: Id;
    actor_user_id: number;
    /** A site's domain when `actor_kind` is `site`, the job's name when `system` (migration 2026112592). */
    actor_email: string;
    /** `user` (a person: `actor_user_id`), `site` or `system` (`actor_user_id` 0). */
    actor_kind: Generated<string>;
    entity_type: string;
    entity_id: number;
    action: string;
    changes: string;
    created_at: string;
  };
}
