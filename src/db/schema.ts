import type { Generated } from 'kysely';
import type { AccountsTables } from '../modules/accounts/accounts.tables.js';
import type { AuditTables } from '../modules/audit/audit.tables.js';
import type { CartTables } from '../modules/cart/cart.tables.js';
import type { CatalogueTables } from '../modules/catalogue/catalogue.tables.js';
import type { DistributionTables } from '../modules/distribution/distribution.tables.js';
import type { ImportsTables } from '../modules/imports/imports.tables.js';
import type { InvoicesTables } from '../modules/invoices/invoices.tables.js';
import type { LicensingTables } from '../modules/licensing/licensing.tables.js';
import type { OAuthTables } from '../modules/licensing/oauth.tables.js';
import type { MailTables } from '../modules/mail/mail.tables.js';
import type { MediaTables } from '../modules/media/media.tables.js';
import type { OrdersTables } from '../modules/orders/orders.tables.js';
import type { ReleasesTables } from '../modules/releases/releases.tables.js';
import type { ReportsTables } from '../modules/reports/reports.tables.js';
import type { SigningTables } from '../modules/signing/signing.tables.js';
import type { StripeTables } from '../modules/stripe/stripe.tables.js';
import type { SubscriptionsTables } from '../modules/subscriptions/subscriptions.tables.js';
import type { WebhooksTables } from '../modules/webhooks/webhooks.tables.js';

/** Tables owned by no single domain. */
export interface CoreTables {
  app_state: { key: string; value: string };
  settings: { key: string; value: string };
  rate_counters: { bucket: string; window_start: number; count: number };
}

/** The whole schema: each domain declares its own tables next to its repository. */
export interface DB
  extends CoreTables,
    AccountsTables,
    CatalogueTables,
    CartTables,
    WebhooksTables,
    LicensingTables,
    OAuthTables,
    ReleasesTables,
    DistributionTables,
    SubscriptionsTables,
    OrdersTables,
    AuditTables,
    ReportsTables,
    MediaTables,
    MailTables,
    SigningTables,
    StripeTables,
    InvoicesTables,
    ImportsTables {}

export type Id = Generated<number>;
