import type { OutboxColumns } from '../../outbox/outbox.repository.js';

/** `pending` waits for the worker (also while smtp_url is empty); `failed` gave up after every attempt. */
export type MailStatus = 'pending' | 'sent' | 'failed';

export interface MailTables {
  mail_messages: OutboxColumns & {
    kind: string;
    recipient: string;
    subject: string;
    /** JSON facts of the message (src/modules/mail/templates/), rendered when it is sent. */
    data: string;
    dedupe_key: string | null;
    status: MailStatus;
    sent_at: string | null;
  };
}
