import type { Id } from '../../db/schema.js';

/** One administrator change (docs/admin.md, 'Audit trail'); `changes` is JSON text. */
export interface AuditTables {
  audit_events: {
    id: Id;
    actor_user_id: number;
    actor_email: string;
    entity_type: string;
    entity_id: number;
    action: string;
    changes: string;
    created_at: string;
  };
}
