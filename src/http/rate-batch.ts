import type pg from 'pg';
import { pgBatchCounts } from '../db/pg-batch.js';
import { poolQuery, statementName } from '../db/pg-names.js';
import { TurnQueue } from '../db/turn-queue.js';

interface Waiter {
  buckets: string[];
  start: number;
  resolve(rows: { bucket: string; count: number }[]): void;
  reject(error: unknown): void;
  /** The same hits in a statement of its own (the batch failed). */
  alone(): Promise<{ bucket: string; count: number }[]>;
}

/**
 * The counter hits of one turn of the event loop, sent to PostgreSQL as one upsert. Every update
 * check adds one to two buckets (its license's and its client address's); sent one by one, that is
 * a statement per check, and a statement costs node-postgres about 100 µs of CPU whatever it does
 * (docs/performance.md, 'Writes of a turn in one statement').
 *
 * A bucket hit by several callers in the turn is one row of the statement, raised by their number
 * (an upsert may not touch a row twice), and each caller is answered the count its own hit made, in
 * the order of the calls, as if they had run one after another. Rows go in sorted order, so two
 * processes' batches lock shared rows in the same order. A batch that fails is run again call by
 * call: a failed statement changed nothing.
 */
export class PgCounterBatch {
  private readonly turn = new TurnQueue<Waiter>((batch) => this.flush(batch));
  private static readonly TEXT =
    'insert into "rate_counters" ("bucket", "window_start", "count") ' +
    'select * from unnest((select $1::varchar[]), (select $2::int8[]), (select $3::int4[])) ' +
    'on conflict ("bucket", "window_start") do update set "count" = "rate_counters"."count" + excluded."count" ' +
    'returning "bucket", "window_start", "count"';
  private static readonly NAME = statementName(PgCounterBatch.TEXT);

  constructor(private readonly pool: pg.Pool) {}

  /** Adds one to each of `buckets` in window `start`; answers their new counts. */
  hit(
    buckets: string[],
    start: number,
    alone: () => Promise<{ bucket: string; count: number }[]>,
  ): Promise<{ bucket: string; count: number }[]> {
    return new Promise((resolve, reject) => {
      this.turn.push({ buckets, start, resolve, reject, alone });
    });
  }

  private flush(batch: Waiter[]): void {
    if (batch.length === 1) {
      this.runAlone(batch[0]!);
      return;
    }
    // How many hits each (window, bucket) takes in this turn, in call order.
    const hits = new Map<string, { bucket: string; start: number; n: number }>();
    for (const w of batch) {
      for (const bucket of w.buckets) {
        const key = `${w.start}\u0000${bucket}`;
        const row = hits.get(key);
        if (row) row.n++;
        else hits.set(key, { bucket, start: w.start, n: 1 });
      }
    }
    const rows = [...hits.values()].sort((x, y) =>
      x.bucket < y.bucket ? -1 : x.bucket > y.bucket ? 1 : x.start - y.start,
    );
    poolQuery(this.pool, {
      name: PgCounterBatch.NAME,
      text: PgCounterBatch.TEXT,
      values: [rows.map((r) => r.bucket), rows.map((r) => r.start), rows.map((r) => r.n)],
    }).then(
      (result) => {
        pgBatchCounts.statements++;
        // The count after the whole batch; the callers share it out in call order.
        const after = new Map<string, number>();
        for (const r of result.rows as { bucket: string; window_start: number; count: number }[]) {
          after.set(`${r.window_start}\u0000${r.bucket}`, r.count);
        }
        const given = new Map<string, number>();
        for (const w of batch) {
          w.resolve(
            w.buckets.map((bucket) => {
              const key = `${w.start}\u0000${bucket}`;
              const before = given.get(key) ?? 0;
              given.set(key, before + 1);
              const total = after.get(key) ?? 0;
              return { bucket, count: total - hits.get(key)!.n + before + 1 };
            }),
          );
        }
      },
      () => {
        pgBatchCounts.failures++;
        for (const w of batch) this.runAlone(w);
      },
    );
  }

  private runAlone(w: Waiter): void {
    w.alone().then(w.resolve, w.reject);
  }
}
