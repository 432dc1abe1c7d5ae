import type { FastifyBaseLogger } from 'fastify';
import type { TestClock } from '../../clock.js';
import type { SubscriptionsService } from './subscriptions.service.js';

export const RENEWAL_TICK_MS = 1000;

/**
 * Creates renewal orders when payments fall due, on the injected clock (the test clock too:
 * within a tick of it being moved). Runs in every serving process like the webhook worker;
 * the unique `renewal_of` of orders makes each due payment one order however many processes race.
 * Then puts overdue subscriptions on hold and expires those past `renewal_window_days`.
 */
export class RenewalWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly testClock: TestClock | null,
    private readonly log: FastifyBaseLogger,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), RENEWAL_TICK_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass (tests call it directly); overlapping ticks are skipped. */
  async tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        await this.testClock?.sync();
        await this.subscriptions.createDueRenewals();
        await this.subscriptions.lapseOverdue();
      } catch (err) {
        this.log.warn({ err }, 'renewal scheduling failed');
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }
}
