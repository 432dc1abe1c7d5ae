import { join } from 'node:path';
import type { Config } from '../../config.js';
import type { Database } from '../../db/database.js';
import type { AuditService } from '../audit/audit.module.js';
import { Keyring } from './keyring.js';
import { KeyVault } from './vault.service.js';

export type { Keyring } from './keyring.js';
export type * from './vault.model.js';
export { KeyVault, resealFailure } from './vault.service.js';

/**
 * The store-wide key vault (docs/releases.md, 'The encryption key'): what the releases module's
 * encrypted storage, the settings and the signing keys seal with, and its key rotation.
 */
export function createVault(deps: {
  database: Database;
  config: Pick<Config, 'dataDir' | 'vaultKey' | 'vaultPreviousKeys'>;
  /** Records each re-sealed value (docs/admin.md, 'Audit trail'). */
  audit: AuditService;
}): { vault: KeyVault } {
  const { config } = deps;
  const keyring = new Keyring(config.vaultKey, config.vaultPreviousKeys, join(config.dataDir, 'vault.key'));
  return { vault: new KeyVault(deps.database, keyring, deps.audit, config.vaultKey !== null) };
}
