import { createHmac } from 'node:crypto';

/**
 * The two signature schemes every delivery carries. Both key the HMAC with the raw UTF-8 bytes of
 * the configured secret string; the body is the exact stored payload (UTF-8).
 */

/**
 * `X-Tollgate-Signature`: `sha256=<hex HMAC-SHA256 of the raw body>` (docs/webhooks.md, 'Request').
 */
export function tollgateSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** One Standard Webhooks `webhook-signature` entry: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

/**
 * The Standard Webhooks form of our plain secret: `whsec_` + base64 of its UTF-8 bytes. A receiver
 * that uses a Standard Webhooks library configures this string; it decodes to the same key bytes.
 */
export const standardWebhooksSecret = (secret: string): string =>
  `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;

export interface SignedHeaders {
  [name: string]: string;
}

/**
 * All headers of one attempt. `X-Tollgate-Signature` uses the current secret only (its documented
 * format holds one value, docs/webhooks.md); `webhook-signature` lists the previous secret too
 * while a rotation overlaps.
 */
export function deliveryHeaders(opts: {
  eventId: string;
  timestamp: number;
  body: string;
  secret: string;
  previousSecret?: string | null;
}): SignedHeaders {
  const { eventId, timestamp, body, secret, previousSecret } = opts;
  const standard = [standardSignature(secret, eventId, timestamp, body)];
  if (previousSecret && previousSecret !== secret)
    standard.push(standardSignature(previousSecret, eventId, timestamp, body));
  return {
    'content-type': 'application/json',
    'user-agent': 'Tollgate-Webhooks/1',
    'x-tollgate-event-id': eventId,
    'x-tollgate-timestamp': String(timestamp),
    'x-tollgate-signature': tollgateSignature(secret, body),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standard.join(' '),
  };
}
