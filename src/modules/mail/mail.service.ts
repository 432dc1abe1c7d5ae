import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { type Actor, diff } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { MailRepository, MailRow } from './mail.repository.js';
import type { MailMessage, MailQuery } from './mail.schemas.js';

/** The administrator's view of the mail outbox (docs/email.md, 'The outbox'): the list and resend. */
export class MailService {
  constructor(
    private readonly repo: MailRepository,
    private readonly clock: Clock,
    private readonly database: Pick<Database, 'db'>,
    private readonly audit: AuditService,
    private readonly settings: SettingsService,
  ) {}

  /**
   * Whether a buyer can count on an email from the store now (docs/email.md, 'When mail is not
   * available'): an SMTP server is set, and the newest message the store tried to send went out.
   * The pages that would say "check your email" say something true instead when it is not.
   */
  async available(): Promise<boolean> {
    if (!(await this.settings.get()).smtp_url) return false;
    const last = await this.repo.lastAttempted();
    return !last || last.last_error === null;
  }

  /** Messages waiting to be sent and the oldest one's due time (docs/operations.md, 'Metrics'). */
  backlog(now: Date): Promise<{ depth: number; oldestDue: string | null }> {
    return this.repo.outbox.backlog(iso(now));
  }

  async list(query: Omit<MailQuery, 'page' | 'per_page'>, page: number, perPage: number) {
    const { rows, total } = await this.repo.list({ status: query.status }, perPage, (page - 1) * perPage);
    return { items: rows.map(messageView), total };
  }

  /**
   * Makes the message due now with a fresh series of attempts, whatever its state (a sent message
   * is sent again). Recorded with the message's state before and after, never its content.
   */
  async resend(id: number, actor: Actor): Promise<MailMessage> {
    const row = await withTransaction(this.database, async (tx) => {
      const before = await this.repo.outbox.lock('id', id, tx);
      if (!before) throw new ApiError('mail_message_not_found');
      const after = (await this.repo.outbox.reschedule('id', id, iso(this.clock.now()), tx))!;
      const changes = diff(before, after, ['status', 'attempts', 'next_attempt_at']);
      await this.audit.record(
        actor,
        { entity_type: 'mail_message', entity_id: id, action: 'resend', changes },
        tx,
      );
      return after;
    });
    return messageView(row);
  }
}

export const messageView = (row: MailRow): MailMessage => ({
  id: Number(row.id),
  kind: row.kind as MailMessage['kind'],
  recipient: row.recipient,
  subject: row.subject,
  status: row.status,
  attempts: row.attempts,
  next_attempt_at: row.next_attempt_at,
  last_error: row.last_error,
  sent_at: row.sent_at,
  created_at: row.created_at,
});
