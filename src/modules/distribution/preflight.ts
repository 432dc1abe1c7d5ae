import { BoundedMap } from '../../bounded-map.js';
import type { Clock } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import { MemoryRateCounter, type RateCounter, type RateResult } from '../../http/rate-limit.js';
import type { Product } from '../catalogue/catalogue.model.js';
import { isPublicProduct, isSoftwareEnabled } from '../catalogue/catalogue.model.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { type Identity, resolveIdentity } from '../identity/identity.js';
import { type Evaluation, evaluateLicense, graceInstant } from '../licensing/entitlements.js';
import { factsOf } from '../licensing/license.view.js';
import type { LicenseLookupService } from '../licensing/license-lookup.service.js';
import type { LicenseForIdentity } from '../licensing/licensing.model.js';
import type { Settings } from '../settings/settings.schemas.js';
import type { SettingsService } from '../settings/settings.service.js';

/** A one-minute window; the answer always names 60 seconds (docs/distribution.md, '7. Limits'). */
export const RATE_WINDOW_S = 60;
/** On SQLite the issuance counters are kept in memory, in a table of this many buckets a minute (MemoryRateCounter, 1 MB). */
export const ISSUANCE_SLOTS = 65_536;
const SLUG_CACHE_MS = 1000;

/**
 * A license's own refusal (expired, revoked, …): it keeps which license it refused, out of the
 * error's enumerable fields (so never in a body or a log line), for the answer's `renewal_url`.
 */
export class LicenseRefusal extends ApiError {
  declare readonly license: LicenseForIdentity;
  constructor(code: ConstructorParameters<typeof ApiError>[0], license: LicenseForIdentity) {
    super(code);
    Object.defineProperty(this, 'license', { value: license, enumerable: false });
  }
}

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
    private readonly licenses: Pick<LicenseLookupService, 'forIdentity' | 'seen'>,
    /** In memory on SQLite, which one process serves; in the database on PostgreSQL (wiring). */
    private readonly rates: MemoryRateCounter | RateCounter,
    private readonly clock: Clock,
  ) {}

  async requireModule(): Promise<Settings> {
    return moduleOn(await this.settings.get());
  }

  /**
   * The settings while they are cached, when the module is on (else 503 `module_disabled`); null
   * when they must be read (then `requireModule`). The update check's way to skip a promise and a
   * microtask on every request but one a second (SettingsService.current).
   */
  cachedModule(): Settings | null {
    const settings = this.settings.current();
    return settings && moduleOn(settings);
  }

  /**
   * The checks after the request's own fields, as one list in the documented order
   * (docs/distribution.md, 'Which error comes first'). The rate limit comes first, but its bucket
   * is the license's or the product's, so both are looked up before any answer is given.
   * `product` is given by the external-link route (it names the product id instead of a slug).
   */
  async resolve(
    settings: Settings,
    target: { slug: string } | { product: Product | null },
    input: LicenseInput,
    ip: string,
    /**
     * A site known by its URL alone, in place of the request's site_url and installation_id: only
     * the compatibility API of the updaters already in the field passes one (src/modules/legacy),
     * never from a request's fields.
     */
    legacy?: Identity,
  ): Promise<Grant> {
    const products =
      'slug' in target ? (this.cachedSlug(target.slug) ?? (await this.readSlug(target.slug))) : [];
    const product =
      'slug' in target
        ? products.length === 1
          ? products[0]!
          : null
        : target.product?.status === 'publish'
          ? target.product
          : null;
    const isPublic = product !== null && isPublicProduct(product);
    const key = text(input.license_key) || undefined;
    // A protected product with a key: the identity the request names (or the error that answers it
    // in its turn) and the license, found with that identity's activation, else by its key alone.
    const needsLicense = product !== null && !isPublic && key !== undefined;
    const identity = needsLicense ? (legacy ?? identityOf(input)) : null;
    const resolved = identity instanceof ApiError ? null : identity;
    const license = needsLicense
      ? await this.licenses.forIdentity(key, resolved ? resolved.identity_key : null)
      : undefined;
    // A request that names an active site is heard from it (at most one write an hour per site).
    if (license && license.identity_activation_id !== null) {
      const write = this.licenses.seen(license.identity_activation_id);
      if (write) await write;
    }

    // Counted in memory (SQLite), the counts are there at once: no promise and no turn waited.
    const [bucket, perIp] = buckets(product, isPublic, license, this.rates.addressKey(ip));
    const counts =
      this.rates instanceof MemoryRateCounter
        ? this.rates.hitPair(bucket, perIp, RATE_WINDOW_S)
        : await this.rates.hitPair(bucket, perIp, RATE_WINDOW_S);
    if (isOver(settings, counts)) throw rateLimited();
    if (products.length > 1) throw new ApiError('software_slug_ambiguous');
    if (!product) throw new ApiError('product_not_found');
    if (!isSoftwareEnabled(product)) throw new ApiError('software_disabled');
    if (isPublic) return { kind: 'public', product };
    if (!settings.licensing_enabled) throw new ApiError('licensing_unavailable');
    if (!key || identity === null) throw new ApiError('license_required');
    if (identity instanceof ApiError) throw identity;
    if (!license) throw new ApiError('invalid_license');
    if (license.product_id !== product.id) throw new ApiError('license_product_mismatch');
    const evaluation = evaluateLicense(
      factsOf(license),
      graceInstant(this.clock.now(), settings.renewal_grace_days),
      license.identity_activation_id !== null,
    );
    if (evaluation.effective_status !== 'valid')
      throw new LicenseRefusal(evaluation.effective_status, license);
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
  /** The reads under way, shared by the requests that find the same slug stale meanwhile. */
  private readonly slugReads = new Map<string, Promise<Product[]>>();
  private cachedSlug(slug: string): Product[] | null {
    const hit = this.slugCache.get(slug);
    return hit && Date.now() - hit.at < SLUG_CACHE_MS ? hit.products : null;
  }

  private readSlug(slug: string): Promise<Product[]> {
    const now = Date.now();
    let reading = this.slugReads.get(slug);
    if (!reading) {
      reading = this.catalogue.findPublishedBySlug(slug).then((products) => {
        this.slugCache.set(slug, { at: now, products });
        return products;
      });
      const done = () => this.slugReads.delete(slug);
      reading.then(done, done);
      this.slugReads.set(slug, reading);
    }
    return reading;
  }

  /**
   * A token minted for a license outside the update check (the account's Download button): counted
   * in that license's bucket and the address's cap like an issuance, refused with the same code.
   */
  async limitLicense(settings: Settings, licenseId: number, ip: string): Promise<void> {
    const [bucket, perIp] = buckets(null, false, { id: licenseId }, this.rates.addressKey(ip));
    if (isOver(settings, await this.rates.hitPair(bucket, perIp, RATE_WINDOW_S))) throw rateLimited();
  }
}

/**
 * The buckets a request is counted in (docs/distribution.md, '7. Limits'): its license's, else its
 * address's for the public product (or for no product), and its address's cap.
 */
function buckets(
  product: Product | null,
  isPublic: boolean,
  license: Pick<LicenseForIdentity, 'id'> | undefined,
  /** The client address as the counter names it (its addressKey). */
  address: string,
): [string, string] {
  const bucket = license
    ? `dist:license:${license.id}`
    : product && isPublic
      ? `dist:product:${product.id}:${address}`
      : `dist:ip:${address}`;
  return [bucket, `dist:ipcap:${address}`];
}

/** Over the store's `rate_limit` in its bucket, or over the address's cap (best effort: counts are upserts, not a lock). */
function isOver(settings: Settings, [main, perIp]: [RateResult, RateResult]): boolean {
  const limit = settings.rate_limit;
  return main.count > limit || perIp.count > Math.max(10, Math.min(500, limit * 5));
}

const rateLimited = () => new ApiError('rate_limited', { data: { retry_after: RATE_WINDOW_S } });

function moduleOn(settings: Settings): Settings {
  if (!settings.software_enabled) throw new ApiError('module_disabled');
  return settings;
}

/** The site identity the request names, or the error that answers it once its turn comes. */
function identityOf(input: LicenseInput): Identity | ApiError {
  try {
    return resolveIdentity(text(input.site_url), text(input.installation_id));
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
}
