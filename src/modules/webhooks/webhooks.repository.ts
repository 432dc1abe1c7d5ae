import type { Insertable, Selectable } from 'kysely';
import type { Database } from '../../db/database.js';
import { on, type Tx } from '../../db/transaction.js';
import { OutboxRepository } from '../../outbox/outbox.repository.js';
import type { WebhooksTables } from './webhooks.tables.js';

export type EventRow = Selectable<WebhooksTables['webhook_events']>;
export type EventInsert = Insertable<WebhooksTables['webhook_events']>;
export type AttemptRow = Selectable<WebhooksTables['webhook_attempts']>;

/** The attempt log keeps this many of the most recent attempts (docs/webhooks.md). */
export const ATTEMPT_LOG_SIZE = 100;

export interface AttemptOutcome {
  attempt: number;
  response_code: number | null;
  delivered: boolean;
  error: string | null;
  attempted_at: string;
}

/** The webhook secret in use and, while a rotation overlaps, the one before it (target.ts). */
export interface Rotation {
  current: string;
  previous: string | null;
  previous_until: string | null;
}

/** The app_state row where the webhook secret's rotation is remembered (target.ts). */
const ROTATION_KEY = 'webhook_secret_rotation';

/**
 * Queries of the outbox, the attempt log and the remembered secret rotation. Timestamps are ISO
 * text, so comparisons are textual.
 */
export class WebhooksRepository extends OutboxRepository<'webhook_events'> {
  constructor(database: Pick<Database, 'db' | 'dialect'>) {
    super(database, 'webhook_events');
  }

  /** Adds an event to the outbox, in the caller's transaction (src/modules/webhooks/outbox.ts). */
  async insertEvent(values: EventInsert, tx?: Tx): Promise<void> {
    await on(this.db, tx).insertInto('webhook_events').values(values).execute();
  }

  /** Delivery is off: events due since `dueBefore` are set aside without an attempt (docs/webhooks.md). */
  async skipDue(dueBefore: string, now: string, reason: string, tx?: Tx): Promise<number> {
    const res = await on(this.db, tx)
      .updateTable('webhook_events')
      .set({ status: 'skipped', next_attempt_at: null, last_error: reason, updated_at: now })
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', dueBefore)
      .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<=', now)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  /** Adds one attempt to the attempt log. */
  async logAttempt(event: EventRow, outcome: AttemptOutcome, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .insertInto('webhook_attempts')
      .values({
        event_id: event.event_id,
        event: event.event,
        attempt: outcome.attempt,
        response_code: outcome.response_code,
        delivered: outcome.delivered ? 1 : 0,
        error: outcome.error,
        attempted_at: outcome.attempted_at,
      })
      .execute();
  }

  /** Deletes all but the most recent attempts. */
  async pruneAttempts(tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .deleteFrom('webhook_attempts')
      .where('id', 'not in', (eb) =>
        eb
          .selectFrom('webhook_attempts')
          .select('id')
          .orderBy('attempted_at', 'desc')
          .orderBy('id', 'desc')
          .limit(ATTEMPT_LOG_SIZE),
      )
      .execute();
  }

  recentAttempts(tx?: Tx): Promise<AttemptRow[]> {
    return on(this.db, tx)
      .selectFrom('webhook_attempts')
      .selectAll()
      .orderBy('attempted_at', 'desc')
      .orderBy('id', 'desc')
      .limit(ATTEMPT_LOG_SIZE)
      .execute();
  }

  /** The secret rotation remembered by any process, or null before the first delivery. */
  async findRotation(tx?: Tx): Promise<Rotation | null> {
    const row = await on(this.db, tx)
      .selectFrom('app_state')
      .select('value')
      .where('key', '=', ROTATION_KEY)
      .executeTakeFirst();
    return row ? (JSON.parse(row.value) as Rotation) : null;
  }

  async saveRotation(rotation: Rotation, tx?: Tx): Promise<void> {
    const value = JSON.stringify(rotation);
    await on(this.db, tx)
      .insertInto('app_state')
      .values({ key: ROTATION_KEY, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  }
}
