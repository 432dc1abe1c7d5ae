import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { RateCounter } from '../../http/rate-limit.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { LicenseRepository } from '../licensing/license.repository.js';
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
 * Builds the distribution module. The token invalidations that other modules' transactions must
 * carry (deactivation, revocation, release withdrawal) are wired in src/wiring.ts.
 */
export function createDistribution(deps: {
  database: Database;
  clock: Clock;
  settings: SettingsService;
  catalogue: CatalogueService;
  releases: ReleasesService;
  licenseRepository: LicenseRepository;
  baseUrl: () => string;
}): DistributionModule {
  const { clock } = deps;
  const tokens = new TokensRepository(deps.database);
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
