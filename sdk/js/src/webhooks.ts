import { createHmac, timingSafeEqual } from 'node:crypto';
import { isRecord, TollgateError } from './errors.js';

/** The body of every delivery (docs/webhooks.md). A hint, never an authority: validate again. */
export interface WebhookEnvelope {
  event_id: string;
  event: 'license.renewed' | 'license.revoked' | 'subscription.status_changed' | (string & {});
  /** RFC 3339 UTC. */
  timestamp: string;
  data: Record<string, unknown>;
  authoritative_validation_url: string;
}

/** Node's `IncomingHttpHeaders`, a fetch `Headers`, or a plain object of header names. */
export type WebhookHeaders =
  | Headers
  | Record<string, string | readonly string[] | undefined>
  | { get(name: string): string | null };

export interface VerifyWebhookOptions {
  /** How far the signed timestamp may be from `now`, in seconds; default 300 (Standard Webhooks). */
  toleranceSeconds?: number;
  now?: Date;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | readonly string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? undefined : (value as string | undefined);
}

const refuse = (message: string) => new TollgateError('webhook_signature_invalid', message);

/**
 * Verifies a delivery (docs/webhooks.md, 'Request') and answers its envelope. It checks the
 * Standard Webhooks signature: HMAC-SHA256, keyed with the UTF-8 bytes of `webhook_secret`, over
 * `<webhook-id>.<webhook-timestamp>.<the exact body bytes>`, compared in constant time with every
 * entry of `webhook-signature` (two during a secret rotation). That signature covers the event id
 * and the timestamp, so a delivery replayed later than `toleranceSeconds` is refused;
 * `X-Tollgate-Signature` covers the body alone and is not used. The body's `event_id` must equal
 * `webhook-id` (and `X-Tollgate-Event-Id` when present).
 *
 * Pass the raw body as received, before any JSON parsing. Throws TollgateError:
 * `webhook_signature_invalid`, `webhook_timestamp_invalid`, `webhook_malformed`.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  opts: VerifyWebhookOptions = {},
): WebhookEnvelope {
  if (typeof secret !== 'string' || secret === '') throw refuse('No webhook secret');
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw refuse('The delivery is not signed');
  if (!/^\d{1,12}$/.test(timestamp)) throw new TollgateError('webhook_timestamp_invalid', 'Not a timestamp');
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (opts.toleranceSeconds ?? 300)) {
    throw new TollgateError('webhook_timestamp_invalid', 'The delivery is too old or too new');
  }
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${id}.${timestamp}.`, 'utf8')
    .update(body)
    .digest();
  // Every entry is compared, the same work whichever matches.
  let matched = false;
  for (const entry of signatures.split(' ')) {
    if (!entry.startsWith('v1,')) continue;
    const given = Buffer.from(entry.slice(3), 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) throw refuse('The signature does not match');

  let envelope: unknown;
  try {
    envelope = JSON.parse(body.toString('utf8'));
  } catch (cause) {
    throw new TollgateError('webhook_malformed', 'The signed body is not JSON', { cause });
  }
  if (!isRecord(envelope) || typeof envelope.event_id !== 'string' || typeof envelope.event !== 'string') {
    throw new TollgateError('webhook_malformed', 'The signed body is not a webhook envelope');
  }
  const headerEventId = header(headers, 'x-tollgate-event-id');
  if (envelope.event_id !== id || (headerEventId !== undefined && headerEventId !== id)) {
    throw refuse('The event ids disagree');
  }
  return envelope as unknown as WebhookEnvelope;
}
