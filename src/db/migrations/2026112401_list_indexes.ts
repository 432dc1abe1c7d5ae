import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * The administrator's license list sorts by these columns with the id as tie-break and filters
 * expired licenses by usage expiry (docs/licensing.md, '7. For store administrators'). At a million
 * licenses a sort without an index reads and sorts the whole table for every page; with one the
 * planner walks the index and stops after the page. On SQLite the id is the rowid, which every
 * index already ends with; PostgreSQL needs it named. PostgreSQL puts nulls last in an ascending
 * index, SQLite first: the expiry index is built NULLS FIRST there so both answer in one order.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema.createIndex('licenses_created').on('licenses').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('licenses_status').on('licenses').columns(['status', 'id']).execute();
  // Replaces the product index: (product_id, id) answers each lookup by product as well.
  await db.schema.dropIndex('licenses_product').execute();
  await db.schema.createIndex('licenses_product').on('licenses').columns(['product_id', 'id']).execute();
  if (dialect === 'postgres') {
    await sql`create index licenses_usage_expiry on licenses (usage_expires_at asc nulls first, id)`.execute(
      db,
    );
  } else {
    await db.schema
      .createIndex('licenses_usage_expiry')
      .on('licenses')
      .columns(['usage_expires_at', 'id'])
      .execute();
  }
  // The user list filters by role, newest first.
  await db.schema.createIndex('users_role').on('users').columns(['role', 'id']).execute();
}
