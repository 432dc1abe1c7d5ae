import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { AuditService } from '../audit/audit.module.js';
import type { SettingsService } from '../settings/settings.service.js';
import { CatalogueRepository } from './catalogue.repository.js';
import { CatalogueService } from './catalogue.service.js';
import { CouponsRepository } from './coupons.repository.js';
import { CouponsService } from './coupons.service.js';
import { GatewaysRepository } from './gateways.repository.js';
import { GatewaysService } from './gateways.service.js';
import { RulesRepository } from './rules.repository.js';
import { ShippingService } from './shipping.service.js';
import { TaxService } from './tax.service.js';

export type { CatalogueService } from './catalogue.service.js';

/**
 * Builds the catalogue module: products and variations, with coupons, tax rates, shipping zones
 * and gateways as parts of the one service other modules are given.
 */
export function createCatalogue(deps: {
  database: Database;
  clock: Clock;
  settings: SettingsService;
  /** Records the administrator's changes (docs/admin.md, 'Audit trail'). */
  audit: AuditService;
}): CatalogueService {
  const { database, clock, settings } = deps;
  const products = new CatalogueRepository(database.db, database.dialect);
  return new CatalogueService(database, products, clock, settings, deps.audit, {
    coupons: new CouponsService(
      new CouponsRepository(database.db),
      products,
      clock,
      settings,
      database,
      deps.audit,
    ),
    taxRates: new TaxService(
      new RulesRepository(database.db, 'tax_rates', ['priority', 'id']),
      database,
      deps.audit,
    ),
    shipping: new ShippingService(
      new RulesRepository(database.db, 'shipping_zones', ['id']),
      settings,
      database,
      deps.audit,
    ),
    gateways: new GatewaysService(new GatewaysRepository(database.db), database, deps.audit, settings),
  });
}
