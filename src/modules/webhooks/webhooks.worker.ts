import type { FastifyBaseLogger } from 'fastify';
import { type Clock, iso, type TestClock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { nextAttempt, OutboxWorker } from '../../outbox/worker.js';
import { deliveryHeaders } from './signer.js';
import { refuseTarget, type TargetResolver } from './target.js';
import type { AttemptOutcome, EventRow, WebhooksRepository } from './webhooks.repository.js';

/**
 * Delay before attempts 2 to 5, in seconds; after attempt 5 (one more than the delays) the event is
 * abandoned (docs/webhooks.md, 'Delivery, retries and the attempt log').
 */
export const RETRY_DELAYS = [60, 300, 1800, 7200] as const;
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** A claim outlives the longest attempt, so a live process never loses an event it is sending. */
export const LEASE_MS = 30_000;
/**
 * While delivery is off, an event is skipped once it has been due this long: a process whose
 * settings cache (1 s) has not yet seen a newly set webhook_url must not skip what another sends.
 */
export const SKIP_GRACE_MS = 5000;
const MAX_IN_FLIGHT = 8;

export interface WebhookWorkerDeps {
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

/** Delivers the webhook outbox through the shared worker (src/outbox/worker.ts). */
export type WebhookWorker = OutboxWorker<EventRow, DeliveryTarget>;

/** The target of one tick's deliveries, resolved once per tick (target.ts). */
type DeliveryTarget = { url: string; secret: string; previousSecret: string | null };

/**
 * The webhook outbox: every second the worker claims due events and POSTs each, logs the attempt
 * and schedules the next one; while webhook_url is empty due events are skipped instead
 * (docs/webhooks.md, 'Delivery, retries and the attempt log').
 */
export function createWebhookWorker(deps: WebhookWorkerDeps): WebhookWorker {
  const { repository, clock, log } = deps;
  return new OutboxWorker<EventRow, DeliveryTarget>(
    {
      name: 'webhook dispatcher',
      maxInFlight: MAX_IN_FLIGHT,
      leaseMs: LEASE_MS,
      beforeTick: async () => {
        const target = await deps.targets.resolve();
        if (target.url) return target;
        const now = clock.now();
        const before = iso(new Date(now.getTime() - SKIP_GRACE_MS));
        const skipped = await repository.skipDue(before, iso(now), 'webhook_url is empty');
        if (skipped > 0) log.info({ skipped }, 'webhook delivery is off; due events skipped');
        return null;
      },
      claim: (now, leaseUntil, limit) => repository.outbox.claimDue(now, leaseUntil, limit),
      handle: (event, leaseUntil, target, signal) => deliver(deps, event, leaseUntil, target, signal),
      release: (event, leaseUntil) => repository.outbox.release(event.id, leaseUntil),
      describe: (event) => ({ event_id: event.event_id }),
    },
    { clock, testClock: deps.testClock, log },
  );
}

/** One attempt at one event: the POST, its line in the attempt log and the event's next state. */
async function deliver(
  deps: WebhookWorkerDeps,
  event: EventRow,
  lease: string,
  target: DeliveryTarget,
  stopping: AbortSignal,
): Promise<void> {
  const { repository, clock, log } = deps;
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
    ? refuseTarget(target.url, deps.self())
    : 'webhook_secret is empty; nothing was sent';
  if (refusal) {
    outcome.error = refusal;
  } else {
    const timeoutMs = deps.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), stopping]);
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
      // Shutting down: the worker releases the event; this attempt is not counted.
      if (stopping.aborted) throw err;
      outcome.error = describeFailure(err, timeoutMs);
    }
  }
  const retryAt = outcome.delivered ? null : nextAttempt(attempt, RETRY_DELAYS, started);
  const status = outcome.delivered ? 'delivered' : retryAt ? 'pending' : 'abandoned';
  // The event's next state and its line in the attempt log commit together.
  await withTransaction(deps.database, async (tx) => {
    await repository.outbox.finish(
      event.id,
      lease,
      {
        status,
        attempts: attempt,
        next_attempt_at: retryAt,
        last_error: outcome.error,
        updated_at: outcome.attempted_at,
      },
      tx,
    );
    await repository.logAttempt(event, outcome, tx);
  });
  if (!outcome.delivered) {
    log.warn(
      { event_id: event.event_id, attempt, response_code: outcome.response_code, error: outcome.error },
      status === 'abandoned' ? 'webhook abandoned' : 'webhook attempt failed',
    );
  }
  await repository.pruneAttempts().catch((err) => log.warn({ err }, 'webhook attempt log prune failed'));
}

function describeFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && err.name === 'TimeoutError') return `timeout after ${timeoutMs / 1000} s`;
  const cause =
    err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  const detail = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return `network error: ${detail}`.slice(0, 500);
}
