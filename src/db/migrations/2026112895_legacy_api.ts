import type { Kysely } from 'kysely';

/**
 * `legacy_api` (docs/migrating.md, 'Sites already in the field'): a product opts in to the
 * compatibility API of the updaters its sites already run. Off (0) unless the owner turns it on,
 * because those updaters identify a site by its URL alone.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('products')
    .addColumn('legacy_api', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
