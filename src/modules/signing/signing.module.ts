import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { AuditService } from '../audit/audit.module.js';
import type { SecretVault } from '../vault/vault.module.js';
import { SigningRepository } from './signing.repository.js';
import { SigningService } from './signing.service.js';

export type { PublicSigningKey, Signature } from './signing.service.js';
export { SigningService } from './signing.service.js';

/**
 * The signing keys (docs/administration.md, 'Signing keys'): what other modules sign with
 * (licensing's offline receipts) through `SigningService.sign`, and releases through `signDigest`.
 */
export function createSigning(deps: {
  database: Database;
  clock: Clock;
  /** Seals the private halves at rest with the store's vault key (the vault module). */
  vault: SecretVault;
  /** Records rotations (docs/admin.md, 'Audit trail'). */
  audit: AuditService;
}): { signing: SigningService } {
  const repo = new SigningRepository(deps.database);
  return { signing: new SigningService(deps.database, repo, deps.vault, deps.clock, deps.audit) };
}
