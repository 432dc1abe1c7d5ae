import { type Clock, iso } from '../../clock.js';
import type { Tx } from '../../db/transaction.js';
import type { LicenseLookupService } from '../licensing/license-lookup.service.js';
import type { TokensRepository } from './tokens.repository.js';

/**
 * Stops the unclaimed download tokens whose binding ended (docs/distribution.md, 'What a token is
 * bound to'): a site deactivated, a license revoked, a release withdrawn or its artifact deleted.
 * Each runs in the transaction of the change (hooks registered in src/wiring.ts), so a change
 * that rolls back leaves its tokens as they were.
 */
export class TokenInvalidationService {
  constructor(
    private readonly repo: TokensRepository,
    private readonly licenses: Pick<LicenseLookupService, 'activationIdsOf'>,
    private readonly clock: Clock,
  ) {}

  /** A site deactivated: the tokens bound to its activation. */
  activation(activationId: number, tx: Tx): Promise<void> {
    return this.repo.invalidate('activation_id', activationId, 'deactivated', iso(this.clock.now()), tx);
  }

  /** A license revoked: the tokens bound to any of its activations. */
  async license(licenseId: number, tx: Tx): Promise<void> {
    const activationIds = await this.licenses.activationIdsOf(licenseId, tx);
    await this.repo.invalidateForLicense(licenseId, activationIds, 'revoked', iso(this.clock.now()), tx);
  }

  /** Test data deleted: the tokens of test licenses go before the licenses (docs/payments.md). */
  deleteOfTestLicenses(tx: Tx): Promise<number> {
    return this.repo.deleteOfTestLicenses(tx);
  }

  /** A release withdrawn, or its artifact deleted: the tokens issued for it. */
  release(releaseId: number, reason: 'withdrawn' | 'artifact_deleted', tx: Tx): Promise<void> {
    return this.repo.invalidate('release_id', releaseId, reason, iso(this.clock.now()), tx);
  }
}
