import type { Id } from '../../db/schema.js';
import type { OutboxColumns } from '../../outbox/outbox.repository.js';

export type WebhookEventName =
  | 'license.renewed'
  | 'license.revoked'
  /** A paid upgrade or downgrade moved the license to another tier (docs/selling.md). */
  | 'license.upgraded'
  | 'subscription.status_changed'
  /** Only while `stale_activation_days` is set (docs/webhooks.md, 'Events'). */
  | 'activation.stale_deactivated'
  /** A license's transfer was accepted (docs/selling.md, 'Transfers'). */
  | 'license.transferred';
/** `skipped`: due while delivery was off (webhook_url empty); never sent unless redelivered. */
export type WebhookEventStatus = 'pending' | 'delivered' | 'abandoned' | 'skipped';

export interface WebhooksTables {
  webhook_events: OutboxColumns & {
    event_id: string;
    event: WebhookEventName;
    payload: string;
    status: WebhookEventStatus;
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
