import { type Clock, iso, rfc3339 } from '../../clock.js';
import type { Tx } from '../../db/transaction.js';
import { uuid } from '../../random.js';
import type { WebhooksRepository } from './webhooks.repository.js';
import type { WebhookEventName } from './webhooks.tables.js';

export interface EventData {
  'license.revoked': { license_id: number };
  'license.renewed': { license_id: number; subscription_id: number; order_id: number };
  'license.upgraded': {
    license_id: number;
    order_id: number;
    product_id: number;
    variation_id: number;
    previous_product_id: number;
    previous_variation_id: number;
  };
  'subscription.status_changed': { subscription_id: number; status: string; reason: string };
  'activation.stale_deactivated': { license_id: number; activation_id: number; last_seen_at: string | null };
  'license.transferred': { license_id: number; from_user_id: number; to_user_id: number };
}

/** The only fields each event's data may carry: numeric ids, status text and times, never a license key. */
const DATA_FIELDS: { [E in WebhookEventName]: ReadonlyArray<keyof EventData[E]> } = {
  'license.revoked': ['license_id'],
  'license.renewed': ['license_id', 'subscription_id', 'order_id'],
  'license.upgraded': [
    'license_id',
    'order_id',
    'product_id',
    'variation_id',
    'previous_product_id',
    'previous_variation_id',
  ],
  'subscription.status_changed': ['subscription_id', 'status', 'reason'],
  'activation.stale_deactivated': ['license_id', 'activation_id', 'last_seen_at'],
  'license.transferred': ['license_id', 'from_user_id', 'to_user_id'],
};

function onlyAllowed<E extends WebhookEventName>(event: E, data: EventData[E]): EventData[E] {
  const out: Partial<EventData[E]> = {};
  for (const field of DATA_FIELDS[event]) out[field] = data[field];
  return out as EventData[E];
}

/**
 * The one way other modules emit a webhook: `record` writes the event row with the caller's
 * transaction, so a committed change always has its event and a rolled-back one never does.
 * The webhook worker (webhooks.worker.ts) delivers what is recorded here.
 */
export class Outbox {
  constructor(
    private readonly repository: WebhooksRepository,
    private readonly clock: Clock,
    private readonly validationUrl: () => string,
  ) {}

  async record<E extends WebhookEventName>(event: E, data: EventData[E], tx?: Tx): Promise<string> {
    const now = this.clock.now();
    const eventId = uuid();
    // Numeric ids only: no license key ever enters a payload (docs/webhooks.md, 'Events'), whatever
    // a caller passes.
    const payload = JSON.stringify({
      event_id: eventId,
      event,
      timestamp: rfc3339(now),
      data: onlyAllowed(event, data),
      authoritative_validation_url: this.validationUrl(),
    });
    await this.repository.insertEvent(
      {
        event_id: eventId,
        event,
        payload,
        status: 'pending',
        attempts: 0,
        next_attempt_at: iso(now),
        created_at: iso(now),
        updated_at: iso(now),
      },
      tx,
    );
    return eventId;
  }
}
