import { type Kysely, sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { DB } from '../db/schema.js';

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
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
  ) {}

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
    if (Math.random() < 0.01) void this.prune().catch(() => {});
    return { count: row.count, retryAfter };
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
