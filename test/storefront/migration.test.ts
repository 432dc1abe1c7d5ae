import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * Migration 2026112451_storefront on a store that already has products without slugs: a database
 * migrated only up to the migration before it gets rows as an older store has them, then every
 * later migration runs over them, on the database under test.
 */
let d: TestDatabase;
beforeAll(async () => {
  // The schema as it was just before the storefront migration; the test then migrates to the latest.
  d = await freshDatabase({ upTo: '2026112450_mail' });
});
afterAll(async () => d.drop());

describe('migration 2026112451_storefront', () => {
  it('gives every product without a slug one from its name, unique, and keeps existing slugs', async () => {
    const db = d.database.db;

    const now = new Date().toISOString();
    const row = (name: string, slug: string | null) => ({
      name,
      slug,
      status: 'publish',
      type: 'simple',
      price_minor: 100,
      virtual: 1,
      created_at: now,
      updated_at: now,
    });
    // biome-ignore lint/suspicious/noExplicitAny: the columns of the schema before the migration
    const old = db as any;
    await old
      .insertInto('products')
      .values([
        row('Site Kit', 'site-kit'),
        row('Site Kit', null),
        row('Site  Kit!', null),
        row('Café Déjà Vu', null),
        row('???', null),
        row(`${'Long name '.repeat(20)}`, null),
      ])
      .execute();

    await migrateToLatest(db, d.database.dialect);

    const slugs = (await db.selectFrom('products').select(['name', 'slug']).orderBy('id').execute()).map(
      (r) => r.slug,
    );
    expect(slugs).toEqual([
      'site-kit',
      'site-kit-2',
      'site-kit-3',
      'cafe-deja-vu',
      'product',
      'long-name-long-name-long-name-long-name-long-name-long-name-long-name-long-name',
    ]);
    for (const s of slugs) expect(s).toMatch(/^[a-z0-9-]{1,100}$/);
    const columns = await db
      .selectFrom('products')
      .select(['short_description', 'description', 'image'])
      .execute();
    expect(columns.every((c) => c.short_description === null && c.image === null)).toBe(true);
  });
});
