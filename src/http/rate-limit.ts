import { type Kysely, sql } from 'kysely';
import { type Clock, Occasionally } from '../clock.js';
import type { Database } from '../db/database.js';
import { precompile } from '../db/precompiled.js';
import type { DB } from '../db/schema.js';

const PRUNE_EVERY_MS = 60_000;

export interface RateResult {
  count: number;
  /** Seconds until the current window ends. */
  retryAfter: number;
}

/**
 * Fixed-window counters in the database, so every server process shares them. Counting is one
 * upsert; it is best effort under concurrency in the way the specification allows.
 */
export class RateCounter {
  private readonly db: Kysely<DB>;

  constructor(
    private readonly database: Pick<Database, 'db' | 'sqlite' | 'groupCommit'>,
    private readonly clock: Clock,
  ) {
    this.db = database.db;
  }

  /**
   * At most once a minute per process: the old windows are found by a scan of the table (its key
   * starts with the bucket), which on a busy day holds a row for every client address.
   */
  private readonly pruning = new Occasionally(PRUNE_EVERY_MS, () => this.prune());

  private window(windowSeconds: number) {
    const nowS = Math.floor(this.clock.now().getTime() / 1000);
    const start = nowS - (nowS % windowSeconds);
    return { start, retryAfter: start + windowSeconds - nowS };
  }

  /** Adds one to the bucket's current window and returns the new count. */
  async hit(bucket: string, windowSeconds: number): Promise<RateResult> {
    const { start, retryAfter } = this.window(windowSeconds);
    const row = await this.db
      .insertInto('rate_counters')
      .values({ bucket, window_start: start, count: 1 })
      .onConflict((oc) =>
        oc.columns(['bucket', 'window_start']).doUpdateSet({ count: sql`rate_counters.count + 1` }),
      )
      .returning('count')
      .executeTakeFirstOrThrow();
    this.pruning.maybe(this.clock.now());
    return { count: row.count, retryAfter };
  }

  private compilePair() {
    return precompile(
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
  }
  private pairQuery?: ReturnType<RateCounter['compilePair']>;

  /**
   * Adds one to two buckets' current windows in a single statement (one write instead of two on
   * the issuance hot path); answers their new counts in the order given.
   */
  async hitPair(a: string, b: string, windowSeconds: number): Promise<[RateResult, RateResult]> {
    const { start, retryAfter } = this.window(windowSeconds);
    this.pairQuery ??= this.compilePair();
    const rows = await this.pairQuery.all({ a, b, start });
    this.pruning.maybe(this.clock.now());
    const countOf = (bucket: string) => Number(rows.find((r) => r.bucket === bucket)?.count ?? 0);
    return [
      { count: countOf(a), retryAfter },
      { count: countOf(b), retryAfter },
    ];
  }

  /** The bucket's count in the current window, without adding to it. */
  async peek(bucket: string, windowSeconds: number): Promise<RateResult> {
    const { start, retryAfter } = this.window(windowSeconds);
    const row = await this.db
      .selectFrom('rate_counters')
      .select('count')
      .where('bucket', '=', bucket)
      .where('window_start', '=', start)
      .executeTakeFirst();
    return { count: row?.count ?? 0, retryAfter };
  }

  /** Windows older than a day can never matter again. */
  async prune(): Promise<void> {
    const cutoff = Math.floor(this.clock.now().getTime() / 1000) - 86400;
    await this.db.deleteFrom('rate_counters').where('window_start', '<', cutoff).execute();
  }
}
