import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.js';
import { type Precompiled, precompile } from '../db/precompiled.js';
import type { DB } from '../db/schema.js';
import { on, type Tx } from '../db/transaction.js';
import { PgCounterBatch } from './rate-batch.js';

type PairArgs = 'a' | 'b' | 'start';

/** The `rate_counters` table: one row per bucket and window (src/http/rate-limit.ts). */
export class RateCountersRepository {
  private readonly db: Kysely<DB>;
  /**
   * Compiled on its first use, not here: only the issuance counter runs it, and on SQLite that
   * counter counts in memory. Compiled by every counter, a SQLite store would list among its hot
   * statements one it never runs (test/foundation/hot-queries.test.ts).
   */
  private pair: Precompiled<PairArgs, { bucket: string; count: number }> | null = null;

  /** On PostgreSQL, the pairs of one turn go as one statement (src/http/rate-batch.ts). */
  private readonly pgPairs: PgCounterBatch | null;

  constructor(private readonly database: Pick<Database, 'db' | 'sqlite' | 'groupCommit' | 'pg'>) {
    this.db = database.db;
    this.pgPairs = database.pg ? new PgCounterBatch(database.pg) : null;
  }

  /** Adds one to the bucket's window and answers the new count. */
  async hit(bucket: string, start: number, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .insertInto('rate_counters')
      .values({ bucket, window_start: start, count: 1 })
      .onConflict((oc) =>
        oc.columns(['bucket', 'window_start']).doUpdateSet({ count: sql`rate_counters.count + 1` }),
      )
      .returning('count')
      .executeTakeFirstOrThrow();
    return row.count;
  }

  /**
   * Adds one to two buckets' window in a single statement, precompiled (on SQLite it joins the
   * turn's group commit, on PostgreSQL the turn's counter batch); answers each bucket's new count.
   */
  hitPair(a: string, b: string, start: number): Promise<{ bucket: string; count: number }[]> {
    if (this.pgPairs) return this.pgPairs.hit([a, b], start, () => this.hitPairAlone(a, b, start));
    return this.hitPairAlone(a, b, start);
  }

  private hitPairAlone(a: string, b: string, start: number): Promise<{ bucket: string; count: number }[]> {
    this.pair ??= precompile(
      this.database,
      ['a', 'b', 'start'] as const,
      (p) =>
        this.db
          .insertInto('rate_counters')
          .values([
            { bucket: p.a, window_start: p.start as unknown as number, count: 1 },
            { bucket: p.b, window_start: p.start as unknown as number, count: 1 },
          ])
          .onConflict((oc) =>
            oc.columns(['bucket', 'window_start']).doUpdateSet({ count: sql`rate_counters.count + 1` }),
          )
          .returning(['bucket', 'count']),
      { write: true },
    );
    return this.pair.all({ a, b, start });
  }

  /** Adds one to the bucket's window only while its count is below `limit`: the new count, or undefined. */
  async take(bucket: string, start: number, limit: number, tx?: Tx): Promise<number | undefined> {
    const row = await on(this.db, tx)
      .insertInto('rate_counters')
      .values({ bucket, window_start: start, count: 1 })
      .onConflict((oc) =>
        oc
          .columns(['bucket', 'window_start'])
          .doUpdateSet({ count: sql`rate_counters.count + 1` })
          .where('rate_counters.count', '<', limit),
      )
      .returning('count')
      .executeTakeFirst();
    return row?.count;
  }

  /** Takes one back from the bucket's window, never below zero. */
  async release(bucket: string, start: number, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('rate_counters')
      .set({ count: sql`count - 1` })
      .where('bucket', '=', bucket)
      .where('window_start', '=', start)
      .where('count', '>', 0)
      .execute();
  }

  async peek(bucket: string, start: number, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .selectFrom('rate_counters')
      .select('count')
      .where('bucket', '=', bucket)
      .where('window_start', '=', start)
      .executeTakeFirst();
    return row?.count ?? 0;
  }

  /** Deletes the windows that started before `cutoff`. */
  async prune(cutoff: number, tx?: Tx): Promise<void> {
    await on(this.db, tx).deleteFrom('rate_counters').where('window_start', '<', cutoff).execute();
  }
}
