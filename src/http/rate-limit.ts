import { type Clock, Occasionally } from '../clock.js';
import { MemoryCounts } from '../count-table.js';
import type { Database } from '../db/database.js';
import { sha256 } from '../random.js';
import { RateCountersRepository } from './rate-limit.repository.js';

const PRUNE_EVERY_MS = 60_000;

export interface RateResult {
  count: number;
  /** Seconds until the current window ends. */
  retryAfter: number;
}

/** The start of the window of `windowSeconds` that holds `now`, and the seconds left in it. */
function windowOf(now: Date, windowSeconds: number) {
  const nowS = Math.floor(now.getTime() / 1000);
  const start = nowS - (nowS % windowSeconds);
  return { start, retryAfter: start + windowSeconds - nowS };
}

/**
 * Fixed-window counters in the database, so that every server process shares them (PostgreSQL)
 * and a restart forgets nothing; counting is one upsert, best effort under concurrency (counting
 * is documented as best effort: docs/distribution.md, '7. Limits').
 */
export class RateCounter {
  private readonly stored: RateCountersRepository;

  constructor(
    database: Pick<Database, 'db' | 'sqlite' | 'groupCommit' | 'pg'>,
    private readonly clock: Clock,
  ) {
    this.stored = new RateCountersRepository(database);
  }

  /**
   * At most once a minute per process: the old windows are found by a scan of the table (its key
   * starts with the bucket), which on a busy day holds a row for every client address.
   */
  private readonly pruning = new Occasionally(PRUNE_EVERY_MS, () => this.prune());

  private window(windowSeconds: number) {
    const now = this.clock.now();
    this.pruning.maybe(now);
    return windowOf(now, windowSeconds);
  }

  /**
   * A client address as its buckets name it: a hash of it, so that the table, which every process
   * and the backups share, holds no address.
   */
  addressKey(ip: string): string {
    return sha256(ip).slice(0, 32);
  }

  /** Adds one to the bucket's current window and returns the new count. */
  async hit(bucket: string, windowSeconds: number): Promise<RateResult> {
    const { start, retryAfter } = this.window(windowSeconds);
    return { count: await this.stored.hit(bucket, start), retryAfter };
  }

  /**
   * Adds one to two buckets' current windows in a single statement (one write instead of two on
   * the issuance hot path); answers their new counts in the order given.
   */
  async hitPair(a: string, b: string, windowSeconds: number): Promise<[RateResult, RateResult]> {
    const { start, retryAfter } = this.window(windowSeconds);
    const rows = await this.stored.hitPair(a, b, start);
    const countOf = (bucket: string) => Number(rows.find((r) => r.bucket === bucket)?.count ?? 0);
    return [
      { count: countOf(a), retryAfter },
      { count: countOf(b), retryAfter },
    ];
  }

  /**
   * Adds one to the bucket's current window only while its count is below `limit`, in one
   * statement, so that parallel callers (from any number of processes on PostgreSQL) can never
   * take more than `limit` between them. `start` names the window, for `release`.
   */
  async take(
    bucket: string,
    windowSeconds: number,
    limit: number,
  ): Promise<RateResult & { taken: boolean; start: number }> {
    const { start, retryAfter } = this.window(windowSeconds);
    const count = await this.stored.take(bucket, start, limit);
    return { taken: count !== undefined, count: count ?? limit, retryAfter, start };
  }

  /** Gives back one taken in window `start` (an attempt that turned out not to count). */
  async release(bucket: string, start: number): Promise<void> {
    await this.stored.release(bucket, start);
  }

  /** The bucket's count in the current window, without adding to it. */
  async peek(bucket: string, windowSeconds: number): Promise<RateResult> {
    const { start, retryAfter } = windowOf(this.clock.now(), windowSeconds);
    return { count: await this.stored.peek(bucket, start), retryAfter };
  }

  /** Windows older than a day can never matter again. */
  async prune(): Promise<void> {
    const nowS = Math.floor(this.clock.now().getTime() / 1000);
    await this.stored.prune(nowS - 86400);
  }
}

/**
 * The software issuance limits' counters on SQLite, in the memory of the one process that serves
 * the store, synchronous: every update check counts two buckets, and in the database that was two
 * new rows in random places of an index per check (each license and client address has its own
 * bucket), two of the four pages each check wrote to the WAL and a checkpoint copied back
 * (docs/performance.md, 'In-memory issuance rate counters'). At most `slots` buckets; a restart
 * forgets the current minute's counts. Only for limits documented as best effort
 * (docs/distribution.md, '7. Limits'). Chosen at wiring (src/modules/distribution).
 */
export class MemoryRateCounter {
  private readonly counts: MemoryCounts;

  constructor(
    slots: number,
    private readonly clock: Clock,
  ) {
    this.counts = new MemoryCounts(slots);
  }

  /**
   * A client address as its buckets name it. The address itself: these buckets never leave the
   * process, where the database's are named by a hash of it (RateCounter.addressKey).
   */
  addressKey(ip: string): string {
    return ip;
  }

  /** RateCounter.hitPair's answer, counted here and given at once. */
  hitPair(a: string, b: string, windowSeconds: number): [RateResult, RateResult] {
    const { start, retryAfter } = windowOf(this.clock.now(), windowSeconds);
    return [
      { count: this.counts.add(a, start), retryAfter },
      { count: this.counts.add(b, start), retryAfter },
    ];
  }
}
