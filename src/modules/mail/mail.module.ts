import type { FastifyBaseLogger } from 'fastify';
import type { Clock, TestClock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { LicenseExpiryWorker } from './expiry.worker.js';
import { MailOutbox } from './mail.outbox.js';
import { MailRepository } from './mail.repository.js';
import { MailService } from './mail.service.js';
import {
  createMailWorker,
  type MailAttachments,
  type MailWorker,
  type PasswordLinks,
  type RenewalLinkMaker,
  type TransferLinks,
} from './mail.worker.js';
import { MailTestService } from './mail-test.service.js';
import { MailTransport } from './transport.js';

export type { LicenseExpiryWorker } from './expiry.worker.js';
export type { MailOutbox } from './mail.outbox.js';
export type { MailService } from './mail.service.js';
export type { MailWorker, PasswordLinks } from './mail.worker.js';
export type { MailTestService } from './mail-test.service.js';

export interface MailModule {
  /** Administration: the outbox's list and resend. */
  mail: MailService;
  /** The console's "send a test email": one message now, answered with the SMTP server's verdict. */
  mailTest: MailTestService;
  /** How a change adds its message inside its own transaction (the hooks in src/wiring.ts). */
  mailOutbox: MailOutbox;
  /** Sends the outbox; app.ts starts it when the server listens and stops it on close. */
  mailWorker: MailWorker;
  /** License expiring/expired notices; the worker runs it, tests call run(). */
  expiryScan: LicenseExpiryWorker;
}

/** Builds the mail module (docs/email.md). `passwordLinks` mints a password message's link when it is sent. */
export function createMail(deps: {
  database: Database;
  settings: SettingsService;
  clock: Clock;
  testClock: TestClock | null;
  log: FastifyBaseLogger;
  audit: AuditService;
  origin: () => string;
  passwordLinks: PasswordLinks;
  transferLinks: TransferLinks;
  renewalLinks: RenewalLinkMaker;
  attachments: MailAttachments;
}): MailModule {
  const repo = new MailRepository(deps.database);
  const mailOutbox = new MailOutbox(repo, deps.settings, deps.clock, deps.origin);
  const expiryScan = new LicenseExpiryWorker(deps.database, repo, mailOutbox, deps.settings, deps.clock);
  const mailWorker = createMailWorker({
    repo,
    settings: deps.settings,
    transport: new MailTransport(),
    scan: expiryScan,
    passwordLinks: deps.passwordLinks,
    transferLinks: deps.transferLinks,
    renewalLinks: deps.renewalLinks,
    attachments: deps.attachments,
    clock: deps.clock,
    testClock: deps.testClock,
    log: deps.log,
    origin: deps.origin,
  });
  return {
    mail: new MailService(repo, deps.clock, deps.database, deps.audit, deps.settings),
    // Its own transport: closing it after a test never cuts off a message the worker is sending.
    mailTest: new MailTestService(deps.settings, new MailTransport(), deps.origin),
    mailOutbox,
    mailWorker,
    expiryScan,
  };
}
