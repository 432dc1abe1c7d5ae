import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { Dialect } from './database.js';
import { migrations } from './migrations/index.js';

class StaticProvider implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const [name, m] of Object.entries(migrations)) {
      out[name] = { up: (db) => m.up(db, this.dialect) };
    }
    return out;
  }
}

/**
 * Brings the schema to the newest version, or only up to the migration named `upTo` (a test that
 * checks a migration over the rows an older store has); safe to run from several processes at
 * once (Kysely locks).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen and typed against no application schema
export async function migrateToLatest(db: Kysely<any>, dialect: Dialect, upTo?: string): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticProvider(dialect) });
  const { error, results } = upTo ? await migrator.migrateTo(upTo) : await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(
      `migration ${failed?.migrationName ?? ''} failed: ${String((error as Error)?.message ?? error)}`,
    );
  }
}
