import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { DatabaseConfig } from '../../src/config.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { randomHex } from '../../src/random.js';

/** Which database the suite runs on: PostgreSQL when DATABASE_URL is set, else a SQLite file. */
export const dialectUnderTest = process.env.DATABASE_URL ? 'postgres' : 'sqlite';

export interface TestDatabase {
  config: DatabaseConfig;
  database: Database;
  /** Closes the connection and removes the database. */
  drop(): Promise<void>;
}

/** A fresh, migrated database of the kind under test, private to the caller; `upTo` stops after that migration. */
export async function freshDatabase(opts: { upTo?: string } = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const name = `tollgate_test_${randomHex(6)}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return migrated({ kind: 'postgres', url: url.href }, opts.upTo, async () => {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    });
  }
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-test-'));
  return migrated(
    { kind: 'sqlite', file: join(dir, 'tollgate.sqlite'), synchronous: 'NORMAL' },
    opts.upTo,
    () => rmSync(dir, { recursive: true, force: true }),
  );
}

/** Opens and migrates the database at `config` (up to `upTo` when given); `drop` closes it, then runs `remove`. */
async function migrated(
  config: DatabaseConfig,
  upTo: string | undefined,
  remove: () => void | Promise<void>,
): Promise<TestDatabase> {
  const database = openDatabase(config);
  await migrateToLatest(database.db, database.dialect, upTo);
  return {
    config,
    database,
    async drop() {
      await database.close().catch(() => {});
      await remove();
    },
  };
}
