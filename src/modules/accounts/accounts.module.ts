import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { RateCounter } from '../../http/rate-limit.js';
import { AccountsRepository } from './accounts.repository.js';
import { AccountsService } from './accounts.service.js';

export type { AccountsService } from './accounts.service.js';

/** Builds the accounts module: users, sign-in sessions and application passwords. */
export function createAccounts(deps: {
  database: Database;
  clock: Clock;
  rates: RateCounter;
}): AccountsService {
  return new AccountsService(new AccountsRepository(deps.database.db), deps.clock, deps.rates);
}
