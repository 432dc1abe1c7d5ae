import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { type Actor, diff } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import {
  checkShape,
  checkVariationIds,
  productColumns,
  storedSubscription,
  variationColumns,
} from './catalogue.input.js';
import {
  isVariableType,
  type Product,
  type ProductRow,
  type SoftwareConfig,
  type SoftwareImageKind,
  toProduct,
  toSoftwareConfig,
  toVariation,
  type Variation,
  validateFilenameTemplate,
} from './catalogue.model.js';
import type { CatalogueRepository, ProductInsert } from './catalogue.repository.js';
import type {
  ProductCreateBody,
  ProductListQuery,
  ProductPatchBody,
  SoftwareConfigBody,
} from './catalogue.schemas.js';
import type { CouponsService } from './coupons.service.js';
import type { GatewaysService } from './gateways.service.js';
import { currencyDecimals } from './money.js';
import type { ShippingService } from './shipping.service.js';
import { slugBase } from './slug.js';
import type { TaxService } from './tax.service.js';

export interface CatalogueParts {
  coupons: CouponsService;
  taxRates: TaxService;
  shipping: ShippingService;
  gateways: GatewaysService;
}

/**
 * Products, variations and their software configuration; the one door other modules (licensing,
 * releases, cart) use to read the catalogue. Coupons, tax rates, shipping zones and gateways hang
 * off it as `parts` so the application wires one service.
 */
export class CatalogueService {
  readonly coupons: CouponsService;
  readonly taxRates: TaxService;
  readonly shipping: ShippingService;
  readonly gateways: GatewaysService;

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: CatalogueRepository,
    private readonly clock: Clock,
    private readonly settings: SettingsService,
    private readonly audit: AuditService,
    parts: CatalogueParts,
  ) {
    this.coupons = parts.coupons;
    this.taxRates = parts.taxRates;
    this.shipping = parts.shipping;
    this.gateways = parts.gateways;
  }

  // ---- reads for other modules (inside their transaction when they hand it on) ----

  async getProduct(id: number, tx?: Tx): Promise<Product | null> {
    const row = await this.repo.findProduct(id, tx);
    return row ? (await this.hydrate([row], tx))[0]! : null;
  }

  async getVariation(id: number): Promise<Variation | null> {
    const row = await this.repo.findVariation(id);
    return row ? toVariation(row, await this.baseDecimals()) : null;
  }

  /** Every published product using the slug; more than one is the caller's `software_slug_ambiguous`. */
  async findPublishedBySlug(slug: string, tx?: Tx): Promise<Product[]> {
    return this.hydrate(await this.repo.findPublishedBy('slug', slug, tx), tx);
  }

  /**
   * The published product named exactly `name`, the oldest when several share it: how the
   * updaters already in the field name a product when they send no id (src/modules/legacy).
   */
  async findPublishedByName(name: string): Promise<Product | null> {
    const rows = await this.repo.findPublishedBy('name', name);
    return rows.length === 0 ? null : (await this.hydrate([rows[0]!]))[0]!;
  }

  /**
   * The storefront's product at /products/<slug>: the published product with that slug, the
   * oldest when several share it (a state the software config reports as software_slug_ambiguous).
   */
  async findStorefrontProduct(slug: string): Promise<Product | null> {
    const rows = await this.repo.findPublishedBy('slug', slug);
    return rows.length === 0 ? null : (await this.hydrate([rows[0]!]))[0]!;
  }

  /** A page of the published products, newest first, with their variations in one query. */
  listPublished(page: number, perPage: number): Promise<{ items: Product[]; total: number }> {
    return this.listProducts({ page, per_page: perPage, status: 'publish', sort: 'id', order: 'desc' });
  }

  /** The image hashes products use (the storefront keeps their files, deletes the others). */
  imagesInUse(): Promise<string[]> {
    return this.repo.imagesInUse();
  }

  /** Sets or clears the product's image (a content hash of stored media, docs/storefront.md). */
  async setImage(id: number, image: string | null, actor?: Actor): Promise<Product> {
    const now = iso(this.clock.now());
    await withTransaction(this.database, async (tx) => {
      const row = await this.repo.findProduct(id, tx);
      if (!row) throw new ApiError('product_not_found');
      await this.repo.updateProduct(id, { image, updated_at: now }, tx);
      if (actor && row.image !== image) {
        await this.audit.record(
          actor,
          {
            entity_type: 'product',
            entity_id: id,
            action: 'update',
            changes: { image: { before: row.image, after: image } },
          },
          tx,
        );
      }
    });
    return this.requireProduct(id);
  }

  /**
   * Sets or removes (null) the product's icon or banner, a hash the media service stored
   * (docs/catalogue.md, 'Icons and banners'); recorded as a change of the software configuration.
   */
  async setSoftwareImage(
    productId: number,
    kind: SoftwareImageKind,
    hash: string | null,
    actor?: Actor,
  ): Promise<SoftwareConfig> {
    const column = kind === 'icon' ? 'software_icon' : 'software_banner';
    const now = iso(this.clock.now());
    await withTransaction(this.database, async (tx) => {
      const row = await this.repo.findProduct(productId, tx);
      if (!row) throw new ApiError('product_not_found');
      await this.repo.updateProduct(productId, { [column]: hash, updated_at: now }, tx);
      if (actor && row[column] !== hash) {
        const entry = {
          entity_type: 'product' as const,
          entity_id: productId,
          action: 'update_software',
          changes: { [kind]: { before: row[column], after: hash } },
        };
        await this.audit.record(actor, entry, tx);
      }
    });
    return this.getSoftwareConfig(productId);
  }

  // ---- administration ----

  async requireProduct(id: number): Promise<Product> {
    const product = await this.getProduct(id);
    if (!product) throw new ApiError('product_not_found');
    return product;
  }

  async listProducts(q: ProductListQuery): Promise<{ items: Product[]; total: number }> {
    const filter = { status: q.status, type: q.type, search: q.search };
    const sort = q.sort ?? 'id';
    const [rows, total] = await Promise.all([
      this.repo.listProducts(filter, q.per_page, (q.page - 1) * q.per_page, {
        by: sort,
        order: q.order ?? (sort === 'id' || sort === 'created_at' ? 'desc' : 'asc'),
      }),
      this.repo.countProducts(filter),
    ]);
    return { items: await this.hydrate(rows), total };
  }

  /** `actor`: the administrator who asked, recorded with the change (docs/admin.md, 'Audit trail'). */
  async createProduct(input: ProductCreateBody, actor?: Actor): Promise<Product> {
    const decimals = await this.baseDecimals();
    const type = input.type ?? 'simple';
    const variations = input.variations ?? [];
    checkShape(type, variations.length, input.subscription ?? null);
    // A variable product's own price is optional: its variations carry the prices.
    if (input.price === undefined && !isVariableType(type)) {
      throw new ApiError('rest_missing_param', { data: { params: { price: 'required' } } });
    }
    const columns = productColumns(
      { status: 'publish', virtual: true, price: '0', ...input, type },
      decimals,
    );
    const rows = variations.map((v, i) => variationColumns(v, decimals, `variations.${i}`));
    const now = iso(this.clock.now());
    const id = await withTransaction(this.database, async (tx) => {
      // The storefront's address of the product, /products/<slug> (docs/storefront.md).
      columns.slug = await this.freeSlug(slugBase(columns.name ?? ''), tx);
      // The defaults above guarantee every NOT NULL column is present.
      const product = await this.repo.insertProduct(
        { ...(columns as ProductInsert), created_at: now, updated_at: now },
        tx,
      );
      for (const [i, v] of rows.entries()) {
        await this.repo.insertVariation(
          { ...v, product_id: product.id, position: i, created_at: now, updated_at: now },
          tx,
        );
      }
      if (actor) {
        const changes = diff({}, columns as Record<string, unknown>);
        if (rows.length > 0) changes.variations = { before: null, after: rows.length };
        await this.audit.record(
          actor,
          { entity_type: 'product', entity_id: product.id, action: 'create', changes },
          tx,
        );
      }
      return product.id;
    });
    return this.requireProduct(id);
  }

  /**
   * Changes the given fields. `variations`, when present, is the complete new list: an entry with
   * `id` replaces that variation (keeping its id), one without is added, and any variation left
   * out is removed. Everything is checked before anything is written.
   */
  async updateProduct(id: number, patch: ProductPatchBody, actor?: Actor): Promise<Product> {
    const decimals = await this.baseDecimals();
    const columns = productColumns(patch, decimals);
    const incoming = patch.variations?.map((v, i) => ({
      id: v.id,
      values: variationColumns(v, decimals, `variations.${i}`),
    }));
    const now = iso(this.clock.now());
    await withTransaction(this.database, async (tx) => {
      const row = await this.repo.findProduct(id, tx);
      if (!row) throw new ApiError('product_not_found');
      const existing = (await this.repo.findVariations([id], tx)).map((v) => v.id);
      const type = patch.type ?? row.type;
      const subscription = patch.subscription === undefined ? storedSubscription(row) : patch.subscription;
      checkShape(type, incoming ? incoming.length : existing.length, subscription);
      if (incoming) checkVariationIds(incoming, existing);
      if (patch.status === 'publish' && row.status !== 'publish' && row.slug) {
        await this.assertSlugFree(row.slug, id, tx);
      }
      await this.repo.updateProduct(id, { ...columns, updated_at: now }, tx);
      if (actor) {
        const changes = diff(row as unknown as Record<string, unknown>, columns as Record<string, unknown>);
        // The variation list is recorded by its ids (a new one as null): their fields are in the product's answer.
        if (incoming) changes.variations = { before: existing, after: incoming.map((v) => v.id ?? null) };
        if (Object.keys(changes).length > 0) {
          await this.audit.record(
            actor,
            { entity_type: 'product', entity_id: id, action: 'update', changes },
            tx,
          );
        }
      }
      if (!incoming) return;
      const kept = new Set(incoming.map((v) => v.id).filter((v) => v !== undefined));
      await this.repo.deleteVariations(
        id,
        existing.filter((v) => !kept.has(v)),
        tx,
      );
      for (const [i, v] of incoming.entries()) {
        if (v.id === undefined) {
          await this.repo.insertVariation(
            { ...v.values, product_id: id, position: i, created_at: now, updated_at: now },
            tx,
          );
        } else {
          await this.repo.updateVariation(v.id, id, { ...v.values, position: i, updated_at: now }, tx);
        }
      }
    });
    return this.requireProduct(id);
  }

  async getSoftwareConfig(productId: number, tx?: Tx): Promise<SoftwareConfig> {
    const row = await this.repo.findProduct(productId, tx);
    if (!row) throw new ApiError('product_not_found');
    return toSoftwareConfig(row);
  }

  async updateSoftwareConfig(
    productId: number,
    body: SoftwareConfigBody,
    actor?: Actor,
  ): Promise<SoftwareConfig> {
    if (body.filename_template !== undefined) validateFilenameTemplate(body.filename_template);
    const now = iso(this.clock.now());
    await withTransaction(this.database, async (tx) => {
      const row = await this.repo.findProduct(productId, tx);
      if (!row) throw new ApiError('product_not_found');
      if (body.slug !== undefined && body.slug !== row.slug && row.status === 'publish') {
        await this.assertSlugFree(body.slug, productId, tx);
      }
      const { legacy_api, upgrade_paths, ...rest } = body;
      if (upgrade_paths !== undefined) await this.assertUpgradePaths(productId, upgrade_paths, tx);
      const values = {
        ...rest,
        ...(legacy_api === undefined ? {} : { legacy_api: legacy_api ? 1 : 0 }),
        ...(upgrade_paths === undefined ? {} : { upgrade_paths: JSON.stringify(upgrade_paths) }),
      };
      await this.repo.updateProduct(productId, { ...values, updated_at: now }, tx);
      const changes = diff(row as unknown as Record<string, unknown>, values as Record<string, unknown>);
      if (actor && Object.keys(changes).length > 0) {
        const entry = {
          entity_type: 'product' as const,
          entity_id: productId,
          action: 'update_software',
          changes,
        };
        await this.audit.record(actor, entry, tx);
      }
    });
    return this.getSoftwareConfig(productId);
  }

  /** An upgrade path names other products that exist (docs/selling.md, 'Upgrades and downgrades'). */
  private async assertUpgradePaths(productId: number, paths: number[], tx: Tx): Promise<void> {
    for (const id of paths) {
      if (id === productId || !(await this.repo.findProduct(id, tx)))
        throw new ApiError('invalid_upgrade_target');
    }
  }

  private async assertSlugFree(slug: string, productId: number, tx: Tx): Promise<void> {
    await this.repo.lockSlug(slug, tx);
    const others = (await this.repo.findPublishedBy('slug', slug, tx)).filter((p) => p.id !== productId);
    if (others.length > 0) throw new ApiError('slug_taken', { data: { slug } });
  }

  /** `base`, else `base-2`, `base-3`…: the first slug no product uses (a new product's page address). */
  private async freeSlug(base: string, tx: Tx): Promise<string> {
    await this.repo.lockSlug(base, tx);
    const taken = new Set(await this.repo.slugsStartingWith(base, tx));
    let slug = base;
    for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
    return slug;
  }

  private async baseDecimals(tx?: Tx): Promise<number> {
    const s = await this.settings.get(tx);
    return currencyDecimals(s.base_currency, s);
  }

  private async hydrate(rows: ProductRow[], tx?: Tx): Promise<Product[]> {
    const [decimals, variations] = await Promise.all([
      this.baseDecimals(tx),
      this.repo.findVariations(
        rows.map((r) => r.id),
        tx,
      ),
    ]);
    return rows.map((r) =>
      toProduct(
        r,
        variations.filter((v) => v.product_id === r.id),
        decimals,
      ),
    );
  }

  /**
   * A product's publication and its licensing and software switches, read in the caller's
   * transaction (distribution's download redemption re-checks them before the claim).
   */
  softwareStatus(productId: number, tx?: Tx) {
    return this.repo.softwareStatusOf(productId, tx);
  }

  /** softwareStatus of several products in one query (the account's Downloads page). */
  softwareStatuses(productIds: readonly number[], tx?: Tx) {
    return this.repo.softwareStatusesOf(productIds, tx);
  }
}
