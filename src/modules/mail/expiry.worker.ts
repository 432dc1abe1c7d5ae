import { type Clock, iso, rfc3339 } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { MailOutbox } from './mail.outbox.js';
import type { ExpiringLicense, MailRepository } from './mail.repository.js';

const DAY_MS = 86_400_000;
/** An expired license is announced within this long of its expiry (a worker down for longer misses it). */
export const EXPIRED_LOOKBACK_DAYS = 7;
/** The scan runs at most this often, in clock time (the test clock's too: moving it runs the next tick's scan). */
export const SCAN_EVERY_MS = 60_000;
const PAGE = 200;

/**
 * Enqueues "license expiring in N days" (N = license_expiring_days) and "license expired" once per
 * license and expiry (docs/email.md, 'Messages'). It runs in the mail worker's tick on the one
 * clock; every process may run it, and the dedupe key's unique index makes each message one row
 * however many race. Licenses that expired before the first scan are never announced.
 */
export class LicenseExpiryWorker {
  private nextRunAt = 0;

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: MailRepository,
    private readonly outbox: MailOutbox,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
  ) {}

  /** Runs the scan when it is due (the worker calls this every tick). */
  async maybe(): Promise<number> {
    const now = this.clock.now().getTime();
    if (now < this.nextRunAt) return 0;
    this.nextRunAt = now + SCAN_EVERY_MS;
    return this.run();
  }

  /** One full scan now; answers how many messages it added. */
  async run(): Promise<number> {
    const now = this.clock.now();
    const settings = await this.settings.get();
    await this.repo.setScanStart(iso(now));
    const started = (await this.repo.scanStart()) ?? iso(now);
    let added = 0;
    if (settings.mail_license_expiring) {
      const until = new Date(now.getTime() + settings.license_expiring_days * DAY_MS);
      added += await this.each('license_expiring', rfc3339(now), rfc3339(until), now);
    }
    if (settings.mail_license_expired) {
      const lookback = now.getTime() - EXPIRED_LOOKBACK_DAYS * DAY_MS;
      const from = rfc3339(new Date(Math.max(lookback, Date.parse(started))));
      added += await this.each('license_expired', from, rfc3339(now), now);
    }
    return added;
  }

  private async each(
    kind: 'license_expiring' | 'license_expired',
    from: string,
    to: string,
    now: Date,
  ): Promise<number> {
    let added = 0;
    // Each page excludes what the previous one enqueued; a license without an email (or whose
    // message is switched off) is enqueued as nothing and would come back: bounded by the pages.
    for (let pages = 0; pages < 50; pages++) {
      const rows = await this.repo.unnotifiedExpiries(kind, from, to, PAGE);
      let progressed = 0;
      for (const row of rows) if (await this.notify(kind, row, now)) progressed++;
      added += progressed;
      if (rows.length < PAGE || progressed === 0) break;
    }
    return added;
  }

  private notify(kind: 'license_expiring' | 'license_expired', l: ExpiringLicense, now: Date) {
    const expires = Date.parse(l.usage_expires_at);
    const days = Number.isNaN(expires) ? 0 : Math.max(0, Math.ceil((expires - now.getTime()) / DAY_MS));
    return withTransaction(this.database, (tx) =>
      this.outbox.enqueue(
        kind,
        l.email ?? '',
        {
          license_id: l.id,
          first_name: l.first_name ?? '',
          product: l.product_name ?? '',
          key_end: l.license_key.slice(-4),
          expires_at: l.usage_expires_at,
          days,
        },
        tx,
        `${kind}:${l.id}:${l.usage_expires_at}`,
      ),
    );
  }
}
