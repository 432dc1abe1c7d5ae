import type { Insertable, Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { AuditTables } from './audit.tables.js';

export type AuditRow = Selectable<AuditTables['audit_events']>;
export type AuditInsert = Insertable<AuditTables['audit_events']>;

export interface AuditFilter {
  entity_type?: string;
  entity_id?: number;
  actor_user_id?: number;
}

/** The audit trail's queries; each filter is served by one index of the 2026112420 migration. */
export class AuditRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async insert(values: AuditInsert, tx?: Tx): Promise<void> {
    await on(this.db, tx).insertInto('audit_events').values(values).execute();
  }

  private filtered(f: AuditFilter, tx?: Tx): SelectQueryBuilder<DB, 'audit_events', object> {
    let q = on(this.db, tx).selectFrom('audit_events');
    if (f.entity_type !== undefined) q = q.where('entity_type', '=', f.entity_type);
    if (f.entity_id !== undefined) q = q.where('entity_id', '=', f.entity_id);
    if (f.actor_user_id !== undefined) q = q.where('actor_user_id', '=', f.actor_user_id);
    return q;
  }

  /** Newest first: ids grow with time, and order by id is what the indexes end with. */
  list(f: AuditFilter, limit: number, offset: number, tx?: Tx): Promise<AuditRow[]> {
    return this.filtered(f, tx).selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute();
  }

  async count(f: AuditFilter, tx?: Tx): Promise<number> {
    const row = await this.filtered(f, tx)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
