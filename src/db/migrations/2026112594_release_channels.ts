import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * Release channels and staged rollouts (docs/distribution.md, 'Channels and staged rollouts'):
 * each release names its channel (`stable`, `rc`, `beta`, `alpha`) and the percentage of sites
 * it is offered to. Every existing release reads as stable and fully rolled out, so a store that
 * uses neither answers as before. On SQLite the release_changes triggers (migration 2026112212)
 * fire on every update of a release row, so a change of either column moves the counter the
 * kept issuance candidates depend on.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable('releases')
    .addColumn('channel', 'varchar(10)', (c) => c.notNull().defaultTo('stable'))
    .execute();
  await db.schema
    .alterTable('releases')
    .addColumn('rollout_percent', 'integer', (c) => c.notNull().defaultTo(100))
    .execute();
}
