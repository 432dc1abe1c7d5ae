import type { Clock } from '../../clock.js';
import type { AppSecrets } from '../../db/app-secrets.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { DistributionService } from '../distribution/distribution.service.js';
import type { ActivationService } from '../licensing/activation.service.js';
import type { LicenseLookupService } from '../licensing/license-lookup.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { LegacyService } from './legacy.service.js';
import { LmfwcService } from './lmfwc.service.js';
import { PackageLinks } from './package-links.js';

export type { LegacyService } from './legacy.service.js';
export type { LmfwcService } from './lmfwc.service.js';

/** Builds the compatibility API of the updaters already in the field (docs/migrating.md). */
export function createLegacy(deps: {
  catalogue: CatalogueService;
  activations: ActivationService;
  lookup: LicenseLookupService;
  distribution: DistributionService;
  settings: SettingsService;
  clock: Clock;
  /** The store's link secret (the package link is signed as the renewal link is). */
  secrets: AppSecrets;
  /** The store's public origin: where the package link points. */
  origin: () => string;
}): LegacyService {
  return new LegacyService(
    deps.catalogue,
    deps.activations,
    deps.lookup,
    deps.distribution,
    deps.settings,
    deps.clock,
    new PackageLinks(deps.secrets, deps.clock, () => `${deps.origin()}/edd-sl/package`),
  );
}

/** Builds License Manager for WooCommerce's license routes of the plugins in the field (docs/migrating.md). */
export function createLmfwc(deps: {
  catalogue: CatalogueService;
  activations: ActivationService;
  lookup: LicenseLookupService;
  settings: SettingsService;
  clock: Clock;
}): LmfwcService {
  return new LmfwcService(deps.catalogue, deps.activations, deps.lookup, deps.settings, deps.clock);
}
