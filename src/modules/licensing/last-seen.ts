import { BoundedMap } from '../../bounded-map.js';
import { type Clock, iso } from '../../clock.js';
import type { LicenseRepository } from './license.repository.js';

/** A site's `last_seen_at` is written at most this often (docs/licensing.md, 'Last seen and stale activations'). */
export const LAST_SEEN_INTERVAL_MS = 60 * 60 * 1000;
/** Activations this process remembers a write for; past it the oldest are forgotten (and written again once). */
export const LAST_SEEN_ENTRIES = 100_000;

/**
 * Keeps `activations.last_seen_at` fresh without a write per request: validate, the update check
 * and package tell it which activation a request identified, and it writes only when this process
 * has not written that activation within the hour. The write itself is conditional (only a value
 * older than the hour is replaced), so several processes on PostgreSQL do not each change the
 * row, and on SQLite it joins the turn's group commit. A failed write is logged and forgotten: the
 * request is answered as if nothing happened, and the next one tries again.
 */
export class LastSeen {
  /** Activation id -> when this process last wrote (or saw written) its last_seen_at, ms on the clock. */
  private readonly written = new BoundedMap<number, number>(LAST_SEEN_ENTRIES);

  constructor(
    private readonly repo: Pick<LicenseRepository, 'touchLastSeen'>,
    private readonly clock: Clock,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** An activation was just created with last_seen_at = `at`: no write is due for an hour. */
  activated(activationId: number, at: Date): void {
    this.written.set(activationId, at.getTime());
  }

  /** A request identified the activation: the write when one is due, else nothing (no promise is made). */
  seen(activationId: number): Promise<void> | undefined {
    const now = this.clock.now();
    const ms = now.getTime();
    const last = this.written.get(activationId);
    // A clock moved back (another process's test clock, or the system's) counts as due too.
    if (last !== undefined && ms - last < LAST_SEEN_INTERVAL_MS && ms >= last) return undefined;
    this.written.set(activationId, ms);
    return this.repo
      .touchLastSeen(activationId, iso(now), iso(new Date(ms - LAST_SEEN_INTERVAL_MS)))
      .catch((err: unknown) => {
        this.written.delete(activationId);
        this.onError(err);
      });
  }

  /** Forgets every activation (a test that moves the clock by hand, or a deactivation by another path). */
  forget(activationId?: number): void {
    if (activationId === undefined) this.written.clear();
    else this.written.delete(activationId);
  }
}
