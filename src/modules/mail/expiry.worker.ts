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

/** A scan's kinds: the plain notices, and the renewal reminders of term licenses. */
type ExpiryKind = 'license_expiring' | 'license_expired' | 'renewal_reminder';

/**
 * Enqueues "license expiring in N days" (N = license_expiring_days) and "license expired" once per
 * license and expiry, and the renewal reminders of term licenses, once per license, expiry and
 * reminder day of `renewal_reminder_days` (docs/email.md, 'Messages'; docs/selling.md, 'Renewals').
 * While reminders are on, a term license gets them instead of the two notices. It runs in the
 * mail worker's tick on the one clock; every process may run it, and the dedupe key's unique index
 * makes each message one row however many race. Licenses that expired before the first scan are
 * never announced, and a reminder whose day came before the first scan is not sent.
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
    const started = Date.parse((await this.repo.scanStart()) ?? iso(now));
    const reminders = settings.mail_renewal_reminder ? settings.renewal_reminder_days : [];
    // Term licenses are reminded instead of notified while there are reminders to send.
    const term = reminders.length > 0 ? false : undefined;
    let added = 0;
    if (settings.mail_license_expiring) {
      const until = new Date(now.getTime() + settings.license_expiring_days * DAY_MS);
      added += await this.each('license_expiring', rfc3339(now), rfc3339(until), now, { term });
    }
    if (settings.mail_license_expired) {
      const lookback = now.getTime() - EXPIRED_LOOKBACK_DAYS * DAY_MS;
      const from = rfc3339(new Date(Math.max(lookback, started)));
      added += await this.each('license_expired', from, rfc3339(now), now, { term });
    }
    // Earliest reminder first (settings keep them sorted, highest day first). Reminder `d` is due
    // once the end is at most `d` days away, and only until the next one is due (or, for the last,
    // for EXPIRED_LOOKBACK_DAYS): a scan after a long pause sends the latest due, not all of them.
    const days = [...reminders].sort((a, b) => b - a);
    for (const [i, d] of days.entries()) {
      const next = days[i + 1];
      const floor = next === undefined ? d - EXPIRED_LOOKBACK_DAYS : next;
      const from = Math.max(now.getTime() + floor * DAY_MS, started + d * DAY_MS);
      const to = now.getTime() + d * DAY_MS;
      if (from >= to) continue;
      added += await this.each('renewal_reminder', rfc3339(new Date(from)), rfc3339(new Date(to)), now, {
        term: true,
        reminder: d,
      });
    }
    return added;
  }

  private async each(
    kind: ExpiryKind,
    from: string,
    to: string,
    now: Date,
    opts: { term: boolean | undefined; reminder?: number },
  ): Promise<number> {
    const suffix = opts.reminder === undefined ? '' : `:${opts.reminder}`;
    let added = 0;
    // Each page excludes what the previous one enqueued; a license without an email (or whose
    // message is switched off) is enqueued as nothing and would come back: bounded by the pages.
    for (let pages = 0; pages < 50; pages++) {
      const rows = await this.repo.unnotifiedExpiries(kind, from, to, PAGE, { suffix, term: opts.term });
      let progressed = 0;
      for (const row of rows) if (await this.notify(kind, row, now, suffix)) progressed++;
      added += progressed;
      if (rows.length < PAGE || progressed === 0) break;
    }
    return added;
  }

  private notify(kind: ExpiryKind, l: ExpiringLicense, now: Date, suffix: string) {
    const expires = Date.parse(l.usage_expires_at);
    const days = Number.isNaN(expires) ? 0 : Math.ceil((expires - now.getTime()) / DAY_MS);
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
          // The notices count days left; a reminder after the end counts them back (negative).
          days: kind === 'renewal_reminder' ? days : Math.max(0, days),
        },
        tx,
        `${kind}:${l.id}:${l.usage_expires_at}${suffix}`,
      ),
    );
  }
}
