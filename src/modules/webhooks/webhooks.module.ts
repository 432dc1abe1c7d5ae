import type { FastifyBaseLogger } from 'fastify';
import type { Clock, TestClock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { Outbox } from './outbox.js';
import { TargetResolver, type WebhookTargetFilter } from './target.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';
import { createWebhookWorker, type WebhookWorker } from './webhooks.worker.js';

export type { EventData, Outbox } from './outbox.js';
export type { WebhookTarget, WebhookTargetFilter } from './target.js';
export type { WebhooksService } from './webhooks.service.js';
export type { WebhookWorker } from './webhooks.worker.js';

export interface WebhooksModule {
  /** Administration: the attempt log and redelivery. */
  webhooks: WebhooksService;
  /** How other modules add an event inside their own transaction. */
  outbox: Outbox;
  /** Delivers the outbox; app.ts starts it when the server listens and stops it on close. */
  dispatcher: WebhookWorker;
}

/** Wires the webhook module. */
export function createWebhooks(deps: {
  database: Database;
  settings: SettingsService;
  clock: Clock;
  testClock: TestClock | null;
  log: FastifyBaseLogger;
  self: () => { origin: string; port: number | null };
  /** The license validation URL every payload names (docs/webhooks.md, 'Events'). */
  validationUrl: () => string;
  filter?: WebhookTargetFilter;
  attemptTimeoutMs?: number;
  audit: AuditService;
}): WebhooksModule {
  const repository = new WebhooksRepository(deps.database);
  const targets = new TargetResolver(repository, deps.settings, deps.clock, deps.filter);
  const dispatcher = createWebhookWorker({
    database: deps.database,
    repository,
    targets,
    clock: deps.clock,
    testClock: deps.testClock,
    log: deps.log,
    self: deps.self,
    attemptTimeoutMs: deps.attemptTimeoutMs,
  });
  return {
    webhooks: new WebhooksService(repository, deps.clock, deps.database, deps.audit),
    outbox: new Outbox(repository, deps.clock, deps.validationUrl),
    dispatcher,
  };
}
