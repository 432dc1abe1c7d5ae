import type { FastifyBaseLogger } from 'fastify';
import { type Clock, iso, rfc3339, type TestClock } from '../../clock.js';
import { systemActor } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { Outbox } from '../webhooks/outbox.js';
import type { ActivationService } from './activation.service.js';
import type { LicenseRepository } from './license.repository.js';

export const STALE_TICK_MS = 1000;
/** On the system clock a pass runs at most this often; on the test clock every tick (it may have moved). */
export const STALE_PASS_MS = 60_000;
/** Activations read per query; a pass goes on until none is left. */
export const STALE_BATCH = 100;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The audit trail's actor for what this job does (docs/admin.md, 'Audit trail'). */
export const STALE_ACTOR = systemActor('stale_activations');

/**
 * Releases activations whose site has not been seen for `stale_activation_days` (docs/licensing.md,
 * 'Last seen and stale activations'). Runs in every serving process like the renewal worker, on
 * the injected clock (the test clock too: within a tick of it being moved). Each release is the
 * deactivation's own path (ActivationService.deactivateStale: hooks, so download tokens stop
 * working), with an audit entry by Tollgate itself and the `activation.stale_deactivated` webhook,
 * in one transaction; the claim there (under the license's lock, only while still active and
 * unseen) makes each release happen once however many processes run a pass at the same time.
 * Nothing is read while the setting is off, or while licensing is switched off (sites could not be
 * seen then).
 */
export class StaleActivationWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private lastPass = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly repo: Pick<LicenseRepository, 'staleActivations'>,
    private readonly activations: Pick<ActivationService, 'deactivateStale'>,
    private readonly settings: SettingsService,
    private readonly audit: AuditService,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly testClock: TestClock | null,
    private readonly log: FastifyBaseLogger,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), STALE_TICK_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One tick: a pass when one is due. Overlapping ticks share the pass in progress. */
  tick(): Promise<number> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        await this.testClock?.sync();
        const now = this.clock.now().getTime();
        if (!this.testClock && now - this.lastPass < STALE_PASS_MS && now >= this.lastPass) return 0;
        this.lastPass = now;
        return await this.pass();
      } catch (err) {
        this.log.warn({ err }, 'stale activation pass failed');
        return 0;
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** Releases every activation unseen for the configured days; answers how many this process released. */
  async pass(): Promise<number> {
    const settings = await this.settings.get();
    const days = settings.stale_activation_days;
    if (days === null || !settings.licensing_enabled) return 0;
    const cutoff = iso(new Date(this.clock.now().getTime() - days * DAY_MS));
    let released = 0;
    // Ids already tried in this pass: one another process released, or whose site was seen just
    // now, is not read again (the query would answer it again only if it were still stale).
    const tried = new Set<number>();
    for (;;) {
      const batch = (await this.repo.staleActivations(cutoff, STALE_BATCH + tried.size)).filter(
        (a) => !tried.has(a.id),
      );
      if (batch.length === 0) return released;
      for (const a of batch) {
        tried.add(a.id);
        const done = await this.release(a, cutoff).catch((err: unknown) => {
          // One that fails (a database error) does not hold the others up; the next pass tries it again.
          this.log.warn({ err, activation_id: a.id }, 'stale activation release failed');
          return false;
        });
        if (done) released++;
      }
    }
  }

  private release(a: { id: number; license_id: number }, cutoff: string): Promise<boolean> {
    return this.activations.deactivateStale(a.license_id, a.id, cutoff, async (row, tx) => {
      const lastSeen = row.last_seen_at ? rfc3339(new Date(row.last_seen_at)) : null;
      await this.audit.record(
        STALE_ACTOR,
        {
          entity_type: 'license',
          entity_id: row.license_id,
          action: 'deactivate_activation',
          changes: {
            activation_id: { before: row.id, after: row.id },
            status: { before: 'active', after: 'deactivated' },
            deactivation_reason: { before: null, after: 'stale' },
            last_seen_at: { before: lastSeen, after: lastSeen },
          },
        },
        tx,
      );
      await this.outbox.record(
        'activation.stale_deactivated',
        { license_id: row.license_id, activation_id: row.id, last_seen_at: lastSeen },
        tx,
      );
    });
  }
}
