import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { InvoicesRepository } from './invoices.repository.js';
import { InvoicesService } from './invoices.service.js';

export type { InvoicesService } from './invoices.service.js';

/** Builds the invoices module; its paid and refund hooks are wired in src/wiring.ts. */
export function createInvoices(deps: {
  database: Database;
  orders: OrdersService;
  settings: SettingsService;
  clock: Clock;
}): InvoicesService {
  return new InvoicesService(
    new InvoicesRepository(deps.database.db),
    deps.orders,
    deps.settings,
    deps.clock,
  );
}
