import type { FastifyBaseLogger } from 'fastify';
import { type Clock, iso, type TestClock } from '../clock.js';

/** How often a worker looks for due rows when nothing wakes it sooner. */
export const TICK_MS = 1000;

/**
 * What one outbox brings to the shared worker (docs/development.md, 'Outboxes'): how to claim its
 * due rows and how to handle one. The loop, the slots, the lease's timing and the stop are the
 * worker's. `Batch` is what a tick's rows are handled with (the settings, a resolved target).
 */
export interface Outbox<Row, Batch = undefined> {
  /** Names the outbox in log lines ('webhook dispatcher', 'mail worker'). */
  name: string;
  /** How many rows one process handles at once. */
  maxInFlight: number;
  /** How long a claim holds a row: longer than the longest attempt, so a live process keeps its rows. */
  leaseMs: number;
  /**
   * Runs first in every tick: answers what this tick's rows are handled with, or null to claim
   * nothing this tick (delivery is off). Without it every tick claims.
   */
  beforeTick?(): Promise<Batch | null>;
  /** Sets the lease on up to `limit` rows due at `now` and answers them (`OutboxQueries.claimDue`). */
  claim(now: string, leaseUntil: string, limit: number): Promise<Row[]>;
  /**
   * One attempt at one row, recorded with the lease as its guard. While `signal` is aborted (the
   * worker is stopping) an attempt that was cut off must throw, not record: the row is released.
   */
  handle(row: Row, leaseUntil: string, batch: Batch, signal: AbortSignal): Promise<void>;
  /** Gives a claimed row back untouched, guarded by its lease (`OutboxQueries.release`). */
  release(row: Row, leaseUntil: string): Promise<void>;
  /** Cuts off, when stop() begins, work in flight that takes no AbortSignal (an SMTP connection). */
  cutOff?(): void;
  /** The fields that name a row in a log line. */
  describe(row: Row): Record<string, unknown>;
}

export interface WorkerRuntime {
  clock: Clock;
  /** Reloaded before every tick, so a moved test clock is seen by the next tick. */
  testClock: TestClock | null;
  log: FastifyBaseLogger;
  /** The pause between ticks (TICK_MS; tests lengthen it). */
  tickMs?: number;
}

/**
 * Handles an outbox from inside the server process: every second it claims the due rows that fit
 * its free slots (a lease in the row, so any number of processes share the work and a crashed
 * one's rows come back when the lease runs out) and handles each. When a tick filled every free
 * slot more may be due, so each slot that frees up ticks again at once. stop() cuts the attempts
 * in flight off and releases their rows without counting them.
 */
export class OutboxWorker<Row, Batch = undefined> {
  private running = false;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private tickActive = false;
  private tickAgain = false;
  /** The last tick filled every free slot, so more rows may be due: claim again as slots free up. */
  private backlog = false;
  private readonly inFlight = new Set<Promise<void>>();
  private stopping = new AbortController();
  private readonly tickMs: number;

  constructor(
    private readonly outbox: Outbox<Row, Batch>,
    private readonly runtime: WorkerRuntime,
  ) {
    this.tickMs = runtime.tickMs ?? TICK_MS;
  }

  get started(): boolean {
    return this.running;
  }

  /** Starts the background loop (idempotent). The server starts it when it listens. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new AbortController();
    this.schedule(0);
  }

  /** Stops ticking, cuts the attempts in flight off (they do not count and are released) and waits. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.stopping.abort();
    this.outbox.cutOff?.();
    await this.ticking;
    await this.drain();
  }

  /** Waits for the attempts in flight. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** One pass: claim what is due into the free slots and start handling it. Answers how many rows it claimed. */
  async tick(): Promise<number> {
    const { clock, testClock } = this.runtime;
    const signal = this.stopping.signal;
    if (testClock) await testClock.sync();
    const batch = this.outbox.beforeTick ? await this.outbox.beforeTick() : (undefined as Batch);
    if (batch === null) return 0;
    const free = this.outbox.maxInFlight - this.inFlight.size;
    if (free <= 0) return 0;
    const now = clock.now();
    const lease = iso(new Date(now.getTime() + this.outbox.leaseMs));
    const claimed = await this.outbox.claim(iso(now), lease, free);
    this.backlog = claimed.length === free;
    for (const row of claimed) {
      const work: Promise<void> = this.attempt(row, lease, batch, signal).finally(() => {
        this.inFlight.delete(work);
        if (this.backlog && this.running) this.runTick();
      });
      this.inFlight.add(work);
    }
    return claimed.length;
  }

  private async attempt(row: Row, lease: string, batch: Batch, signal: AbortSignal): Promise<void> {
    const { log } = this.runtime;
    try {
      // A row claimed by a tick that stop() overtook is handed back without an attempt.
      signal.throwIfAborted();
      await this.outbox.handle(row, lease, batch, signal);
    } catch (err) {
      if (signal.aborted) {
        // Shutting down: this attempt does not count; the next process to run takes the row.
        await this.outbox
          .release(row, lease)
          .catch((e) =>
            log.error({ err: e, ...this.outbox.describe(row) }, `${this.outbox.name}: release failed`),
          );
        return;
      }
      // The row keeps its lease until it runs out, then is tried again; the loop goes on.
      log.error({ err, ...this.outbox.describe(row) }, `${this.outbox.name}: attempt failed`);
    }
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.runTick();
    }, ms);
    // The HTTP server keeps a serving process alive; the loop alone never should.
    this.timer.unref();
  }

  /** Runs one tick now, or right after the one under way; then the next after tickMs. */
  private runTick(): void {
    if (this.tickActive) {
      this.tickAgain = true;
      return;
    }
    this.tickActive = true;
    this.ticking = this.tick()
      .then(() => undefined)
      .catch((err) => this.runtime.log.error({ err }, `${this.outbox.name} tick failed`))
      .finally(() => {
        this.tickActive = false;
        if (!this.running) return;
        this.schedule(this.tickAgain ? 0 : this.tickMs);
        this.tickAgain = false;
      });
  }
}

/**
 * The retry schedule of an outbox: after failed attempt `attempt` (1 for the first), when the next
 * one is due, `delays[attempt - 1]` seconds after the failed one `started`; null when it was the
 * last (an outbox of n delays makes n + 1 attempts).
 */
export function nextAttempt(attempt: number, delays: readonly number[], started: Date): string | null {
  const delay = delays[attempt - 1];
  return delay === undefined ? null : iso(new Date(started.getTime() + delay * 1000));
}
