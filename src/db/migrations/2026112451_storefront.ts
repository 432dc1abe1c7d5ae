import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import { ts } from './helpers.js';

/**
 * The storefront (docs/storefront.md): a product's texts and image, the images themselves, a slug
 * for every product (its page is /products/<slug>), and the index the catalogue page reads.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema.alterTable('products').addColumn('short_description', 'text').execute();
  await db.schema.alterTable('products').addColumn('description', 'text').execute();
  // The image's content hash; its files are media rows named <hash>-<width>.webp.
  await db.schema.alterTable('products').addColumn('image', 'varchar(64)').execute();
  // The catalogue page lists published products newest first, a page at a time.
  await db.schema.createIndex('products_status_id').on('products').columns(['status', 'id']).execute();

  // Image files are few and small (two WebP sizes per image), and a row commits with the product's
  // change or not at all: no half-written file for a crash to leave behind.
  await db.schema
    .createTable('media')
    .addColumn('name', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('content_type', 'varchar(50)', (c) => c.notNull())
    .addColumn('bytes', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();

  // Every product gets a slug from its name (unique among all products) where it has none.
  const rows: { id: number; name: string; slug: string | null }[] = await db
    .selectFrom('products')
    .select(['id', 'name', 'slug'])
    .orderBy('id')
    .execute();
  const taken = new Set(rows.flatMap((r) => (r.slug ? [r.slug] : [])));
  for (const row of rows) {
    if (row.slug) continue;
    const base = slugBase(row.name);
    let slug = base;
    for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
    taken.add(slug);
    await db.updateTable('products').set({ slug }).where('id', '=', row.id).execute();
  }
}

/** A frozen copy of the catalogue's slug rule (src/modules/catalogue/slug.ts) as of this migration. */
function slugBase(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/g, '');
  return s || 'product';
}
