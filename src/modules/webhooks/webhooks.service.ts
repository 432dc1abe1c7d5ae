import { type Clock, iso, rfc3339 } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import type { EventRow, WebhooksRepository } from './webhooks.repository.js';
import type { Attempt, EventState } from './webhooks.schemas.js';

/** Administration of outbound webhooks: the attempt log and manual redelivery. */
export class WebhooksService {
  constructor(
    private readonly repository: WebhooksRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * The 100 most recent attempts, newest first (docs/webhooks.md, 'Delivery, retries and the
   * attempt log').
   */
  async attempts(): Promise<Attempt[]> {
    const rows = await this.repository.recentAttempts();
    return rows.map((r) => ({
      event_id: r.event_id,
      event: r.event,
      attempt: r.attempt,
      response_code: r.response_code,
      delivered: Boolean(r.delivered),
      error: r.error,
      attempted_at: rfc3339(new Date(r.attempted_at)),
    }));
  }

  /** Schedules the event now with a fresh series of up to 5 attempts, whatever its state. */
  async redeliver(eventId: string): Promise<EventState> {
    const row = await this.repository.rescheduleNow(eventId.toLowerCase(), iso(this.clock.now()));
    if (!row) throw new ApiError('webhook_event_not_found');
    return eventState(row);
  }
}

export const eventState = (row: EventRow): EventState => ({
  event_id: row.event_id,
  event: row.event,
  status: row.status,
  attempts: row.attempts,
  next_attempt_at: row.next_attempt_at ? rfc3339(new Date(row.next_attempt_at)) : null,
});
