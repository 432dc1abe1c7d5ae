import type { FastifyBaseLogger } from 'fastify';
import { type Clock, iso, type TestClock } from '../../clock.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { LicenseExpiryScan } from './expiry.scan.js';
import type { MailRepository, MailRow } from './mail.repository.js';
import type { AccountFacts, MessageData, MessageKind } from './templates/facts.js';
import { render } from './templates/index.js';
import { LONGEST_SEND_MS, type MailTransport } from './transport.js';

/** Delay before attempts 2 to 6, in seconds; after attempt 6 the message is `failed` (docs/email.md). */
export const RETRY_DELAYS = [60, 300, 1800, 7200, 21_600] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS.length + 1;
/** A claim outlives the longest SMTP conversation, so a live process never loses a message it is sending. */
export const LEASE_MS = LONGEST_SEND_MS + 30_000;
export const TICK_MS = 1000;
const MAX_IN_FLIGHT = 4;

/** Mints the single-use password link a password message carries (accounts, through src/wiring.ts). */
export type PasswordLinks = (userId: number, purpose: 'reset' | 'welcome') => Promise<string | null>;

export interface MailWorkerDeps {
  repo: MailRepository;
  settings: SettingsService;
  transport: MailTransport;
  scan: LicenseExpiryScan;
  passwordLinks: PasswordLinks;
  clock: Clock;
  testClock: TestClock | null;
  log: FastifyBaseLogger;
  origin: () => string;
}

const PASSWORD_PURPOSE: Partial<Record<MessageKind, 'reset' | 'welcome'>> = {
  password_reset: 'reset',
  account_created: 'welcome',
};

/**
 * Sends the mail outbox from inside the server process, as the webhook dispatcher delivers its
 * outbox: every second it claims due messages (a lease in the row, so processes share the work
 * and a crashed one's messages come back when the lease runs out), sends each over SMTP and
 * schedules a retry with backoff on failure. With smtp_url empty it claims nothing: messages wait.
 * A process that dies after the SMTP server accepted a message but before recording it may let
 * another process send it again when the lease runs out (at least once, docs/email.md).
 */
export class MailWorker {
  private running = false;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private tickActive = false;
  private stopping = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: MailWorkerDeps) {}

  get started(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.schedule(0);
  }

  /** Stops ticking, cuts sends in flight off (they do not count and are released) and waits. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    this.deps.transport.close();
    await this.drain();
  }

  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** One pass: the expiry scan when due, then claim what is due and start sending it. Answers how many it claimed. */
  async tick(): Promise<number> {
    const { repo, clock, testClock, settings, log } = this.deps;
    if (testClock) await testClock.sync();
    await this.deps.scan.maybe().catch((err) => log.warn({ err }, 'license expiry scan failed'));
    const current = await settings.get();
    if (!current.smtp_url) return 0;
    const free = MAX_IN_FLIGHT - this.inFlight.size;
    if (free <= 0) return 0;
    const now = clock.now();
    const lease = iso(new Date(now.getTime() + LEASE_MS));
    const claimed = await repo.claimDue(iso(now), lease, free);
    for (const message of claimed) {
      const sending: Promise<void> = this.send(message, lease, current)
        .catch((err) => log.error({ err, message_id: message.id }, 'mail send failed'))
        .finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
    return claimed.length;
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.runTick();
    }, ms);
    // The HTTP server keeps a serving process alive; the loop alone never should.
    this.timer.unref();
  }

  private runTick(): void {
    if (this.tickActive) return;
    this.tickActive = true;
    this.ticking = this.tick()
      .then(() => undefined)
      .catch((err) => this.deps.log.error({ err }, 'mail worker tick failed'))
      .finally(() => {
        this.tickActive = false;
        if (this.running) this.schedule(TICK_MS);
      });
  }

  /** The From of every message: mail_from, else the store's name at no-reply@ the PUBLIC_URL host. */
  private from(settings: Settings): string | { name: string; address: string } {
    if (settings.mail_from) return settings.mail_from;
    let host = 'localhost';
    try {
      host = new URL(this.deps.origin()).hostname || host;
    } catch {
      // PUBLIC_URL is validated at start; the fallback only keeps a From when it is not.
    }
    return { name: settings.store_name, address: `no-reply@${host}` };
  }

  private async send(message: MailRow, lease: string, settings: Settings): Promise<void> {
    const { repo, clock, log, transport } = this.deps;
    const attempt = message.attempts + 1;
    const started = clock.now();
    let error: string | null = null;
    try {
      const kind = message.kind as MessageKind;
      const data = JSON.parse(message.data) as MessageData[MessageKind];
      let link = '';
      const purpose = PASSWORD_PURPOSE[kind];
      if (purpose) {
        link = (await this.deps.passwordLinks((data as AccountFacts).user_id, purpose)) ?? '';
        if (!link) throw new Error('the account no longer exists');
      }
      const rendered = render(kind, data, {
        store_name: settings.store_name,
        accent: settings.store_accent_color,
        origin: this.deps.origin(),
        link,
      });
      await transport.send(settings.smtp_url, {
        from: this.from(settings),
        to: message.recipient,
        ...rendered,
      });
    } catch (err) {
      if (this.stopping) {
        // Shutting down: this attempt does not count; the next process to run takes the message.
        await repo.release(message.id, lease);
        return;
      }
      error = transport.describe(err, settings.smtp_url);
    }
    const at = iso(clock.now());
    if (error === null) {
      await repo.finish(message.id, lease, {
        status: 'sent',
        attempts: attempt,
        next_attempt_at: null,
        last_error: null,
        sent_at: at,
        updated_at: at,
      });
      return;
    }
    const giveUp = attempt >= MAX_ATTEMPTS;
    const delay = RETRY_DELAYS[attempt - 1] ?? 0;
    await repo.finish(message.id, lease, {
      status: giveUp ? 'failed' : 'pending',
      attempts: attempt,
      next_attempt_at: giveUp ? null : iso(new Date(started.getTime() + delay * 1000)),
      last_error: error,
      sent_at: null,
      updated_at: at,
    });
    log.warn(
      { message_id: message.id, kind: message.kind, attempt, error },
      giveUp ? 'mail failed' : 'mail attempt failed',
    );
  }
}
