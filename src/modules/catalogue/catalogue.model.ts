import type { Selectable } from 'kysely';
import { ApiError } from '../../http/errors.js';
import type { CatalogueTables } from './catalogue.tables.js';
import { fromMinor } from './money.js';

/** The typed product other modules read through CatalogueService, and the pure rules about it. */

export type ProductType = 'simple' | 'variable' | 'subscription' | 'variable-subscription';
export type StorageDriver = '' | 'local' | 'local_encrypted' | 'external';

export interface EntitlementPolicy {
  usage: { mode: 'lifetime' | 'days' | 'subscription'; days?: number };
  updates: { mode: 'license' | 'days'; days?: number };
  support: { mode: 'unspecified' | 'days'; days?: number };
  historical_downloads: boolean;
  channels?: string[];
}

export interface Variation {
  id: number;
  product_id: number;
  name: string;
  /** Decimal string in the base currency, e.g. "49.00". */
  price: string;
  price_minor: number;
  attributes: Record<string, string>;
  /** null inherits the parent product's limit; 0 is unlimited. */
  activation_limit: number | null;
  stock_quantity: number | null;
  entitlement_policy: EntitlementPolicy | null;
}

/** A product; the trial, legacy_api and upgrade paths of its software configuration too. */
export interface Product
  extends Pick<SoftwareConfig, 'trial_days' | 'trial_sites' | 'legacy_api' | 'upgrade_paths'> {
  id: number;
  name: string;
  status: 'publish' | 'draft';
  type: ProductType;
  price: string;
  price_minor: number;
  virtual: boolean;
  stock_quantity: number | null;
  /** Stored as given; only the exact string "no" makes the product public (docs/catalogue.md). */
  licensing_enabled: string | null;
  /** null follows the global default; 0 is unlimited. */
  activation_limit: number | null;
  activation_mode: 'simple' | 'oauth' | null;
  subscription: { period: 'day' | 'week' | 'month' | 'year'; interval: number } | null;
  entitlement_policy: EntitlementPolicy | null;
  variations: Variation[];
  slug: string | null;
  /** The effective template: the stored one, else DEFAULT_FILENAME_TEMPLATE. */
  filename_template: string;
  /** "" = automatic. */
  storage_driver: StorageDriver;
  /**
   * "yes" only when explicitly enabled (docs/catalogue.md, 'Software configuration'); anything else
   * reads as "no".
   */
  software_enabled: 'yes' | 'no';
  /** Plain text, one line, shown in the catalogue (docs/storefront.md). */
  short_description: string;
  /** Plain text; blank lines separate paragraphs on the product's page. */
  description: string;
  /** The image's content hash: /media/<image>-400.webp and -1200.webp; null without one. */
  image: string | null;
  /** WordPress's icon and banner (docs/catalogue.md, 'Icons and banners'): content hashes, or null. */
  icon: string | null;
  banner: string | null;
  created_at: string;
  updated_at: string;
}

export interface SoftwareConfig {
  product_id: number;
  slug: string | null;
  filename_template: string;
  storage_driver: StorageDriver;
  licensing_enabled: string | null;
  software_enabled: 'yes' | 'no';
  /** The icon's content hash (SOFTWARE_IMAGES.icon gives its files), or null. */
  icon: string | null;
  /** The banner's content hash (SOFTWARE_IMAGES.banner gives its files), or null. */
  banner: string | null;
  /** The trial offered (docs/selling.md, 'Trials'): its length in days, null when none. */
  trial_days: number | null;
  /** How many sites a trial license activates. */
  trial_sites: number;
  /** The legacy updater API answers for this product (docs/migrating.md, 'Sites already in the field'). */
  legacy_api: boolean;
  /** The products a license of this one may move to (docs/selling.md, 'Upgrades and downgrades'). */
  upgrade_paths: number[];
}

export type ProductRow = Selectable<CatalogueTables['products']>;
export type VariationRow = Selectable<CatalogueTables['product_variations']>;

export const DEFAULT_FILENAME_TEMPLATE = '{slug}-{version}.zip';

export const isVariableType = (type: string): boolean =>
  type === 'variable' || type === 'variable-subscription';
export const isSubscriptionType = (type: string): boolean =>
  type === 'subscription' || type === 'variable-subscription';

/** Fail-closed classification: only "no" is public; missing or any other value means protected. */
export const isPublicProduct = (p: Pick<Product, 'licensing_enabled'>): boolean =>
  p.licensing_enabled === 'no';

export const isSoftwareEnabled = (p: Pick<Product, 'software_enabled'>): boolean =>
  p.software_enabled === 'yes';

/**
 * The variation's own limit, else the product's, else the global default; 0 = unlimited
 * (docs/licensing.md, '2.1 Activation limit').
 */
export function resolveActivationLimit(
  product: Pick<Product, 'activation_limit'>,
  variation: Pick<Variation, 'activation_limit'> | null,
  globalDefault: number,
): number {
  return variation?.activation_limit ?? product.activation_limit ?? globalDefault;
}

/**
 * A filename template renders release file names, so it may only produce a plain file name:
 * `{slug}` and `{version}` placeholders, literal `[A-Za-z0-9._-]`, `{version}` present, `.zip`
 * at the end, no path separators, no `..`, no leading dot.
 */
export function validateFilenameTemplate(template: string): void {
  const literal = template.replaceAll('{slug}', '').replaceAll('{version}', '');
  const ok =
    template.includes('{version}') &&
    template.endsWith('.zip') &&
    template.length <= 200 &&
    !template.startsWith('.') &&
    !template.includes('..') &&
    /^[A-Za-z0-9._-]*$/.test(literal);
  if (!ok) throw new ApiError('invalid_filename_template');
}

const parsePolicy = (text: string | null): EntitlementPolicy | null =>
  text === null ? null : (JSON.parse(text) as EntitlementPolicy);

export function toVariation(row: VariationRow, decimals: number): Variation {
  return {
    id: row.id,
    product_id: row.product_id,
    name: row.name,
    price: fromMinor(Number(row.price_minor), decimals),
    price_minor: Number(row.price_minor),
    attributes: JSON.parse(row.attributes) as Record<string, string>,
    activation_limit: row.activation_limit,
    stock_quantity: row.stock_quantity,
    entitlement_policy: parsePolicy(row.entitlement_policy),
  };
}

export function toProduct(row: ProductRow, variations: VariationRow[], decimals: number): Product {
  const { product_id: _, ...software } = toSoftwareConfig(row);
  return {
    id: row.id,
    name: row.name,
    status: row.status as Product['status'],
    type: row.type as ProductType,
    price: fromMinor(Number(row.price_minor), decimals),
    price_minor: Number(row.price_minor),
    virtual: row.virtual === 1,
    stock_quantity: row.stock_quantity,
    activation_limit: row.activation_limit,
    activation_mode: row.activation_mode as Product['activation_mode'],
    subscription:
      row.subscription_period && row.subscription_interval !== null
        ? {
            period: row.subscription_period as NonNullable<Product['subscription']>['period'],
            interval: row.subscription_interval,
          }
        : null,
    entitlement_policy: parsePolicy(row.entitlement_policy),
    variations: variations.map((v) => toVariation(v, decimals)),
    ...software,
    short_description: row.short_description ?? '',
    description: row.description ?? '',
    image: row.image,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toSoftwareConfig(row: ProductRow): SoftwareConfig {
  return {
    product_id: row.id,
    slug: row.slug,
    filename_template: row.filename_template ?? DEFAULT_FILENAME_TEMPLATE,
    storage_driver: (row.storage_driver ?? '') as StorageDriver,
    licensing_enabled: row.licensing_enabled,
    software_enabled: row.software_enabled === 'yes' ? 'yes' : 'no',
    icon: row.software_icon,
    banner: row.software_banner,
    trial_days: row.trial_days,
    trial_sites: row.trial_sites ?? 1,
    legacy_api: row.legacy_api === 1,
    upgrade_paths: row.upgrade_paths === null ? [] : (JSON.parse(row.upgrade_paths) as number[]),
  };
}

/**
 * The sizes WordPress shows a plugin's icon and banner at (docs/catalogue.md, 'Icons and
 * banners'): the key is the one of WordPress's `icons` and `banners` maps, the suffix names the
 * media file `<hash>-<suffix>.webp`. Each is cut to fill its box exactly (cover), as WordPress
 * draws them at a fixed size.
 */
export const SOFTWARE_IMAGES = {
  icon: [
    { key: '1x', suffix: 'icon-128', width: 128, height: 128 },
    { key: '2x', suffix: 'icon-256', width: 256, height: 256 },
  ],
  banner: [
    { key: 'low', suffix: 'banner-772x250', width: 772, height: 250 },
    { key: 'high', suffix: 'banner-1544x500', width: 1544, height: 500 },
  ],
} as const;
export type SoftwareImageKind = keyof typeof SOFTWARE_IMAGES;

/** `{key: absolute URL}` of an icon or banner on the store's public origin; `{}` without one. */
export function softwareImageUrls(
  origin: string,
  kind: SoftwareImageKind,
  hash: string | null,
): Record<string, string> {
  const urls: Record<string, string> = {};
  if (hash === null) return urls;
  for (const size of SOFTWARE_IMAGES[kind]) urls[size.key] = `${origin}/media/${hash}-${size.suffix}.webp`;
  return urls;
}
