import type { Clock } from '../../clock.js';
import { iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { RateCounter } from '../../http/rate-limit.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { ActivationService } from '../licensing/activation.service.js';
import type { LicenseRepository } from '../licensing/license.repository.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { ReleasesService } from '../releases/releases.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { DistributionService } from './distribution.service.js';
import { DownloadService } from './download.service.js';
import { ISSUANCE_BUCKETS, Preflight } from './preflight.js';
import { TokenIssuer } from './tokens.js';
import { TokensRepository } from './tokens.repository.js';

export interface DistributionModule {
  distribution: DistributionService;
  downloads: DownloadService;
  tokens: TokensRepository;
  issuer: TokenIssuer;
}

/**
 * Wires the distribution module and hooks token invalidation into the transactions that must
 * carry it: deactivation, revocation and release withdrawal (docs/distribution.md, section 4).
 */
export function createDistribution(deps: {
  database: Database;
  clock: Clock;
  settings: SettingsService;
  catalogue: CatalogueService;
  releases: ReleasesService;
  licenses: LicenseService;
  activations: ActivationService;
  licenseRepository: LicenseRepository;
  baseUrl: () => string;
}): DistributionModule {
  const { clock } = deps;
  const tokens = new TokensRepository(deps.database);
  const now = () => iso(clock.now());
  deps.activations.onDeactivate((trx, activationId) =>
    tokens.invalidate(trx, 'activation_id', activationId, 'deactivated', now()),
  );
  deps.licenses.onRevoke((trx, licenseId) => tokens.invalidateForLicense(trx, licenseId, 'revoked', now()));
  deps.releases.onWithdraw(({ db, release, reason }) =>
    tokens.invalidate(db, 'release_id', release.id, reason, now()),
  );
  deps.releases.setOutstandingTokenCounter((ids) => tokens.outstanding(ids, now()));
  const preflight = new Preflight(
    deps.catalogue,
    deps.settings,
    deps.licenseRepository,
    new RateCounter(deps.database, clock, { memoryBuckets: ISSUANCE_BUCKETS }),
    clock,
  );
  const issuer = new TokenIssuer(tokens, deps.settings, clock, () => `${deps.baseUrl()}/software/download`);
  const distribution = new DistributionService(preflight, deps.catalogue, deps.releases, issuer, tokens, {
    base: deps.baseUrl,
  });
  const downloads = new DownloadService(tokens, deps.releases, deps.settings, clock);
  return { distribution, downloads, tokens, issuer };
}
