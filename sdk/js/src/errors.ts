/**
 * The one error the SDK throws. `code` is the server's code when the store answered (its
 * `code`, or `error` on validate's 403 body), else one of the SDK's own codes (CLIENT_CODES).
 * Branch on `code` and `status`, never on `message` (docs/sdk-js.md, 'Errors').
 */
export class TollgateError extends Error {
  override readonly name = 'TollgateError';
  /** The server's code, or one of CLIENT_CODES. */
  readonly code: string;
  /** The HTTP status of the store's answer; 0 when the SDK refused by itself or nothing answered. */
  readonly status: number;
  /** Where buying or renewing would help, when the store names it. */
  readonly renewal_url: string | null;
  /** The version that exists when the license may not take it ("1.1.0 is available, renew to get it"). */
  readonly available_version: string | null;
  /** Seconds to wait before asking again (429). */
  readonly retry_after: number | null;
  /** Where to send the customer when the store asks for approval (`oauth_required`). */
  readonly redirect_url: string | null;
  /** The store's whole answer, when there was one. */
  readonly body: Record<string, unknown> | null;

  constructor(
    code: string,
    message: string,
    opts: {
      status?: number;
      body?: Record<string, unknown> | null;
      retry_after?: number | null;
      cause?: unknown;
    } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.status = opts.status ?? 0;
    this.body = opts.body ?? null;
    const data = isRecord(this.body?.data) ? this.body.data : {};
    const field = (name: string): unknown => this.body?.[name] ?? data[name];
    this.renewal_url = text(field('renewal_url'));
    this.available_version = text(field('available_version'));
    this.redirect_url = text(field('redirect_url'));
    const after = field('retry_after') ?? opts.retry_after;
    this.retry_after = typeof after === 'number' && Number.isFinite(after) && after >= 0 ? after : null;
  }

  /**
   * True when the store could not give an answer about the license: nothing answered (a network
   * error, a timeout), a 5xx, or a 429. A 4xx other than 429 is the store's answer.
   */
  get unavailable(): boolean {
    return this.code === 'network_error' || this.status >= 500 || this.status === 429;
  }
}

/**
 * The codes the SDK gives itself, when the refusal is not the store's. The store's own codes are
 * in docs/errors.md.
 */
export const CLIENT_CODES = [
  /** Nothing answered: connection refused, DNS, TLS, timeout, a reset mid-answer. */
  'network_error',
  /** The store answered something that is not its JSON envelope. */
  'unexpected_response',
  /** A 429 answered earlier: the SDK waits its `retry_after` before asking again. */
  'rate_limited',
  /** downloadAndVerify: the answer has no download URL (an external or manual release). */
  'no_download_url',
  /** downloadAndVerify: no SHA-256 to check against, or the answer and the header disagree. */
  'sha256_missing',
  'sha256_mismatch',
  /** downloadAndVerify: the bytes received are not as many as announced. */
  'size_mismatch',
  /** downloadAndVerify: `requireSignature` and the release is not signed. */
  'signature_required',
  /** A signature that does not verify, or that the answer and the header give differently. */
  'signature_invalid',
  /** A signature or receipt names a key that is not in the store's list. */
  'signing_key_unknown',
  /** verifyReceipt: not a receipt (fields, base64, JSON). */
  'receipt_malformed',
  /** verifyReceipt: signed, but for another installation or domain. */
  'receipt_site_mismatch',
  /** verifyReceipt: `valid_until` (or the usage expiry) has passed. */
  'receipt_expired',
  /** verifyReceipt: issued in the future by this machine's clock. */
  'receipt_not_yet_valid',
  /** validateWithGrace: the store is unavailable and there is no usable receipt. */
  'grace_unavailable',
  /** verifyWebhook: missing or wrong signature, or event ids that disagree. */
  'webhook_signature_invalid',
  /** verifyWebhook: the signed timestamp is outside the tolerance. */
  'webhook_timestamp_invalid',
  /** verifyWebhook: signed, but not a webhook envelope. */
  'webhook_malformed',
] as const;

export type ClientCode = (typeof CLIENT_CODES)[number];

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * The error for a store's answer that is not a success: the envelope `{code, message, data}`, or
 * validate's `{valid: false, error, message}` body.
 */
export function errorFromAnswer(
  status: number,
  body: unknown,
  retryAfterHeader?: string | null,
): TollgateError {
  if (!isRecord(body)) {
    return new TollgateError(
      'unexpected_response',
      `The store answered ${status} without its JSON envelope`,
      {
        status,
      },
    );
  }
  const code =
    typeof body.code === 'string'
      ? body.code
      : typeof body.error === 'string'
        ? body.error
        : 'unexpected_response';
  const message = typeof body.message === 'string' ? body.message : `The store answered ${status} ${code}`;
  const header = retryAfterHeader ? Number(retryAfterHeader) : Number.NaN;
  return new TollgateError(code, message, {
    status,
    body,
    ...(Number.isFinite(header) ? { retry_after: header } : {}),
  });
}
