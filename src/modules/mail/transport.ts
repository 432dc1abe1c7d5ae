import type nodemailer from 'nodemailer';
import type { Rendered } from './templates/layout.js';

/** Cut-offs of one SMTP conversation; the worker's lease (mail.worker.ts) outlasts their sum. */
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;
export const LONGEST_SEND_MS = CONNECTION_TIMEOUT_MS + GREETING_TIMEOUT_MS + SOCKET_TIMEOUT_MS;

/** A file sent with a message (the receipt's invoice PDF). */
export interface Attachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

type Transporter = ReturnType<typeof nodemailer.createTransport>;

/** The password of an smtp_url, as it may appear in a library's error text (raw and decoded). */
function secretsOf(smtpUrl: string): string[] {
  try {
    const raw = new URL(smtpUrl).password;
    if (!raw) return [];
    return [...new Set([raw, decodeURIComponent(raw)])].filter((s) => s.length > 0);
  } catch {
    return [];
  }
}

/**
 * Sends through nodemailer over SMTP as smtp_url says (`smtp://` with STARTTLS when the server
 * offers it, `smtps://` for TLS from the start; docs/email.md). One transport per URL, rebuilt when
 * the setting changes. nodemailer's own logger stays off, so the URL never reaches a log.
 */
export class MailTransport {
  private current: { url: string; transporter: Transporter } | null = null;

  async send(
    smtpUrl: string,
    message: {
      from: string | { name: string; address: string };
      to: string;
      attachments?: Attachment[];
    } & Rendered,
  ) {
    const transporter = await this.transporterFor(smtpUrl);
    const info = await transporter.sendMail({
      from: message.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      ...(message.attachments?.length ? { attachments: message.attachments } : {}),
    });
    return info;
  }

  /** Closes the open connection: a send in flight fails at once (the worker is stopping). */
  close(): void {
    this.current?.transporter.close();
    this.current = null;
  }

  /** An error as the outbox records it: code, SMTP answer and text, with the SMTP password removed. */
  describe(err: unknown, smtpUrl: string): string {
    const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
    const parts = [
      e?.code,
      e?.responseCode ? String(e.responseCode) : '',
      e?.response || e?.message || String(err),
    ];
    let text = parts.filter(Boolean).join(' ');
    for (const secret of secretsOf(smtpUrl)) text = text.split(secret).join('[REDACTED]');
    return text.slice(0, 500);
  }

  /** nodemailer is loaded with the first mail: a store that sends none never holds it (docs/performance.md, 'Memory'). */
  private async transporterFor(url: string): Promise<Transporter> {
    if (this.current?.url === url) return this.current.transporter;
    const { createTransport } = (await import('nodemailer')).default;
    if (this.current?.url === url) return this.current.transporter;
    this.current?.transporter.close();
    const transporter = createTransport({
      url,
      logger: false,
      debug: false,
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      greetingTimeout: GREETING_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
    } as Parameters<typeof nodemailer.createTransport>[0]);
    this.current = { url, transporter };
    return transporter;
  }
}
