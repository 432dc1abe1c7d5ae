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

/** Products and their variations. */
export class CatalogueRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: Dialect,
  ) {}

  /** Runs `fn` in one transaction with a repository bound to it. */
  transaction<T>(fn: (repo: CatalogueRepository) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new CatalogueRepository(trx, this.dialect)));
  }

  /**
   * Serialises slug claims across server processes until the transaction ends, so two requests
   * cannot both see a slug free. SQLite already runs one writer at a time.
   */
  async lockSlug(slug: string): Promise<void> {
    if (this.dialect !== 'postgres') return;
    await sql`select pg_advisory_xact_lock(hashtext(${`tollgate:slug:${slug}`}))`.execute(this.db);
  }

  findProduct(id: number): Promise<ProductRow | undefined> {
    return this.db.selectFrom('products').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findPublishedBySlug(slug: string): Promise<ProductRow[]> {
    return this.db
      .selectFrom('products')
      .selectAll()
      .where('slug', '=', slug)
      .where('status', '=', 'publish')
      .orderBy('id')
      .execute();
  }

  async existingProductIds(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom('products').select('id').where('id', 'in', ids).execute();
    return rows.map((r) => r.id);
  }

  private filtered(f: ProductFilter) {
    let q = this.db.selectFrom('products');
    if (f.status) q = q.where('status', '=', f.status);
    if (f.type) q = q.where('type', '=', f.type);
    if (f.search) {
      const pattern = `%${f.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = q.where(sql<boolean>`lower(name) like ${pattern} escape ${'\\'}`);
    }
    return q;
  }

  listProducts(f: ProductFilter, limit: number, offset: number): Promise<ProductRow[]> {
    return this.filtered(f).selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute();
  }

  async countProducts(f: ProductFilter): Promise<number> {
    const row = await this.filtered(f)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  insertProduct(values: ProductInsert): Promise<ProductRow> {
    return this.db.insertInto('products').values(values).returningAll().executeTakeFirstOrThrow();
  }

  async updateProduct(id: number, values: ProductUpdate): Promise<void> {
    await this.db.updateTable('products').set(values).where('id', '=', id).execute();
  }

  findVariations(productIds: number[]): Promise<VariationRow[]> {
    if (productIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('product_variations')
      .selectAll()
      .where('product_id', 'in', productIds)
      .orderBy('product_id')
      .orderBy('position')
      .orderBy('id')
      .execute();
  }

  findVariation(id: number): Promise<VariationRow | undefined> {
    return this.db.selectFrom('product_variations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async insertVariation(values: VariationInsert): Promise<void> {
    await this.db.insertInto('product_variations').values(values).execute();
  }

  async updateVariation(id: number, productId: number, values: VariationUpdate): Promise<void> {
    await this.db
      .updateTable('product_variations')
      .set(values)
      .where('id', '=', id)
      .where('product_id', '=', productId)
      .execute();
  }

  async deleteVariations(productId: number, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .deleteFrom('product_variations')
      .where('product_id', '=', productId)
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
