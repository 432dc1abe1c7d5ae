import type { FastifyBaseLogger } from 'fastify';
import { type Clock, iso, type TestClock } from '../../clock.js';
import { nextAttempt, OutboxWorker } from '../../outbox/worker.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { LicenseExpiryWorker } from './expiry.worker.js';
import type { MailRepository, MailRow } from './mail.repository.js';
import type {
  AccountFacts,
  LicenseExpiryFacts,
  MessageData,
  MessageKind,
  TransferFacts,
} from './templates/facts.js';
import { render } from './templates/index.js';
import { type Attachment, LONGEST_SEND_MS, type MailTransport } from './transport.js';

/**
 * Delay before attempts 2 to 6, in seconds; after attempt 6 (one more than the delays) the message
 * is `failed` (docs/email.md, 'The outbox').
 */
export const RETRY_DELAYS = [60, 300, 1800, 7200, 21_600] as const;
/** A claim outlives the longest SMTP conversation, so a live process never loses a message it is sending. */
export const LEASE_MS = LONGEST_SEND_MS + 30_000;
const MAX_IN_FLIGHT = 4;

/** Mints the single-use link a password or sign-in message carries (accounts, through src/wiring.ts). */
export type PasswordLinks = (userId: number, purpose: LinkPurpose) => Promise<string | null>;
/** Mints the link of a license transfer's message (licensing, through src/wiring.ts); null once it is no longer pending. */
export type TransferLinks = (transferId: number) => Promise<string | null>;
type LinkPurpose = 'reset' | 'welcome' | 'signin';

/** Makes a renewal reminder's one-click renewal link (licensing, through src/wiring.ts); null: none can be made. */
export type RenewalLinkMaker = (licenseId: number, expiresAt: string) => Promise<string | null>;

export type MailAttachments = (kind: MessageKind, data: MessageData[MessageKind]) => Promise<Attachment[]>;

export interface MailWorkerDeps {
  repo: MailRepository;
  settings: SettingsService;
  transport: MailTransport;
  scan: LicenseExpiryWorker;
  passwordLinks: PasswordLinks;
  transferLinks: TransferLinks;
  renewalLinks: RenewalLinkMaker;
  /** Files a message carries, made when it is sent (src/wiring.ts: a receipt's invoice PDF). */
  attachments: MailAttachments;
  clock: Clock;
  testClock: TestClock | null;
  log: FastifyBaseLogger;
  origin: () => string;
}

const PASSWORD_PURPOSE: Partial<Record<MessageKind, LinkPurpose>> = {
  password_reset: 'reset',
  account_created: 'welcome',
  sign_in_link: 'signin',
};

/** Sends the mail outbox through the shared worker (src/outbox/worker.ts). */
export type MailWorker = OutboxWorker<MailRow, Settings>;

/**
 * The mail outbox: every second the worker runs the expiry scan when due, claims due messages,
 * sends each over SMTP and schedules a retry with backoff on failure. With smtp_url empty it
 * claims nothing: messages wait. A process that dies after the SMTP server accepted a message but
 * before recording it may let another process send it again when the lease runs out (at least
 * once, docs/email.md).
 */
export function createMailWorker(deps: MailWorkerDeps): MailWorker {
  const { repo, settings, transport, clock, log } = deps;
  const sender = new MailSender(deps);
  return new OutboxWorker<MailRow, Settings>(
    {
      name: 'mail worker',
      maxInFlight: MAX_IN_FLIGHT,
      leaseMs: LEASE_MS,
      beforeTick: async () => {
        await deps.scan.maybe().catch((err) => log.warn({ err }, 'license expiry scan failed'));
        const current = await settings.get();
        return current.smtp_url ? current : null;
      },
      claim: (now, leaseUntil, limit) => repo.outbox.claimDue(now, leaseUntil, limit),
      handle: (message, leaseUntil, current, signal) => sender.send(message, leaseUntil, current, signal),
      release: (message, leaseUntil) => repo.outbox.release(message.id, leaseUntil),
      // A send in flight fails at once when its connection closes.
      cutOff: () => transport.close(),
      describe: (message) => ({ message_id: message.id }),
    },
    { clock, testClock: deps.testClock, log },
  );
}

/** The From of every message: mail_from, else the store's name at no-reply@ the PUBLIC_URL host. */
export function fromAddress(settings: Settings, origin: string): string | { name: string; address: string } {
  if (settings.mail_from) return settings.mail_from;
  let host = 'localhost';
  try {
    host = new URL(origin).hostname || host;
  } catch {
    // PUBLIC_URL is validated at start; the fallback only keeps a From when it is not.
  }
  return { name: settings.store_name, address: `no-reply@${host}` };
}

/** One attempt at one message: the password link if it needs one, the SMTP send, its next state. */
class MailSender {
  constructor(private readonly deps: MailWorkerDeps) {}

  async send(message: MailRow, lease: string, settings: Settings, stopping: AbortSignal): Promise<void> {
    const { repo, clock, log, transport } = this.deps;
    const attempt = message.attempts + 1;
    const started = clock.now();
    let error: string | null = null;
    // A transfer cancelled, replaced or expired before its email left: no link, and none later.
    let moot = false;
    try {
      const kind = message.kind as MessageKind;
      const data = JSON.parse(message.data) as MessageData[MessageKind];
      let link = '';
      const purpose = PASSWORD_PURPOSE[kind];
      if (purpose) {
        link = (await this.deps.passwordLinks((data as AccountFacts).user_id, purpose)) ?? '';
        if (!link) throw new Error('the account no longer exists');
      } else if (kind === 'renewal_reminder') {
        const f = data as LicenseExpiryFacts;
        // Signed, not stored: made again on each attempt, the same link for the same period.
        link =
          (await this.deps.renewalLinks(f.license_id, f.expires_at)) ??
          `${this.deps.origin()}/account/licenses`;
      }
      if (kind === 'license_transfer') {
        link = (await this.deps.transferLinks((data as TransferFacts).transfer_id)) ?? '';
        moot = !link;
        if (moot) throw new Error('the transfer is no longer pending');
      }
      const rendered = render(kind, data, {
        store_name: settings.store_name,
        accent: settings.store_accent_color,
        origin: this.deps.origin(),
        link,
      });
      // stop() may have closed the connection while the link was minted: send nothing then.
      stopping.throwIfAborted();
      const attachments = await this.deps.attachments(kind, data);
      await transport.send(settings.smtp_url, {
        from: fromAddress(settings, this.deps.origin()),
        to: message.recipient,
        ...rendered,
        attachments,
      });
    } catch (err) {
      // Shutting down: the worker releases the message; this attempt does not count.
      if (stopping.aborted) throw err;
      error = transport.describe(err, settings.smtp_url);
    }
    const at = iso(clock.now());
    if (error === null) {
      await repo.outbox.finish(message.id, lease, {
        status: 'sent',
        attempts: attempt,
        next_attempt_at: null,
        last_error: null,
        sent_at: at,
        updated_at: at,
      });
      return;
    }
    const retryAt = moot ? null : nextAttempt(attempt, RETRY_DELAYS, started);
    const giveUp = retryAt === null;
    await repo.outbox.finish(message.id, lease, {
      status: giveUp ? 'failed' : 'pending',
      attempts: attempt,
      next_attempt_at: retryAt,
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
