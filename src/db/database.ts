import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type SQLite from 'better-sqlite3';
import { Kysely, type Dialect as KyselyDialect, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { BoundedMap } from '../bounded-map.js';
import type { DatabaseConfig } from '../config.js';
import { TurnBatch } from './batch.js';
import { Checkpointer } from './checkpointer.js';
import type { DB } from './schema.js';
import { openSqlite } from './sqlite.js';
import { guardedDialect, guardTransactions } from './transaction.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  /**
   * The SQLite connection itself (absent on PostgreSQL), for the few hot statements that run on it
   * directly, batched by event-loop turn (src/db/precompiled.ts). Everything else goes through `db`.
   */
  sqlite?: SQLite.Database;
  /** SQLite only: the hot single-statement writes of one event-loop turn, in one commit. */
  groupCommit?: TurnBatch;
  /** SQLite only: the hot reads of one event-loop turn, in one read transaction. */
  readBatch?: TurnBatch;
  /** SQLite only: checkpoints the WAL on a worker thread while writes are busy. */
  checkpointer?: Checkpointer;
  /**
   * The SQL of every query precompiled on this database (src/db/precompiled.ts), so that a test can
   * snapshot the hot statements and check their query plans.
   */
  precompiled?: Set<string>;
  close(): Promise<void>;
}

// int8 (counts, sums) as JS numbers: every value we store fits in 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

/**
 * How much of a SQLite file reads map: address space, not memory; beyond it reads use pread. SQLite
 * caps it at its compile-time maximum, just under 2 GiB.
 */
const SQLITE_MMAP_BYTES = 2 * 1024 ** 3;

export function openDatabase(config: DatabaseConfig): Database {
  if (config.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: config.url, max: 10 });
    // An idle client's network error must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    const db = kysely(new PostgresDialect({ pool }));
    return { db, dialect: 'postgres', precompiled: new Set(), close: () => db.destroy() };
  }
  createPrivately(config.file);
  const sqlite = openSqlite(config.file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${config.synchronous}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Reads map the file instead of copying each page with pread into SQLite's 2 MB page cache: a
  // license lookup touches three B-trees in random places of a large file, so most of its pages
  // are misses there (bench/validate: about 10 µs a request less; docs/performance.md, 'Mapped
  // reads (mmap)'). The pages are the kernel's page cache either way; mapped, the ones touched
  // count in the process's RSS.
  sqlite.pragma(`mmap_size = ${SQLITE_MMAP_BYTES}`);
  const db = kysely(new SqliteDialect({ database: withStatementCache(sqlite) }));
  const checkpointer = new Checkpointer(sqlite, config.file, config.synchronous);
  return {
    db,
    dialect: 'sqlite',
    sqlite,
    groupCommit: new TurnBatch(sqlite, 'write', () => checkpointer.committed()),
    readBatch: new TurnBatch(sqlite, 'read'),
    checkpointer,
    precompiled: new Set(),
    close: async () => {
      await checkpointer.stop();
      await db.destroy();
    },
  };
}

/** A Kysely instance; in tests its driver refuses the root connection inside a transaction (src/db/transaction.ts). */
function kysely(dialect: KyselyDialect): Kysely<DB> {
  if (!guardTransactions()) return new Kysely<DB>({ dialect });
  const guard = guardedDialect(dialect);
  const db = new Kysely<DB>({ dialect: guard.dialect });
  guard.bind(db);
  return db;
}

/**
 * The database holds license keys, the webhook and signing secrets and session nonces, so it is
 * readable by its owner only: the file is created 0600 before SQLite opens it, and SQLite gives
 * the WAL and shared-memory files it creates the database file's mode. Files of an older install
 * are tightened too. A new directory is created 0700 (docs/administration.md, File modes).
 */
function createPrivately(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
}

/**
 * Kysely prepares every query afresh; preparing costs as much as running a short indexed query.
 * Statements are reusable in better-sqlite3, so hot queries keep theirs (bounded, oldest dropped).
 */
function withStatementCache(sqlite: SQLite.Database, max = 500): SQLite.Database {
  const cache = new BoundedMap<string, SQLite.Statement>(max);
  const prepare = (source: string) => {
    let stmt = cache.get(source);
    if (stmt) return stmt;
    stmt = prepareRows(sqlite, source);
    cache.set(source, stmt);
    return stmt;
  };
  return new Proxy(sqlite, {
    get(target, prop, receiver) {
      if (prop === 'prepare') return prepare;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Prepares a statement whose rows are built here from raw value arrays. better-sqlite3 builds each
 * row object value by value through the V8 API, which on Node 20 costs about 0.4 µs a column:
 * 13 µs for two 16-column rows, against 5 µs read raw and named in JavaScript. Rows are the same
 * plain objects (a repeated column name keeps its last value, as before).
 */
export function prepareRows(sqlite: SQLite.Database, source: string): SQLite.Statement {
  const stmt = sqlite.prepare(source);
  if (!stmt.reader) return stmt;
  stmt.raw(true);
  const toRow = rowBuilder(stmt.columns().map((c) => c.name));
  const rows = {
    reader: true,
    all: (...params: unknown[]) => (stmt.all(...params) as unknown[][]).map(toRow),
    get: (...params: unknown[]) => {
      const values = stmt.get(...params) as unknown[] | undefined;
      return values && toRow(values);
    },
    *iterate(...params: unknown[]) {
      for (const values of stmt.iterate(...params) as IterableIterator<unknown[]>) yield toRow(values);
    },
    // A reader (SELECT, or a write with RETURNING) may still be run for its effect alone.
    run: (...params: unknown[]) => stmt.run(...params),
  };
  return rows as unknown as SQLite.Statement;
}

/**
 * A function that names a raw row's values, generated once per statement: each row is then one
 * object literal of a fixed shape, which V8 builds from a template with a single hidden class,
 * where adding the columns one by one under names it cannot predict costs a property lookup and
 * a shape change a column (an 18-column row: 0.39 → 0.06 µs; 100 rows of 30 columns, which
 * V8 no longer keeps in fast mode: 160 → 3 µs). The names are our own SQL's column names,
 * written into the source as JSON string literals.
 */
export function rowBuilder(names: readonly string[]): (values: unknown[]) => Record<string, unknown> {
  // A repeated name keeps its first position and its last value, as assignment in order would.
  const last = new Map(names.map((name, i) => [name, i]));
  const fields = [...last].map(([name, i]) => {
    const key = JSON.stringify(name);
    // A literal "__proto__" key would set the prototype; a computed one defines the property.
    return `${name === '__proto__' ? `[${key}]` : key}: v[${i}]`;
  });
  return new Function('v', `return { ${fields.join(', ')} };`) as (
    values: unknown[],
  ) => Record<string, unknown>;
}
