import type { Id } from '../../db/schema.js';

/** `pending` waits for the worker (also while smtp_url is empty); `failed` gave up after every attempt. */
export type MailStatus = 'pending' | 'sent' | 'failed';

export interface MailTables {
  mail_messages: {
    id: Id;
    kind: string;
    recipient: string;
    subject: string;
    /** JSON facts of the message (src/modules/mail/templates/), rendered when it is sent. */
    data: string;
    dedupe_key: string | null;
    status: MailStatus;
    attempts: number;
    next_attempt_at: string | null;
    locked_until: string | null;
    last_error: string | null;
    sent_at: string | null;
    created_at: string;
    updated_at: string;
  };
}
