import { type Insertable, type Kysely, sql, type Updateable } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { ProductRow, VariationRow } from './catalogue.model.js';
import type { CatalogueTables } from './catalogue.tables.js';

export type ProductInsert = Insertable<CatalogueTables['products']>;
export type ProductUpdate = Updateable<CatalogueTables['products']>;
export type VariationInsert = Insertable<CatalogueTables['product_variations']>;
export type VariationUpdate = Updateable<CatalogueTables['product_variations']>;

export interface ProductFilter {
  status?: string;
  type?: string;
  search?: string;
}

export type ProductSort = 'id' | 'name' | 'created_at' | 'price' | 'status';
const PRODUCT_SORT_COLUMNS = { created_at: 'created_at', price: 'price_minor', status: 'status' } as const;

/** Products and their variations. */
export class CatalogueRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Serialises slug claims across server processes until the transaction ends, so two requests
   * cannot both see a slug free. SQLite already runs one writer at a time.
   */
  async lockSlug(slug: string, tx: Tx): Promise<void> {
    if (this.dialect !== 'postgres') return;
    await sql`select pg_advisory_xact_lock(hashtext(${`tollgate:slug:${slug}`}))`.execute(tx);
  }

  /** Every distinct product image, icon and banner (content hashes), whatever the product's status. */
  async imagesInUse(tx?: Tx): Promise<string[]> {
    const column = (name: 'image' | 'software_icon' | 'software_banner') =>
      on(this.db, tx).selectFrom('products').select(`${name} as hash`).where(name, 'is not', null);
    // union (not union all) leaves each hash once.
    const rows = await column('image')
      .union(column('software_icon'))
      .union(column('software_banner'))
      .execute();
    return rows.map((r) => r.hash!);
  }

  findProduct(id: number, tx?: Tx): Promise<ProductRow | undefined> {
    return on(this.db, tx).selectFrom('products').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Published products whose slug, or name, is exactly `value` (a name is the item_name of the
   * updaters already in the field).
   */
  findPublishedBy(column: 'slug' | 'name', value: string, tx?: Tx): Promise<ProductRow[]> {
    return on(this.db, tx)
      .selectFrom('products')
      .selectAll()
      .where(column, '=', value)
      .where('status', '=', 'publish')
      .orderBy('id')
      .execute();
  }

  /** Every product's slug that is `base` or `base-…` (base is a-z, 0-9 and hyphens: no LIKE wildcard). */
  async slugsStartingWith(base: string, tx?: Tx): Promise<string[]> {
    const rows = await on(this.db, tx)
      .selectFrom('products')
      .select('slug')
      .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
      .execute();
    return rows.flatMap((r) => (r.slug ? [r.slug] : []));
  }

  async existingProductIds(ids: number[], tx?: Tx): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await on(this.db, tx).selectFrom('products').select('id').where('id', 'in', ids).execute();
    return rows.map((r) => r.id);
  }

  private filtered(f: ProductFilter, tx?: Tx) {
    let q = on(this.db, tx).selectFrom('products');
    if (f.status) q = q.where('status', '=', f.status);
    if (f.type) q = q.where('type', '=', f.type);
    if (f.search) {
      const pattern = `%${f.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = q.where(sql<boolean>`lower(name) like ${pattern} escape ${'\\'}`);
    }
    return q;
  }

  /**
   * A page of products in `sort` order, ties broken by id so that pages never overlap. The name
   * sorts without letter case. A store has hundreds of products, not millions, so these sorts have
   * no index of their own.
   */
  listProducts(
    f: ProductFilter,
    limit: number,
    offset: number,
    sort: { by: ProductSort; order: 'asc' | 'desc' } = { by: 'id', order: 'desc' },
    tx?: Tx,
  ): Promise<ProductRow[]> {
    let q = this.filtered(f, tx).selectAll();
    if (sort.by === 'name') q = q.orderBy(sql`lower(name)`, sort.order);
    else if (sort.by !== 'id') q = q.orderBy(PRODUCT_SORT_COLUMNS[sort.by], sort.order);
    return q.orderBy('id', sort.order).limit(limit).offset(offset).execute();
  }

  async countProducts(f: ProductFilter, tx?: Tx): Promise<number> {
    const row = await this.filtered(f, tx)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  insertProduct(values: ProductInsert, tx?: Tx): Promise<ProductRow> {
    return on(this.db, tx).insertInto('products').values(values).returningAll().executeTakeFirstOrThrow();
  }

  async updateProduct(id: number, values: ProductUpdate, tx?: Tx): Promise<void> {
    await on(this.db, tx).updateTable('products').set(values).where('id', '=', id).execute();
  }

  findVariations(productIds: number[], tx?: Tx): Promise<VariationRow[]> {
    if (productIds.length === 0) return Promise.resolve([]);
    return on(this.db, tx)
      .selectFrom('product_variations')
      .selectAll()
      .where('product_id', 'in', productIds)
      .orderBy('product_id')
      .orderBy('position')
      .orderBy('id')
      .execute();
  }

  findVariation(id: number, tx?: Tx): Promise<VariationRow | undefined> {
    return on(this.db, tx)
      .selectFrom('product_variations')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async insertVariation(values: VariationInsert, tx?: Tx): Promise<void> {
    await on(this.db, tx).insertInto('product_variations').values(values).execute();
  }

  async updateVariation(id: number, productId: number, values: VariationUpdate, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('product_variations')
      .set(values)
      .where('id', '=', id)
      .where('product_id', '=', productId)
      .execute();
  }

  async deleteVariations(productId: number, ids: number[], tx?: Tx): Promise<void> {
    if (ids.length === 0) return;
    await on(this.db, tx)
      .deleteFrom('product_variations')
      .where('product_id', '=', productId)
      .where('id', 'in', ids)
      .execute();
  }

  /** softwareStatusOf for several products in one query. */
  softwareStatusesOf(ids: readonly number[], tx?: Tx) {
    if (ids.length === 0) return Promise.resolve([]);
    return on(this.db, tx)
      .selectFrom('products')
      .select(['id', 'status', 'licensing_enabled', 'software_enabled'])
      .where('id', 'in', ids)
      .execute();
  }

  softwareStatusOf(id: number, tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('products')
      .select(['id', 'status', 'licensing_enabled', 'software_enabled'])
      .where('id', '=', id)
      .executeTakeFirst();
  }
}
