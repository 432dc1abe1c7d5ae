import { type Clock, iso } from '../../clock.js';
import type { Tx } from '../../db/transaction.js';
import type { Actor, AuditEntry, Changes } from './audit.model.js';
import type { AuditFilter, AuditRepository } from './audit.repository.js';

export interface AuditEventView {
  id: number;
  actor: { user_id: number; email: string };
  entity_type: string;
  entity_id: number;
  action: string;
  changes: Changes;
  created_at: string;
}

/**
 * The audit trail (docs/admin.md, 'Audit trail'). `record` takes the change's transaction, not an
 * optional one: an event is written with the change or, when the change rolls back, not at all.
 */
export class AuditService {
  constructor(
    private readonly repo: AuditRepository,
    private readonly clock: Clock,
  ) {}

  async record(actor: Actor, entry: AuditEntry, tx: Tx): Promise<void> {
    await this.repo.insert(
      {
        actor_user_id: actor.user_id,
        actor_email: actor.email,
        entity_type: entry.entity_type,
        entity_id: entry.entity_id,
        action: entry.action,
        changes: JSON.stringify(entry.changes),
        created_at: iso(this.clock.now()),
      },
      tx,
    );
  }

  async list(filter: AuditFilter, page: number, perPage: number) {
    const [rows, total] = await Promise.all([
      this.repo.list(filter, perPage, (page - 1) * perPage),
      this.repo.count(filter),
    ]);
    const items: AuditEventView[] = rows.map((r) => ({
      id: r.id,
      actor: { user_id: r.actor_user_id, email: r.actor_email },
      entity_type: r.entity_type,
      entity_id: r.entity_id,
      action: r.action,
      changes: JSON.parse(r.changes) as Changes,
      created_at: r.created_at,
    }));
    return { items, total };
  }
}
