/**
 * What every import source (EDD, WooCommerce, Freemius, the generic CSV) yields, and the importer
 * writes (docs/migrating.md). A reader translates its store's rows into these records and nothing
 * else; the writer alone touches Tollgate's tables, so the rules (idempotence, the id mapping,
 * reconciliation) are written once.
 *
 * Ids are the source's own, as strings (`sourceId`), unique per kind within one source; references
 * between records use them. Money is in minor units of `currency` (ISO 4217, upper case). Times are
 * RFC 3339 in UTC. A reader that cannot translate a row yields an `ImportProblem` for it instead of
 * a record; the writer reports a record it cannot write the same way and writes nothing of it.
 */

export interface ImportCustomer {
  sourceId: string;
  email: string;
  firstName?: string;
  lastName?: string;
  /**
   * The password hash as the old store kept it: WordPress phpass (`$P$…`, `$H$…`), bcrypt
   * (`$2y$…`, `$2a$…`, `$2b$…`) or WordPress 6.8's `$wp$2y$…`. Accepted at sign-in and re-hashed
   * on first use. Absent: the customer sets a password through the forgot-password link.
   */
  passwordHash?: string;
  /** The Stripe customer (`cus_…`) whose saved cards renew this customer's subscriptions. */
  stripeCustomerId?: string;
  createdAt?: string;
}

export interface ImportVariation {
  sourceId: string;
  name: string;
  /** Minor units. */
  price: number;
  /** null: the product's; 0: unlimited. */
  activationLimit?: number | null;
  /** A subscription price option: its period. */
  billingPeriod?: 'day' | 'week' | 'month' | 'year';
  billingInterval?: number;
}

export interface ImportProduct {
  sourceId: string;
  name: string;
  slug?: string;
  /** Minor units of the store's base currency (ignored when there are variations). */
  price: number;
  /** 0: unlimited; null: the store's default. */
  activationLimit?: number | null;
  /** 'plugin' or 'theme' when the product is WordPress software; absent for other software. */
  softwareType?: 'plugin' | 'theme';
  /** The plugin's directory/main file (`my-plugin/my-plugin.php`) or the theme's slug, when known. */
  softwareSlug?: string;
  variations: ImportVariation[];
  /** Bundles: the products one license of this product grants (EDD's child licenses). */
  bundledProductSourceIds?: string[];
}

export interface ImportRelease {
  productSourceId: string;
  version: string;
  changelog?: string;
  /** A local path to the zip, when the old store's file is at hand; absent: metadata only. */
  filePath?: string;
  createdAt?: string;
}

export type ImportOrderStatus = 'pending' | 'completed' | 'refunded' | 'failed' | 'cancelled';

export interface ImportOrderItem {
  productSourceId: string;
  variationSourceId?: string;
  name: string;
  quantity: number;
  /** Minor units, tax included. */
  total: number;
  tax?: number;
}

export interface ImportOrder {
  sourceId: string;
  customerSourceId: string;
  status: ImportOrderStatus;
  currency: string;
  /** Minor units, tax included: what the customer paid. */
  total: number;
  tax?: number;
  /** The gateway as the old store named it (`stripe`, `paypal`, `manual`, …). */
  gateway?: string;
  /** The gateway's transaction id (Stripe `pi_…`/`ch_…`). */
  transactionId?: string;
  createdAt: string;
  paidAt?: string;
  items: ImportOrderItem[];
}

/** The old store's license status; `expired` is also read from `expiresAt`. */
export type ImportLicenseStatus = 'active' | 'inactive' | 'expired' | 'disabled' | 'revoked';

export interface ImportLicense {
  sourceId: string;
  /** Kept unchanged: it is in the customer's receipt and in their site's settings. */
  key: string;
  productSourceId: string;
  variationSourceId?: string;
  customerSourceId: string;
  orderSourceId?: string;
  subscriptionSourceId?: string;
  /** EDD bundles: the parent license a child license belongs to. */
  parentSourceId?: string;
  status: ImportLicenseStatus;
  /** null: lifetime. */
  expiresAt: string | null;
  /** 0: unlimited; null: the product's. */
  activationLimit: number | null;
  createdAt?: string;
}

export interface ImportActivation {
  sourceId: string;
  licenseSourceId: string;
  /** The site as the old store recorded it (a URL or a bare host). */
  url: string;
  /** EDD's `is_local`, a staging site: it does not take a seat. */
  staging?: boolean;
  activatedAt?: string;
}

export type ImportSubscriptionStatus = 'active' | 'on-hold' | 'pending-cancel' | 'cancelled' | 'expired';

export interface ImportSubscription {
  sourceId: string;
  customerSourceId: string;
  productSourceId: string;
  variationSourceId?: string;
  parentOrderSourceId?: string;
  /**
   * The orders that paid its renewals in the old store (read as orders, which are written first):
   * linked to the subscription when it is written, as its own renewals are.
   */
  renewalOrderSourceIds?: string[];
  status: ImportSubscriptionStatus;
  billingPeriod: 'day' | 'week' | 'month' | 'year';
  billingInterval: number;
  /** null once cancelled or expired. */
  nextPaymentAt: string | null;
  currency: string;
  /** Minor units charged at each renewal. */
  recurringTotal: number;
  gateway?: string;
  /** The gateway's profile id (Stripe `sub_…`), kept for the record and for support. */
  gatewayProfileId?: string;
  createdAt?: string;
}

export type ImportKind =
  | 'customers'
  | 'products'
  | 'releases'
  | 'orders'
  | 'licenses'
  | 'activations'
  | 'subscriptions';

/** A source row that is not imported, and why: reported, never half-written. */
export interface ImportProblem {
  kind: ImportKind;
  sourceId: string;
  /** A short machine-readable reason, e.g. `invalid_email`, `unknown_product`, `duplicate_key`. */
  reason: string;
  detail?: string;
}

/** A problem of a source row; `detail` (the offending value) is cut to 200 characters. */
export const problem = (
  kind: ImportKind,
  sourceId: unknown,
  reason: string,
  detail?: unknown,
): ImportProblem => ({
  kind,
  sourceId: String(sourceId),
  reason,
  ...(detail !== undefined && detail !== '' ? { detail: String(detail).slice(0, 200) } : {}),
});

type Readers = {
  [K in ImportKind]?: () =>
    | Iterable<ImportRecord<K> | ImportProblem>
    | AsyncIterable<ImportRecord<K> | ImportProblem>;
};

/** A source's `read`: the reader of `kind`, or nothing for a kind the source does not hold. */
export async function* readKind<K extends ImportKind>(
  readers: Readers,
  kind: K,
): AsyncIterable<ImportRecord<K> | ImportProblem> {
  const reader = readers[kind] as
    | (() => Iterable<ImportRecord<K> | ImportProblem> | AsyncIterable<ImportRecord<K> | ImportProblem>)
    | undefined;
  if (reader) yield* reader();
}

export type ImportRecord<K extends ImportKind> = {
  customers: ImportCustomer;
  products: ImportProduct;
  releases: ImportRelease;
  orders: ImportOrder;
  licenses: ImportLicense;
  activations: ImportActivation;
  subscriptions: ImportSubscription;
}[K];

/**
 * One old store, read kind by kind in this order (a record refers only to kinds read before it;
 * subscriptions come before licenses' writing needs them, so readers yield subscriptions before
 * licenses): customers, products, releases, orders, subscriptions, licenses, activations.
 * Each method streams, so 100,000 licenses never sit in memory at once.
 */
export interface ImportSource {
  /** `edd`, `woocommerce`, `freemius` or `csv`. */
  readonly name: string;
  read<K extends ImportKind>(kind: K): AsyncIterable<ImportRecord<K> | ImportProblem>;
  /** What the source says it holds, for the reconciliation at the end (counts, revenue per currency). */
  totals(): Promise<ImportTotals>;
  close(): Promise<void>;
}

export interface ImportTotals {
  customers: number;
  licenses: number;
  activations: number;
  orders: number;
  subscriptions: number;
  /** Paid orders' totals, minor units per currency. */
  revenue: Record<string, number>;
}

/** The order records are written in: each kind after those it refers to. */
export const IMPORT_ORDER: readonly ImportKind[] = [
  'customers',
  'products',
  'releases',
  'orders',
  'subscriptions',
  'licenses',
  'activations',
];

export function isProblem(x: unknown): x is ImportProblem {
  return typeof x === 'object' && x !== null && 'reason' in x && 'kind' in x;
}
