import type { Id } from '../../db/schema.js';

export type WebhookEventName =
  | 'license.renewed'
  | 'license.revoked'
  | 'subscription.status_changed'
  /** Only while `stale_activation_days` is set (docs/webhooks.md, 'Events'). */
  | 'activation.stale_deactivated';
/** `skipped`: due while delivery was off (webhook_url empty); never sent unless redelivered. */
export type WebhookEventStatus = 'pending' | 'delivered' | 'abandoned' | 'skipped';

export interface WebhooksTables {
  webhook_events: {
    id: Id;
    event_id: string;
    event: WebhookEventName;
    payload: string;
    status: WebhookEventStatus;
    attempts: number;
    next_attempt_at: string | null;
    locked_until: string | null;
    last_error: string | null;
    created_at: string;
    updated_at: string;
  };
  webhook_attempts: {
    id: Id;
    event_id: string;
    event: string;
    attempt: number;
    response_code: number | null;
    delivered: number;
    error: string | null;
    attempted_at: string;
  };
}
