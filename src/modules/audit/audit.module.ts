import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';

export type { Actor } from './audit.model.js';
export type { AuditService } from './audit.service.js';

/** Builds the audit trail; the services that record changes are handed this one service. */
export function createAudit(deps: { database: Database; clock: Clock }): AuditService {
  return new AuditService(new AuditRepository(deps.database.db), deps.clock);
}
