import type { FastifyBaseLogger } from 'fastify';
import { type Clock, iso, type TestClock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { deliveryHeaders } from './signer.js';
import { refuseTarget, type TargetResolver } from './target.js';
import type { AttemptOutcome, EventRow, WebhooksRepository } from './webhooks.repository.js';

/**
 * Delay before attempts 2 to 5, in seconds; after attempt 5 the event is abandoned
 * (docs/webhooks.md, 'Delivery, retries and the attempt log').
 */
export const RETRY_DELAYS = [60, 300, 1800, 7200] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS.length + 1;
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** A claim outlives the longest attempt, so a live process never loses an event it is sending. */
export const LEASE_MS = 30_000;
export const TICK_MS = 1000;
/**
 * While delivery is off, an event is skipped once it has been due this long: a process whose
 * settings cache (1 s) has not yet seen a newly set webhook_url must not skip what another sends.
 */
export const SKIP_GRACE_MS = 5000;
const MAX_IN_FLIGHT = 8;

export interface DispatcherDeps {
  database: Pick<Database, 'db'>;
  repository: WebhooksRepository;
  targets: TargetResolver;
  clock: Clock;
  testClock: TestClock | null;
  log: FastifyBaseLogger;
  /** This service's own origin (PUBLIC_URL) and listening port, which are never delivered to. */
  self: () => { origin: string; port: number | null };
  /** How long an attempt may take before it is cut off (ATTEMPT_TIMEOUT_MS; tests shorten it). */
  attemptTimeoutMs?: number;
}

/**
 * Delivers the outbox from inside the server process: every second it claims due events (a lease
 * in the row, so any number of processes can share the work and a crashed one's events come back
 * when the lease runs out), POSTs each, logs the attempt and schedules the next one.
 */
export class WebhookDispatcher {
  private running = false;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private tickActive = false;
  private tickAgain = false;
  /** The last tick filled every free slot, so more events may be due: claim again as slots free up. */
  private backlog = false;
  private readonly inFlight = new Set<Promise<void>>();
  private stopping = new AbortController();

  constructor(private readonly deps: DispatcherDeps) {}

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

  /** Stops ticking, aborts attempts in flight (they do not count and are released) and waits. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.stopping.abort();
    await this.ticking;
    await this.drain();
  }

  /** Waits for the deliveries in flight. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** One pass: claim what is due and start delivering it. Returns how many events were claimed. */
  async tick(): Promise<number> {
    const { repository, clock, testClock } = this.deps;
    if (testClock) await testClock.sync();
    const target = await this.deps.targets.resolve();
    const now = clock.now();
    if (!target.url) {
      const before = iso(new Date(now.getTime() - SKIP_GRACE_MS));
      const skipped = await repository.skipDue(before, iso(now), 'webhook_url is empty');
      if (skipped > 0) this.deps.log.info({ skipped }, 'webhook delivery is off; due events skipped');
      return 0;
    }
    const free = MAX_IN_FLIGHT - this.inFlight.size;
    if (free <= 0) return 0;
    const lease = iso(new Date(now.getTime() + LEASE_MS));
    const claimed = await repository.claimDue(iso(now), lease, free);
    this.backlog = claimed.length === free;
    for (const event of claimed) {
      const delivery: Promise<void> = this.deliver(event, lease, target)
        .catch((err) => this.deps.log.error({ err, event_id: event.event_id }, 'webhook delivery failed'))
        .finally(() => {
          this.inFlight.delete(delivery);
          if (this.backlog && this.running) this.runTick();
        });
      this.inFlight.add(delivery);
    }
    return claimed.length;
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

  /** Runs one tick now, or right after the one under way; then the next in a second. */
  private runTick(): void {
    if (this.tickActive) {
      this.tickAgain = true;
      return;
    }
    this.tickActive = true;
    this.ticking = this.tick()
      .then(() => undefined)
      .catch((err) => this.deps.log.error({ err }, 'webhook dispatcher tick failed'))
      .finally(() => {
        this.tickActive = false;
        if (!this.running) return;
        this.schedule(this.tickAgain ? 0 : TICK_MS);
        this.tickAgain = false;
      });
  }

  private async deliver(
    event: EventRow,
    lease: string,
    target: { url: string; secret: string; previousSecret: string | null },
  ): Promise<void> {
    const { repository, clock, log } = this.deps;
    const attempt = event.attempts + 1;
    const started = clock.now();
    const outcome: AttemptOutcome = {
      attempt,
      response_code: null,
      delivered: false,
      error: null,
      attempted_at: iso(started),
    };
    const refusal = target.secret
      ? refuseTarget(target.url, this.deps.self())
      : 'webhook_secret is empty; nothing was sent';
    if (refusal) {
      outcome.error = refusal;
    } else {
      const timeoutMs = this.deps.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
      const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), this.stopping.signal]);
      try {
        const res = await fetch(target.url, {
          method: 'POST',
          headers: deliveryHeaders({
            eventId: event.event_id,
            timestamp: Math.floor(started.getTime() / 1000),
            body: event.payload,
            secret: target.secret,
            previousSecret: target.previousSecret,
          }),
          body: event.payload,
          redirect: 'manual',
          signal,
        });
        await res.body?.cancel().catch(() => {});
        outcome.response_code = res.status;
        outcome.delivered = res.status >= 200 && res.status <= 299;
        if (!outcome.delivered) outcome.error = `unexpected status ${res.status}`;
      } catch (err) {
        if (this.stopping.signal.aborted) {
          // Shutting down: this attempt is not counted; the next process to run takes the event.
          await repository.release(event.id, lease);
          return;
        }
        outcome.error = describeFailure(err, timeoutMs);
      }
    }
    let next: { status: 'pending' | 'delivered' | 'abandoned'; next_attempt_at: string | null };
    if (outcome.delivered) next = { status: 'delivered', next_attempt_at: null };
    else if (attempt >= MAX_ATTEMPTS) next = { status: 'abandoned', next_attempt_at: null };
    else {
      const delay = RETRY_DELAYS[attempt - 1]!;
      next = { status: 'pending', next_attempt_at: iso(new Date(started.getTime() + delay * 1000)) };
    }
    // The event's next state and its line in the attempt log commit together.
    await withTransaction(this.deps.database, async (tx) => {
      await repository.finishEvent(event, lease, outcome, next, tx);
      await repository.logAttempt(event, outcome, tx);
    });
    if (!outcome.delivered) {
      log.warn(
        { event_id: event.event_id, attempt, response_code: outcome.response_code, error: outcome.error },
        next.status === 'abandoned' ? 'webhook abandoned' : 'webhook attempt failed',
      );
    }
    await repository.pruneAttempts().catch((err) => log.warn({ err }, 'webhook attempt log prune failed'));
  }
}

function describeFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && err.name === 'TimeoutError') return `timeout after ${timeoutMs / 1000} s`;
  const cause =
    err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  const detail = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return `network error: ${detail}`.slice(0, 500);
}
