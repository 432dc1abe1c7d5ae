import type { Database } from '../../db/database.js';
import type { AuditService } from '../audit/audit.module.js';
import type { SecretVault } from '../vault/vault.module.js';
import { SettingsRepository } from './settings.repository.js';
import { SettingsService } from './settings.service.js';

export type { SettingsService } from './settings.service.js';

/** Builds the settings module: the one service every module reads the store settings through. */
export function createSettings(deps: {
  database: Database;
  audit: AuditService;
  /** Seals the secret settings (the Stripe keys) with the vault key. */
  vault: SecretVault;
}): SettingsService {
  return new SettingsService(deps.database, new SettingsRepository(deps.database.db), deps.audit, deps.vault);
}
