import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import { FlushWorker } from './flush.worker.js';
import type { CounterRow, ReportsRepository } from './reports.repository.js';

/** How often the counts in memory are added to the database (docs/admin.md, 'Dashboard'). */
export const FLUSH_EVERY_MS = 5000;

const DAY_MS = 86_400_000;

export type CounterKind = 'update_check' | 'download';

/** Counts of one product on one day, by kind. */
interface Counts {
  update_check: number;
  download: number;
}

/**
 * Update checks and downloads per UTC day and product, counted in memory by the routes and added to
 * `daily_counters` every FLUSH_EVERY_MS and when the server closes. Counting is a map lookup and an
 * increment: the update check and the download send no statement for it (docs/performance.md,
 * 'The dashboard's report'). The flush adds (`count = count + excluded.count`), so every process serving one
 * database adds its own counts. A crash loses what was counted since the last flush: at most
 * FLUSH_EVERY_MS of counts (more only while the database refuses flushes, which are retried).
 */
export class DailyCounters extends FlushWorker {
  private days = new Map<string, Map<number, Counts>>();
  private dayStart = 0;
  private dayEnd = 0;
  private today: Map<number, Counts> | null = null;

  constructor(
    private readonly repo: ReportsRepository,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {
    super(FLUSH_EVERY_MS);
  }

  /** Counts one event of `productId` today, by the server's clock. */
  add(kind: CounterKind, productId: number): void {
    const now = this.clock.now().getTime();
    let day = this.today;
    if (day === null || now < this.dayStart || now >= this.dayEnd) day = this.switchDay(now);
    const counts = day.get(productId);
    if (counts) counts[kind] += 1;
    else
      day.set(
        productId,
        kind === 'download' ? { update_check: 0, download: 1 } : { update_check: 1, download: 0 },
      );
  }

  private switchDay(now: number): Map<number, Counts> {
    this.dayStart = Math.floor(now / DAY_MS) * DAY_MS;
    this.dayEnd = this.dayStart + DAY_MS;
    const key = new Date(this.dayStart).toISOString().slice(0, 10);
    let day = this.days.get(key);
    if (!day) {
      day = new Map();
      this.days.set(key, day);
    }
    this.today = day;
    return day;
  }

  /** Adds what was counted so far to the database; on failure it is kept for the next flush. */
  protected async run(): Promise<void> {
    if (this.days.size === 0) return;
    const taken = this.days;
    this.days = new Map();
    this.today = null;
    const rows: CounterRow[] = [];
    for (const [day, products] of taken) {
      for (const [product_id, c] of products) {
        if (c.update_check > 0) rows.push({ kind: 'update_check', day, product_id, count: c.update_check });
        if (c.download > 0) rows.push({ kind: 'download', day, product_id, count: c.download });
      }
    }
    await this.repo.addCounters(rows).catch((err) => {
      this.log.warn({ err }, 'daily counters flush failed; kept for the next one');
      for (const r of rows) {
        const day = this.switchDay(new Date(`${r.day}T00:00:00.000Z`).getTime());
        const counts = day.get(r.product_id) ?? { update_check: 0, download: 0 };
        counts[r.kind as CounterKind] += r.count;
        day.set(r.product_id, counts);
      }
      this.today = null;
    });
  }
}
