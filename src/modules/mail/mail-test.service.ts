import { ApiError } from '../../http/errors.js';
import { escapeHtml } from '../../pages/html.js';
import type { SettingsService } from '../settings/settings.service.js';
import { fromAddress } from './mail.worker.js';
import type { MailTransport } from './transport.js';

/**
 * "Send a test email" of the console (docs/email.md, 'Checking the mail server'): one message sent
 * now over SMTP as the outbox sends (the same smtp_url, From and transport), and the answer is
 * the server's: sent, or the SMTP error (its code and reply, the password removed). Nothing is
 * queued: the store's owner waits for the answer.
 */
export class MailTestService {
  constructor(
    private readonly settings: SettingsService,
    private readonly transport: MailTransport,
    private readonly origin: () => string,
  ) {}

  async send(to: string): Promise<{ sent: true; to: string }> {
    const settings = await this.settings.get();
    if (!settings.smtp_url) throw new ApiError('mail_not_configured');
    const text = `This is a test email from ${settings.store_name}. The mail server works: receipts, license keys and notices will reach your buyers.`;
    try {
      await this.transport.send(settings.smtp_url, {
        from: fromAddress(settings, this.origin()),
        to,
        subject: `Test email from ${settings.store_name}`,
        text,
        html: `<p>${escapeHtml(text)}</p>`,
      });
    } catch (err) {
      throw new ApiError('mail_test_failed', {
        data: { smtp_error: this.transport.describe(err, settings.smtp_url) },
      });
    } finally {
      // One conversation: the next test (or a changed smtp_url) connects afresh.
      this.transport.close();
    }
    return { sent: true, to };
  }
}
