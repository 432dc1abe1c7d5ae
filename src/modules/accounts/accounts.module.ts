import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { RateCounter } from '../../http/rate-limit.js';
import type { AuditService } from '../audit/audit.service.js';
import { AccountsRepository } from './accounts.repository.js';
import { AccountsService } from './accounts.service.js';

export type { AccountsService } from './accounts.service.js';

/** Builds the accounts module: users, sign-in sessions and application passwords. */
export function createAccounts(deps: {
  database: Database;
  clock: Clock;
  rates: RateCounter;
  audit: AuditService;
}): AccountsService {
  return new AccountsService(
    new AccountsRepository(deps.database.db),
    deps.clock,
    deps.rates,
    deps.database,
    deps.audit,
  );
}
