import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

/**
 * SQLite only: a counter that moves with every change to what software issuance chooses from
 * (releases, artifacts, catalogue downloads), whoever makes it, in the same transaction. The
 * update check keeps each product's candidates in memory and reads only this counter while it
 * stands (ReleasesService.issuanceCandidates). A download's count is not such a change, so
 * deliveries leave the candidates in memory. On PostgreSQL reading the counter would be a round
 * trip of its own, and a counter row every release change locks would serialise them across
 * processes, so the check reads the releases themselves there.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  await db.schema
    .createTable('release_changes')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('generation', 'integer', (c) => c.notNull())
    .execute();
  await db.insertInto('release_changes').values({ id: 1, generation: 0 }).execute();
  const bump = 'UPDATE release_changes SET generation = generation + 1 WHERE id = 1;';
  for (const table of ['releases', 'artifacts', 'legacy_downloads']) {
    for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
      const when =
        table === 'releases' && event === 'UPDATE' ? 'WHEN OLD.download_count = NEW.download_count' : '';
      await sql
        .raw(
          `CREATE TRIGGER release_changes_${table}_${event.toLowerCase()} AFTER ${event} ON ${table} ${when} BEGIN ${bump} END`,
        )
        .execute(db);
    }
  }
}
