import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { TestApp } from '../helpers/app.js';
import { setSettings } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';

/** A message as the test SMTP server received it, with its MIME parts decoded. */
export interface Received {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  text: string;
  html: string;
  user: string | null;
}

export interface Smtp {
  port: number;
  received: Received[];
  /** Answer every message with this SMTP code (e.g. 451 or 554) until set back to null. */
  refuseWith: number | null;
  /** How many DATA commands were answered (refused ones too). */
  attempts: number;
  /** While true, a message's DATA is never answered (a send in flight, for crash tests); it is not recorded. */
  hold: boolean;
  /** How many messages arrived while `hold` was on. */
  held: number;
  url(user?: string, pass?: string): string;
  close(): Promise<void>;
}

function decodeQp(s: string): string {
  const bytes = s
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** The body of the MIME part of this content type (quoted-printable or base64 decoded). */
function part(raw: string, type: string): string {
  const at = raw.search(new RegExp(`Content-Type: ${type}`, 'i'));
  if (at < 0) return '';
  const rest = raw.slice(at);
  const headerEnd = rest.search(/\r?\n\r?\n/);
  const headers = rest.slice(0, headerEnd);
  let body = rest.slice(headerEnd).replace(/^\r?\n\r?\n/, '');
  const name = /boundary="?([^";\r\n]+)"?/i.exec(raw)?.[1];
  const boundary = name ? body.indexOf(`--${name}`) : -1;
  if (boundary >= 0) body = body.slice(0, boundary).replace(/\r?\n$/, '');
  if (/quoted-printable/i.test(headers)) return decodeQp(body);
  if (/base64/i.test(headers)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

function subjectOf(raw: string): string {
  const m = /^Subject: (.*(?:\r?\n[ \t].*)*)/im.exec(raw);
  if (!m) return '';
  const folded = m[1]!.replace(/\r?\n[ \t]/g, ' ');
  // RFC 2047 encoded words, as nodemailer writes non-ASCII subjects.
  return folded
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_m, enc: string, text: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeQp(text.replace(/_/g, ' ')),
    )
    .replace(/\?= =\?/g, '');
}

/**
 * A real SMTP server (the smtp-server package) on 127.0.0.1 and a random port: no TLS (or TLS
 * from the start with `secure`, for smtps://), AUTH
 * PLAIN/LOGIN accepted for `user`/`pass` when given (allowInsecureAuth), every message recorded.
 */
export async function startSmtp(
  auth?: { user: string; pass: string },
  opts: { secure?: boolean; key?: Buffer; cert?: Buffer } = {},
): Promise<Smtp> {
  const state: Smtp = {
    port: 0,
    received: [],
    refuseWith: null,
    attempts: 0,
    hold: false,
    held: 0,
    url: (user, pass) => {
      const scheme = opts.secure ? 'smtps' : 'smtp';
      return user
        ? `${scheme}://${encodeURIComponent(user)}:${encodeURIComponent(pass ?? '')}@127.0.0.1:${state.port}`
        : `${scheme}://127.0.0.1:${state.port}`;
    },
    close: async () => {},
  };
  const server = new SMTPServer({
    // `secure`: TLS from the first byte, with the certificate given (self-signed by the test).
    secure: opts.secure ?? false,
    ...(opts.key && opts.cert ? { key: opts.key, cert: opts.cert } : {}),
    disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !auth,
    allowInsecureAuth: true,
    logger: false,
    onAuth(a, _session, callback) {
      if (auth && a.username === auth.user && a.password === auth.pass)
        return callback(null, { user: a.username });
      return callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (state.hold) {
          state.held++;
          return;
        }
        state.attempts++;
        if (state.refuseWith !== null) {
          const err = new Error(`refused by the test server`) as Error & { responseCode: number };
          err.responseCode = state.refuseWith;
          return callback(err);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        state.received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject: subjectOf(raw),
          text: part(raw, 'text/plain'),
          html: part(raw, 'text/html'),
          user: (session.user as string | undefined) ?? null,
        });
        callback();
      });
    },
  });
  // A client that drops the connection (a refused certificate, a killed process) is not the test's failure.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  state.port = (server.server.address() as AddressInfo).port;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

/** Points the store at the test server (smtp_url, mail_from). */
export async function connectMail(t: TestApp, url: string) {
  await setSettings(t, { smtp_url: url, mail_from: 'Test store <shop@example.com>' });
}

/** Waits for a message to this address whose subject matches. */
export function waitForMail(smtp: Smtp, to: string, subject?: RegExp, timeoutMs = 15_000): Promise<Received> {
  return waitFor(
    () => smtp.received.find((m) => m.to.includes(to) && (!subject || subject.test(m.subject))),
    `a mail to ${to}${subject ? ` matching ${subject}` : ''}`,
    { timeoutMs },
  );
}

/** The messages of the outbox as the administrator sees them. */
export type MailMessage = {
  id: number;
  kind: string;
  recipient: string;
  subject: string;
  status: string;
  attempts: number;
  last_error: string | null;
};
