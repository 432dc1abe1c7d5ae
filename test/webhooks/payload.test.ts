import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventData } from '../../src/modules/webhooks/outbox.js';
import type { WebhookEventName } from '../../src/modules/webhooks/webhooks.tables.js';
import { createTestApp, setSettings, type TestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';
import { eventRow, type Receiver, startReceiver } from './helpers.js';

let t: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  t = await createTestApp();
  receiver = await startReceiver(200);
  await setSettings(t, { webhook_url: receiver.url, webhook_secret: 'payload-secret' });
  t.app.services.dispatcher.start();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RFC3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

const cases: { [E in WebhookEventName]: EventData[E] } = {
  'license.revoked': { license_id: 41 },
  'license.renewed': { license_id: 42, subscription_id: 7, order_id: 1001 },
  'license.upgraded': {
    license_id: 44,
    order_id: 1002,
    product_id: 3,
    variation_id: 12,
    previous_product_id: 3,
    previous_variation_id: 11,
  },
  'subscription.status_changed': { subscription_id: 7, status: 'pending-cancel', reason: 'customer request' },
  'activation.stale_deactivated': { license_id: 43, activation_id: 9, last_seen_at: '2026-10-01T08:00:00Z' },
  'license.transferred': { license_id: 42, from_user_id: 7, to_user_id: 8 },
};

describe('webhook payloads', () => {
  for (const [event, data] of Object.entries(cases) as Array<
    [WebhookEventName, EventData[WebhookEventName]]
  >) {
    it(`${event}: the envelope has exactly the documented fields and no license key, as stored and as delivered`, async () => {
      const db = t.app.services.database.db;
      // Even a caller that passes a key by mistake cannot put it into a payload.
      const leaky = { ...data, license_key: 'TG-SECRET-KEY-0001' } as never;
      const eventId = await t.app.services.outbox.record(event as 'license.revoked', leaky);
      const stored = (await eventRow(db, eventId)).payload;
      const sent = await waitFor(
        () => receiver.requests.find((r) => r.headers['x-tollgate-event-id'] === eventId),
        'delivery',
      );
      expect(sent.body).toBe(stored);
      for (const text of [stored, sent.body, JSON.stringify(sent.headers)]) {
        expect(text).not.toContain('TG-SECRET-KEY-0001');
        expect(text).not.toMatch(/license_key/i);
      }
      const envelope = JSON.parse(stored) as Record<string, unknown>;
      expect(Object.keys(envelope).sort()).toEqual(
        ['authoritative_validation_url', 'data', 'event', 'event_id', 'timestamp'].sort(),
      );
      expect(envelope.event_id).toBe(eventId);
      expect(envelope.event_id).toMatch(UUID_V4);
      expect(envelope.event).toBe(event);
      expect(envelope.timestamp).toMatch(RFC3339_UTC);
      expect(envelope.data).toEqual(data);
      expect(envelope.authoritative_validation_url).toBe(`${t.app.services.urls.base}/licenses/validate`);
      for (const [k, v] of Object.entries(envelope.data as Record<string, unknown>)) {
        if (k.endsWith('_id')) expect(Number.isInteger(v), k).toBe(true);
      }
    });
  }
});
