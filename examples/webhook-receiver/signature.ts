import { createHmac, timingSafeEqual } from 'node:crypto';

const HEADER = /^sha256=([0-9a-f]{64})$/;

/**
 * Rule 2 of docs/webhooks.md, 'What a receiver must do': `X-Tollgate-Signature` must be
 * `sha256=<hex>` of HMAC-SHA256 over the exact raw body bytes, keyed with one of the store's
 * secrets (several while a secret is being rotated). Every secret is checked, with a constant-time
 * comparison, whatever the earlier results were.
 */
export function verifySignature(rawBody: Buffer, header: string | undefined, secrets: string[]): boolean {
  const match = header ? HEADER.exec(header.trim().toLowerCase()) : null;
  if (!match) return false;
  const given = Buffer.from(match[1]!, 'hex');
  let ok = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    if (timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}
