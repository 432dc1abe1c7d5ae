import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { AppSecrets } from '../../db/app-secrets.js';
import type { Database } from '../../db/database.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { CartRepository } from './cart.repository.js';
import { CartService, CartTokens } from './cart.service.js';

export type { CartService } from './cart.service.js';

/** Builds the cart module: carts, customer sessions and their signed cookie values (docs/cart.md). */
export function createCart(deps: {
  database: Database;
  catalogue: CatalogueService;
  settings: SettingsService;
  clock: Clock;
  log: FastifyBaseLogger;
  secrets: AppSecrets;
}): CartService {
  return new CartService(
    deps.database,
    new CartRepository(deps.database.db, deps.database.dialect),
    deps.catalogue,
    deps.settings,
    deps.clock,
    deps.log,
    new CartTokens(deps.secrets),
  );
}
