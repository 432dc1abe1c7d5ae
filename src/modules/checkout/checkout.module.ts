import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { RateCounter } from '../../http/rate-limit.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { CartService } from '../cart/cart.service.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { TaxModule } from '../tax/tax.module.js';
import { CheckoutService } from './checkout.service.js';
import { PaymentService } from './payment.service.js';
import { SubmitService } from './submit.service.js';

export type { CheckoutService } from './checkout.service.js';
export type { PaymentService } from './payment.service.js';
export type { SubmitService } from './submit.service.js';

export interface CheckoutModule {
  /** Bootstrap, quote, fields, countries and shipping rates: the read-only parts. */
  checkout: CheckoutService;
  /** Places orders (docs/checkout.md, 'Submit'). */
  submit: SubmitService;
  /** Receipts and pay-order. */
  payments: PaymentService;
}

/** Builds the checkout module: it reaches orders, subscriptions and accounts through their services. */
export function createCheckout(deps: {
  database: Database;
  cart: CartService;
  catalogue: CatalogueService;
  settings: SettingsService;
  orders: OrdersService;
  subscriptions: SubscriptionsService;
  accounts: AccountsService;
  rates: RateCounter;
  tax: TaxModule;
  clock: Clock;
  /** The API's base URL (final only once the server listens), for pay and receipt links. */
  baseUrl: () => string;
  log: FastifyBaseLogger;
}): CheckoutModule {
  const checkout = new CheckoutService(
    deps.cart,
    deps.catalogue,
    deps.settings,
    deps.orders,
    deps.clock,
    deps.tax.vies,
  );
  const submit = new SubmitService(
    deps.database,
    checkout,
    deps.orders,
    deps.accounts,
    deps.subscriptions,
    deps.rates,
    deps.tax,
    deps.baseUrl,
    deps.log,
  );
  const payments = new PaymentService(deps.database, checkout, deps.orders, deps.subscriptions, submit);
  return { checkout, submit, payments };
}
