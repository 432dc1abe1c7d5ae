import type { FastifyBaseLogger } from 'fastify';
import type { Clock, TestClock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { SettingsService } from '../settings/settings.service.js';
import { WebhookDispatcher } from './dispatcher.js';
import { TargetResolver, type WebhookTargetFilter } from './target.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

export type { WebhookTarget, WebhookTargetFilter } from './target.js';

/** Wires the webhook module; app.ts starts the dispatcher when the server listens and stops it on close. */
export function createWebhooks(deps: {
  database: Database;
  settings: SettingsService;
  clock: Clock;
  testClock: TestClock | null;
  log: FastifyBaseLogger;
  self: () => { origin: string; port: number | null };
  filter?: WebhookTargetFilter;
  attemptTimeoutMs?: number;
}): { webhooks: WebhooksService; dispatcher: WebhookDispatcher } {
  const repository = new WebhooksRepository(deps.database.db, deps.database.dialect);
  const targets = new TargetResolver(deps.database.db, deps.settings, deps.clock, deps.filter);
  const dispatcher = new WebhookDispatcher({
    repository,
    targets,
    clock: deps.clock,
    testClock: deps.testClock,
    log: deps.log,
    self: deps.self,
    attemptTimeoutMs: deps.attemptTimeoutMs,
  });
  return { webhooks: new WebhooksService(repository, deps.clock), dispatcher };
}
