import type { Clock } from '../../clock.js';
import type { AppSecrets } from '../../db/app-secrets.js';
import type { Database } from '../../db/database.js';
import { MemoryRateCounter, RateCounter } from '../../http/rate-limit.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { LicenseLookupService } from '../licensing/license-lookup.service.js';
import type { RenewalLinks } from '../licensing/renewal-links.js';
import type { ReleasesService } from '../releases/releases.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { AccountDownloadsService } from './account-downloads.service.js';
import { TokenBearers } from './bearer.js';
import { DistributionService } from './distribution.service.js';
import { DownloadService } from './download.service.js';
import { ISSUANCE_SLOTS, Preflight } from './preflight.js';
import { TokenInvalidationService } from './token-invalidation.service.js';
import { TokenIssuer } from './tokens.js';
import { TokensRepository } from './tokens.repository.js';

export interface DistributionModule {
  distribution: DistributionService;
  downloads: DownloadService;
  /** A signed-in customer's downloads without a site: the list and the account token's mint. */
  account: AccountDownloadsService;
  /** What other modules' transactions call when a token's binding ends (hooks in src/wiring.ts). */
  invalidations: TokenInvalidationService;
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
  licenses: LicenseLookupService;
  baseUrl: () => string;
  /** The store's public origin: the storefront's product pages (renewal_url). */
  origin: () => string;
  /** A term license's one-click renewal link, its answers' renewal_url (docs/selling.md, 'Renewals'). */
  renewalLinks: Pick<RenewalLinks, 'url'>;
  /** The download tokens' secret (TokenBearers). */
  secrets: AppSecrets;
}): DistributionModule {
  const { clock } = deps;
  const tokens = new TokensRepository(deps.database);
  const preflight = new Preflight(
    deps.catalogue,
    deps.settings,
    deps.licenses,
    // One process serves a SQLite store: its issuance counts are kept in its memory.
    deps.database.sqlite
      ? new MemoryRateCounter(ISSUANCE_SLOTS, clock)
      : new RateCounter(deps.database, clock),
    clock,
  );
  const bearers = new TokenBearers(deps.secrets);
  const issuer = new TokenIssuer(
    tokens,
    bearers,
    deps.settings,
    clock,
    () => `${deps.baseUrl()}/software/download`,
  );
  const distribution = new DistributionService(
    preflight,
    deps.catalogue,
    deps.releases,
    issuer,
    deps.licenses,
    {
      base: deps.baseUrl,
      origin: deps.origin,
    },
    deps.settings,
    deps.renewalLinks,
    clock,
  );
  const downloads = new DownloadService(
    tokens,
    bearers,
    deps.releases,
    deps.catalogue,
    deps.licenses,
    deps.settings,
    clock,
  );
  const invalidations = new TokenInvalidationService(tokens, deps.licenses, clock);
  const account = new AccountDownloadsService(
    deps.catalogue,
    deps.releases,
    deps.licenses,
    deps.settings,
    issuer,
    clock,
    preflight,
  );
  return { distribution, downloads, account, invalidations, tokens, issuer };
}
