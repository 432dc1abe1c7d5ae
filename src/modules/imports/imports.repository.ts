import type { Database } from '../../db/database.js';
import { on, type Tx } from '../../db/transaction.js';

/** The map from an old store's ids to what the import made of them. */
export class ImportsRepository {
  constructor(private readonly database: Pick<Database, 'db'>) {}

  async target(source: string, kind: string, sourceId: string, tx?: Tx): Promise<number | undefined> {
    const row = await on(this.database.db, tx)
      .selectFrom('import_map')
      .select('target_id')
      .where('source', '=', source)
      .where('kind', '=', kind)
      .where('source_id', '=', sourceId)
      .executeTakeFirst();
    return row ? Number(row.target_id) : undefined;
  }

  /** What these source ids of one kind became, for those imported before. */
  async targets(source: string, kind: string, sourceIds: string[]): Promise<Map<string, number>> {
    if (sourceIds.length === 0) return new Map();
    const rows = await this.database.db
      .selectFrom('import_map')
      .select(['source_id', 'target_id'])
      .where('source', '=', source)
      .where('kind', '=', kind)
      .where('source_id', 'in', sourceIds)
      .execute();
    return new Map(rows.map((r) => [r.source_id, Number(r.target_id)]));
  }

  /**
   * Records what a source record became; a second record of the same id is left as the first.
   * Answers whether this one was recorded (false: another run recorded the id first).
   */
  async remember(
    source: string,
    kind: string,
    sourceId: string,
    targetId: number,
    now: string,
    tx?: Tx,
  ): Promise<boolean> {
    const rows = await on(this.database.db, tx)
      .insertInto('import_map')
      .values({ source, kind, source_id: sourceId, target_id: targetId, created_at: now })
      .onConflict((oc) => oc.columns(['source', 'kind', 'source_id']).doNothing())
      .returning('id')
      .execute();
    return rows.length > 0;
  }

  /** How many records of each kind an import of `source` made, over every run. */
  async counts(source: string): Promise<Record<string, number>> {
    const rows = await this.database.db
      .selectFrom('import_map')
      .select(['kind', (eb) => eb.fn.countAll<number>().as('n')])
      .where('source', '=', source)
      .groupBy('kind')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
  }
}
