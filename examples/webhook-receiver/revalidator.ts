import type { ReceiverConfig } from './config.js';
import type { InboxRow, LocalLicense, ReceiverStore } from './store.js';

const MAX_TRIES = 10;
const VALIDATE_TIMEOUT_MS = 10_000;

export interface ValidationResult {
  valid: boolean;
  effective_status: string;
}

/**
 * Rule 5 of docs/webhooks.md, 'What a receiver must do': revalidation runs here, after the webhook
 * was answered. It turns each pending inbox row into POST /licenses/validate calls at the store's
 * pinned URL (never the payload's authoritative_validation_url) and records what the store says. A
 * webhook is only a hint: the validation answer is what counts. Transient failures are retried with
 * backoff.
 */
export class Revalidator {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopping = new AbortController();

  constructor(
    private readonly store: ReceiverStore,
    private readonly config: ReceiverConfig,
  ) {}

  start(): void {
    if (this.timer) return;
    this.stopping = new AbortController();
    this.timer = setInterval(() => this.kick(), this.config.revalidate_interval_ms);
    this.timer.unref();
  }

  /** Stops the worker; a validation call in flight is abandoned and its event stays pending. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopping.abort();
    await this.running;
  }

  /** Runs a pass soon, unless one is running. */
  kick(): void {
    if (this.running || this.stopping.signal.aborted) return;
    this.running = this.runOnce()
      .then(() => undefined)
      .catch((err) => console.error('revalidation pass failed:', err))
      .finally(() => {
        this.running = null;
      });
  }

  /** One pass over the due inbox rows; returns how many were handled. */
  async runOnce(): Promise<number> {
    const rows = this.store.duePending(20);
    for (const row of rows) await this.handle(row);
    return rows.length;
  }

  private async handle(row: InboxRow): Promise<void> {
    const trusted = this.config.stores[row.store];
    try {
      if (!trusted) throw new Error('store no longer configured');
      const envelope = JSON.parse(row.payload) as { event: string; data: Record<string, unknown> };
      for (const license of this.affected(row.store, envelope)) {
        const result = await validate(trusted.validation_url, license, this.stopping.signal);
        this.store.saveValidation(row.store, license.license_id, result.valid, result.effective_status);
      }
      this.store.markDone(row.id);
    } catch (err) {
      if (this.stopping.signal.aborted) return;
      const tries = row.attempts + 1;
      const delay = this.config.retry_delay_ms * 2 ** (tries - 1);
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
      this.store.retryLater(row.id, `${String(err)}${cause}`, tries, Date.now() + delay, tries >= MAX_TRIES);
    }
  }

  private affected(
    store: string,
    envelope: { event: string; data: Record<string, unknown> },
  ): LocalLicense[] {
    const { data } = envelope;
    if (envelope.event === 'subscription.status_changed' && Number.isInteger(data.subscription_id))
      return this.store.licensesBySubscription(store, data.subscription_id as number);
    if (Number.isInteger(data.license_id)) return this.store.licenseById(store, data.license_id as number);
    return [];
  }
}

/** One validate call. 200 and 403 are answers; anything else is a transient failure (thrown). */
export async function validate(
  url: string,
  license: LocalLicense,
  stop?: AbortSignal,
): Promise<ValidationResult> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      license_key: license.license_key,
      domain: license.domain,
      installation_id: license.installation_id,
    }),
    redirect: 'error',
    signal: stop
      ? AbortSignal.any([AbortSignal.timeout(VALIDATE_TIMEOUT_MS), stop])
      : AbortSignal.timeout(VALIDATE_TIMEOUT_MS),
  });
  if (res.status !== 200 && res.status !== 403) {
    await res.body?.cancel();
    throw new Error(`validation answered ${res.status}`);
  }
  const body = (await res.json()) as { valid?: unknown; effective_status?: unknown; error?: unknown };
  // Valid only when valid is true and effective_status is `valid` (docs/licensing.md, '3.
  // Validate').
  const valid = res.status === 200 && body.valid === true && body.effective_status === 'valid';
  const status =
    typeof body.effective_status === 'string' ? body.effective_status : String(body.error ?? 'unknown');
  return { valid, effective_status: valid ? 'valid' : status };
}
