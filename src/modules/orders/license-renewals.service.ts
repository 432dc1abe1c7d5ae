import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { withTransaction } from '../../db/transaction.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { resolveCurrency } from '../catalogue/currency.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { OrderRow } from './orders.model.js';
import { type OrdersService, plainOrder } from './orders.service.js';

/**
 * Buying the renewal of a term license (docs/selling.md, 'Buying a renewal'): a pending order of
 * one item, the license's product or variation at its price less `renewal_discount_percent`,
 * whose meta names the license (`license_id`, `license_action: 'renewal'`). Paying it (pay-order,
 * any gateway) extends the license instead of issuing a new one (the orders' paid step).
 */
export class RenewalService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly settings: SettingsService,
    private readonly catalogue: CatalogueService,
    private readonly orders: OrdersService,
    private readonly licenses: LicenseService,
  ) {}

  /** The owner's pending renewal order of the license, in the store's base currency. */
  async createOrder(licenseId: number, userId: number): Promise<OrderRow> {
    const { license } = await this.licenses.renewable(licenseId, userId);
    const settings = await this.settings.get();
    const product = await this.catalogue.getProduct(license.product_id);
    const variation = product?.variations.find((v) => v.id === license.variation_id) ?? null;
    const ctx = resolveCurrency(settings, null)!;
    const price = variation ? variation.price_minor : (product?.price_minor ?? 0);
    // Minor units, rounded half up: 25% off 1999 is 1499.
    const total = Math.round((price * (100 - settings.renewal_discount_percent)) / 100);
    const name = product
      ? `Renewal: ${variation ? `${product.name} - ${variation.name}` : product.name}`
      : `Renewal: product ${license.product_id}`;
    const now = iso(this.clock.now());
    return withTransaction(this.database, (tx) =>
      this.orders.create(
        {
          ...plainOrder(ctx, settings, { customer_id: userId, created_via: 'checkout', total, now }),
          test: license.test,
        },
        [
          {
            product_id: license.product_id,
            variation_id: license.variation_id ?? 0,
            name,
            quantity: 1,
            price: total,
            subtotal: total,
            subtotal_tax: 0,
            total,
            total_tax: 0,
            meta: JSON.stringify({ license_id: license.id, license_action: 'renewal' }),
            subscription_id: null,
          },
        ],
        tx,
      ),
    );
  }
}
