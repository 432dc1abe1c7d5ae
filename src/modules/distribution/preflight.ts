import { BoundedMap } from '../../bounded-map.js';
import type { Clock } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import type { RateCounter } from '../../http/rate-limit.js';
import { sha256 } from '../../random.js';
import type { Product } from '../catalogue/catalogue.model.js';
import { isPublicProduct, isSoftwareEnabled } from '../catalogue/catalogue.model.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { type Identity, resolveIdentity } from '../identity/identity.js';
import { type Evaluation, evaluateLicense } from '../licensing/entitlements.js';
import { factsOf } from '../licensing/license.view.js';
import type { LicenseLookupService } from '../licensing/license-lookup.service.js';
import type { LicenseForIdentity } from '../licensing/licensing.model.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';

/** A one-minute window; the answer always names 60 seconds (docs/distribution.md, '7. Limits'). */
export const RATE_WINDOW_S = 60;
/** On SQLite the issuance counters are kept in memory for this many buckets (RateCounter). */
export const ISSUANCE_BUCKETS = 20_000;
const SLUG_CACHE_MS = 1000;

/** Who may receive packages: a public product, or a license bound to an active identity. */
export type Grant =
  | { kind: 'public'; product: Product }
  | {
      kind: 'protected';
      product: Product;
      license: LicenseForIdentity;
      identity: Identity;
      evaluation: Evaluation;
      activationId: number;
      activationRevision: number;
    };

export interface LicenseInput {
  license_key?: unknown;
  site_url?: unknown;
  installation_id?: unknown;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The shared half of the checks of package, check and external-link: rate limiting, product
 * resolution and the license and identity checks, in the documented order (docs/distribution.md,
 * 'Which error comes first').
 */
export class Preflight {
  constructor(
    private readonly catalogue: CatalogueService,
    private readonly settings: SettingsService,
    private readonly licenses: Pick<LicenseLookupService, 'forIdentity'>,
    private readonly rates: RateCounter,
    private readonly clock: Clock,
  ) {}

  async requireModule(): Promise<Settings> {
    const settings = await this.settings.get();
    if (!settings.software_enabled) throw new ApiError('module_disabled');
    return settings;
  }

  /**
   * Rate limit first (its bucket needs the product and the license, looked up without answering
   * yet), then product resolution and the license checks. `product` is given by the
   * external-link route (it names the product id instead of a slug).
   */
  async resolve(
    settings: Settings,
    target: { slug: string } | { product: Product | null },
    input: LicenseInput,
    ip: string,
  ): Promise<Grant> {
    const products = 'slug' in target ? await this.productsBySlug(target.slug) : [];
    const single =
      'slug' in target
        ? products.length === 1
          ? products[0]!
          : null
        : target.product?.status === 'publish'
          ? target.product
          : null;
    const key = text(input.license_key) || undefined;
    let identity: Identity | null = null;
    // Answered only after the product and license-required checks (the documented order), not
    // recomputed.
    let identityError: unknown = null;
    let license: LicenseForIdentity | undefined;
    const isPublic = single ? isPublicProduct(single) : false;
    if (single && !isPublic && key) {
      try {
        identity = resolveIdentity(text(input.site_url), text(input.installation_id));
      } catch (e) {
        identityError = e;
      }
      license = await this.licenses.forIdentity(key, identity ? identity.identity_key : null);
    }
    await this.limit(settings, single, isPublic, license, ip);

    if ('slug' in target) {
      if (products.length === 0) throw new ApiError('product_not_found');
      if (products.length > 1) throw new ApiError('software_slug_ambiguous');
    } else if (!single) throw new ApiError('product_not_found');
    const product = single!;
    if (!isSoftwareEnabled(product)) throw new ApiError('software_disabled');
    if (isPublic) return { kind: 'public', product };
    if (!settings.licensing_enabled) throw new ApiError('licensing_unavailable');
    if (!key) throw new ApiError('license_required');
    if (!identity) throw identityError;
    if (!license) throw new ApiError('invalid_license');
    if (license.product_id !== product.id) throw new ApiError('license_product_mismatch');
    const evaluation = evaluateLicense(
      factsOf(license),
      this.clock.now(),
      license.identity_activation_id !== null,
    );
    if (evaluation.effective_status !== 'valid') throw new ApiError(evaluation.effective_status);
    return {
      kind: 'protected',
      product,
      license,
      identity,
      evaluation,
      activationId: license.identity_activation_id!,
      activationRevision: license.identity_activation_revision!,
    };
  }

  /**
   * Published products by slug, remembered for a second (as the settings are): issuance sees a
   * catalogue change within a second; redemption always re-reads the product in its transaction.
   */
  private readonly slugCache = new BoundedMap<string, { at: number; products: Product[] }>(1000);
  private async productsBySlug(slug: string): Promise<Product[]> {
    const now = Date.now();
    const hit = this.slugCache.get(slug);
    if (hit && now - hit.at < SLUG_CACHE_MS) return hit.products;
    const products = await this.catalogue.findPublishedBySlug(slug);
    this.slugCache.set(slug, { at: now, products });
    return products;
  }

  /**
   * The buckets of docs/distribution.md, '7. Limits'; best effort (counts are upserts, not a lock).
   */
  private async limit(
    settings: Settings,
    product: Product | null,
    isPublic: boolean,
    license: Pick<LicenseForIdentity, 'id'> | undefined,
    ip: string,
  ): Promise<void> {
    const limit = settings.rate_limit;
    const cap = Math.max(10, Math.min(500, limit * 5));
    const ipHash = sha256(ip).slice(0, 32);
    const bucket = license
      ? `dist:license:${license.id}`
      : product && isPublic
        ? `dist:product:${product.id}:${ipHash}`
        : `dist:ip:${ipHash}`;
    const [main, perIp] = await this.rates.hitPair(bucket, `dist:ipcap:${ipHash}`, RATE_WINDOW_S);
    if (main.count > limit || perIp.count > cap) {
      throw new ApiError('rate_limited', { data: { retry_after: RATE_WINDOW_S } });
    }
  }
}
