import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ImportRefusal, type Outcome, type Run } from './import-run.js';
import type { ImportsRepository } from './imports.repository.js';

/**
 * The import map (`import_map`) as every kind's writer reads and writes it: what an earlier run
 * (or this one) made of a source record, and the row that records what this run makes.
 */
export class ImportMap {
  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: ImportsRepository,
    private readonly clock: Clock,
  ) {}

  /** The Tollgate id an earlier run (or this one) recorded for a source record, if any. */
  found(run: Run, kind: string, sourceId: string): Promise<number | undefined> {
    return this.repo.target(run.source, kind, sourceId);
  }

  /** What these source ids of one kind became, for those imported before (one query). */
  targets(run: Run, kind: string, sourceIds: string[]): Promise<Map<string, number>> {
    return this.repo.targets(run.source, kind, sourceIds);
  }

  /**
   * Reads what these source ids of one kind became (one query) and keeps the answers for the run,
   * so that `target` and `optional` find them without a query of their own. Ids already known
   * to the run are not asked again; those never imported stay unknown.
   */
  async preload(run: Run, kind: string, sourceIds: string[]): Promise<void> {
    const ask = [...new Set(sourceIds)].filter((id) => run.planned(kind, id) === undefined);
    if (ask.length === 0) return;
    for (const [sourceId, id] of await this.repo.targets(run.source, kind, ask)) run.plan(kind, sourceId, id);
  }

  /** The Tollgate id of a record imported before (this run or an earlier one), or a refusal. */
  async target(run: Run, kind: string, sourceId: string, missing: string): Promise<number> {
    const planned = run.planned(kind, sourceId);
    if (planned !== undefined) return planned;
    const id = await this.repo.target(run.source, kind, sourceId);
    if (id === undefined) throw new ImportRefusal(missing);
    // Products and variations are few and each is referred to by many licenses: kept for the run.
    if (kind === 'products' || kind === 'variations') run.plan(kind, sourceId, id);
    return id;
  }

  /** The Tollgate id of a record imported before, or null when it was not (it is not required). */
  async optional(run: Run, kind: string, sourceId: string): Promise<number | null> {
    return run.planned(kind, sourceId) ?? (await this.repo.target(run.source, kind, sourceId)) ?? null;
  }

  remember(run: Run, kind: string, sourceId: string, id: number, tx: Tx): Promise<boolean> {
    return this.repo.remember(run.source, kind, sourceId, id, iso(this.clock.now()), tx);
  }

  /**
   * Writes a record that has no natural key to be found by (an order, a subscription) with its
   * map row, or nothing at all when another run at the same time mapped the record first: the
   * write is rolled back, so two runs at once make it once.
   */
  async first(write: (tx: Tx) => Promise<boolean>): Promise<Outcome> {
    try {
      return await withTransaction(this.database, async (tx) => {
        if (!(await write(tx))) throw new MappedElsewhere();
        return 'created' as const;
      });
    } catch (e) {
      if (e instanceof MappedElsewhere) return 'present';
      throw e;
    }
  }
}

/** Rolls back a record's write: another run mapped the record first. */
class MappedElsewhere extends Error {}
