import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { resolveCurrency } from '../catalogue/currency.js';
import type { LicenseService } from '../licensing/license.service.js';
import type { LicenseRecord } from '../licensing/licensing.model.js';
import type { RenewalLinks } from '../licensing/renewal-links.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { RenewalLinkRepository } from './license-renewals.repository.js';
import type { OrderRow } from './orders.model.js';
import { type OrdersService, plainOrder } from './orders.service.js';

/** What opening a renewal link comes to: the order to pay (or see), or the license already renewed. */
export type RenewalLinkOutcome =
  | { renewed: false; order: OrderRow }
  | { renewed: true; license_id: number; product: string; usage_expires_at: string };

/** An order a renewal link may send its buyer back to; any other (cancelled, refunded) is replaced. */
const KEPT = new Set(['pending', 'failed', 'on-hold', 'processing', 'completed']);

/**
 * Buying the renewal of a term license (docs/selling.md, 'Buying a renewal' and 'Renewals'): a
 * pending order of one item, the license's product or variation at its price less
 * `renewal_discount_percent`, whose meta names the license (`license_id`, `license_action:
 * 'renewal'`). Paying it (pay-order, any gateway) extends the license instead of issuing a new one
 * (the orders' paid step). The owner makes one signed in; a renewal link makes one for its
 * license's owner without a sign-in, once per period however often it is opened.
 */
export class RenewalService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly settings: SettingsService,
    private readonly catalogue: CatalogueService,
    private readonly orders: OrdersService,
    private readonly licenses: LicenseService,
    private readonly links: RenewalLinks,
    private readonly linkOrders: RenewalLinkRepository,
  ) {}

  /** The owner's pending renewal order of the license, in the store's base currency. */
  async createOrder(licenseId: number, userId: number): Promise<OrderRow> {
    const { license } = await this.licenses.renewable(licenseId, userId);
    const make = await this.orderMaker(license);
    return withTransaction(this.database, (tx) => make(tx));
  }

  /**
   * Opens a renewal link (`/renew?token=…`): 400 `invalid_renewal_link` for one this store did
   * not sign, 410 `renewal_link_expired` past its time. A license renewed since the link was made
   * answers as renewed, never with a second order; otherwise the period's order, made the first
   * time (a cancelled one is replaced).
   */
  async openLink(token: string): Promise<RenewalLinkOutcome> {
    const claim = await this.links.verify(token);
    const license = await this.licenses.renewableByLink(claim.license_id);
    const end = Math.floor(Date.parse(license.usage_expires_at!) / 1000);
    if (end > claim.end) {
      return {
        renewed: true,
        license_id: license.id,
        product: license.product_name ?? '',
        usage_expires_at: license.usage_expires_at!,
      };
    }
    // The end moved back (an administrator's edit): the link names a period that is not the license's.
    if (end < claim.end) throw new ApiError('invalid_renewal_link');
    const make = await this.orderMaker(license);
    return withTransaction(this.database, async (tx) => {
      const row = await this.linkOrders.claim(license.id, end, iso(this.clock.now()), tx);
      const existing = row.order_id === null ? undefined : await this.orders.find(row.order_id, tx);
      if (existing && KEPT.has(existing.status)) return { renewed: false as const, order: existing };
      const order = await make(tx);
      await this.linkOrders.setOrder(license.id, end, order.id, tx);
      return { renewed: false as const, order };
    });
  }

  /** Prices the license's renewal (read before the transaction) and answers how to write its order. */
  private async orderMaker(license: LicenseRecord): Promise<(tx: Tx) => Promise<OrderRow>> {
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
    const parent = license.order_id ? await this.orders.find(license.order_id) : undefined;
    return (tx) =>
      this.orders.createForLicense(
        {
          ...plainOrder(ctx, settings, {
            customer_id: license.user_id,
            created_via: 'checkout',
            now: iso(this.clock.now()),
          }),
          test: license.test,
        },
        {
          product_id: license.product_id,
          variation_id: license.variation_id ?? 0,
          name,
          meta: JSON.stringify({ license_id: license.id, license_action: 'renewal' }),
        },
        { parent, amount: total, pricesIncludeTax: settings.prices_include_tax },
        tx,
      );
  }
}
