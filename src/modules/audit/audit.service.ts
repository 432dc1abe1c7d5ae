import { type Clock, iso } from '../../clock.js';
import type { Tx } from '../../db/transaction.js';
import type { Actor, AuditEntry, Changes, EntityType, SiteActor, SystemActor } from './audit.model.js';
import type { AuditFilter, AuditRepository } from './audit.repository.js';

/**
 * A person as before; a site, or Tollgate's own job, with its kind and name and no user (migration
 * 2026112592).
 */
export type ActorView =
  | { user_id: number; email: string }
  | { kind: 'site' | 'system'; name: string; user_id: null; email: null };

export interface AuditEventView {
  id: number;
  actor: ActorView;
  entity_type: string;
  entity_id: number;
  action: string;
  changes: Changes;
  created_at: string;
}

/** Records an administrator's change to one entity in the change's transaction. */
export type ChangeRecorder = (
  actor: Actor | undefined,
  entityId: number,
  action: string,
  changes: Changes,
  tx: Tx,
) => Promise<void>;

/**
 * The audit trail (docs/admin.md, 'Audit trail'). `record` takes the change's transaction, not an
 * optional one: an event is written with the change or, when the change rolls back, not at all.
 */
export class AuditService {
  constructor(
    private readonly repo: AuditRepository,
    private readonly clock: Clock,
  ) {}

  async record(actor: Actor | SiteActor | SystemActor, entry: AuditEntry, tx: Tx): Promise<void> {
    const site = 'kind' in actor;
    await this.repo.insert(
      {
        actor_user_id: site ? 0 : actor.user_id,
        actor_email: site ? actor.name : actor.email,
        // Left to the column's default for a person, so those inserts stay what they were.
        ...(site ? { actor_kind: actor.kind } : {}),
        entity_type: entry.entity_type,
        entity_id: entry.entity_id,
        action: entry.action,
        changes: JSON.stringify(entry.changes),
        created_at: iso(this.clock.now()),
      },
      tx,
    );
  }

  /**
   * How a service records the administrator's changes to its kind of entity: nothing when no
   * person made the change (a call without an actor) or nothing changed.
   */
  recorderOf(entityType: EntityType): ChangeRecorder {
    return async (actor, entityId, action, changes, tx) => {
      if (!actor || Object.keys(changes).length === 0) return;
      await this.record(actor, { entity_type: entityType, entity_id: entityId, action, changes }, tx);
    };
  }

  async list(filter: AuditFilter, page: number, perPage: number) {
    const [rows, total] = await Promise.all([
      this.repo.list(filter, perPage, (page - 1) * perPage),
      this.repo.count(filter),
    ]);
    const items: AuditEventView[] = rows.map((r) => ({
      id: r.id,
      actor:
        r.actor_kind === 'site' || r.actor_kind === 'system'
          ? { kind: r.actor_kind, name: r.actor_email, user_id: null, email: null }
          : { user_id: r.actor_user_id, email: r.actor_email },
      entity_type: r.entity_type,
      entity_id: r.entity_id,
      action: r.action,
      changes: JSON.parse(r.changes) as Changes,
      created_at: r.created_at,
    }));
    return { items, total };
  }
}
