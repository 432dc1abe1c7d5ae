import { type Clock, iso, rfc3339 } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { type Actor, diff } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { EventRow, WebhooksRepository } from './webhooks.repository.js';
import type { Attempt, EventState } from './webhooks.schemas.js';

/** Administration of outbound webhooks: the attempt log and manual redelivery. */
export class WebhooksService {
  constructor(
    private readonly repository: WebhooksRepository,
    private readonly clock: Clock,
    private readonly database: Pick<Database, 'db'>,
    private readonly audit: AuditService,
  ) {}

  /** Events waiting for delivery and the oldest one's due time (docs/operations.md, 'Metrics'). */
  backlog(now: Date): Promise<{ depth: number; oldestDue: string | null }> {
    return this.repository.outbox.backlog(iso(now));
  }

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
  /**
   * `actor`: the administrator who asked; the redelivery is recorded with the event's state before
   * and after (never its payload), in the transaction that reschedules it.
   */
  async redeliver(eventId: string, actor?: Actor): Promise<EventState> {
    const id = eventId.toLowerCase();
    const row = await withTransaction(this.database, async (tx) => {
      const before = await this.repository.outbox.lock('event_id', id, tx);
      if (!before) throw new ApiError('webhook_event_not_found');
      const after = (await this.repository.outbox.reschedule('event_id', id, iso(this.clock.now()), tx))!;
      if (actor) {
        const fields = ['status', 'attempts', 'next_attempt_at'];
        const changes = diff(before, after, fields);
        changes.event_id = { before: before.event_id, after: after.event_id };
        await this.audit.record(
          actor,
          { entity_type: 'webhook_event', entity_id: after.id, action: 'redeliver', changes },
          tx,
        );
      }
      return after;
    });
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
