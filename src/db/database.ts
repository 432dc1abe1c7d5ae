import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type SQLite from 'better-sqlite3';
import {
  Kysely,
  type Dialect as KyselyDialect,
  PostgresDialect,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteStatement,
} from 'kysely';
import type pg from 'pg';
import { BoundedMap } from '../bounded-map.js';
import { type DatabaseConfig, DEFAULT_POOL_SIZE } from '../config.js';
import { TurnBatch } from './batch.js';
import { Checkpointer } from './checkpointer.js';
import { namingPool, StatementNames } from './pg-names.js';
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
  /**
   * The PostgreSQL pool itself (absent on SQLite), for the hot statements, which run on it as named
   * prepared statements (src/db/precompiled.ts). Everything else goes through `db`.
   */
  pg?: pg.Pool;
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

/** How long an unused PostgreSQL connection is kept: long enough to outlast a lull in traffic. */
const POOL_IDLE_MS = 5 * 60_000;

/**
 * node-postgres, loaded by the first PostgreSQL connection: a store on SQLite never holds it
 * (docs/performance.md, 'Memory'). Synchronously, as `openDatabase` is; it is a CommonJS package.
 */
let pgModule: typeof pg | null = null;
function loadPg(): typeof pg {
  if (pgModule) return pgModule;
  pgModule = createRequire(import.meta.url)('pg') as typeof pg;
  // int8 (counts, sums) as JS numbers: every value we store fits in 2^53.
  pgModule.types.setTypeParser(20, (v) => Number(v));
  return pgModule;
}

/**
 * How much of a SQLite file reads map: address space, not memory; beyond it reads use pread. SQLite
 * caps it at its compile-time maximum, just under 2 GiB.
 */
const SQLITE_MMAP_BYTES = 2 * 1024 ** 3;

export function openDatabase(config: DatabaseConfig): Database {
  if (config.kind === 'postgres') {
    const pool = new (loadPg().Pool)({
      connectionString: config.url,
      max: config.poolSize ?? DEFAULT_POOL_SIZE,
      // A connection carries the named statements it prepared (src/db/pg-names.ts); closed after
      // node-postgres's default 10 idle seconds, a store whose traffic pauses for a few seconds
      // opened new ones and planned every hot statement again (docs/performance.md, 'Pool size').
      idleTimeoutMillis: POOL_IDLE_MS,
    });
    // An idle client's network error must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    const db = kysely(new PostgresDialect({ pool: namingPool(pool, new StatementNames()) }));
    return { db, dialect: 'postgres', pg: pool, precompiled: new Set(), close: () => db.destroy() };
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
  const db = kysely(new SqliteDialect({ database: new CachedConnection(sqlite) }));
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
 * The connection Kysely's SQLite dialect runs on, with a statement cache: Kysely prepares every
 * query afresh, and preparing costs as much as running a short indexed query. Statements are
 * reusable in better-sqlite3, so the statement of each SQL text is kept (bounded, oldest dropped),
 * and its rows are built from raw value arrays (`RowStatement`).
 */
class CachedConnection implements SqliteDatabase {
  private readonly statements: BoundedMap<string, RowStatement>;

  constructor(
    private readonly sqlite: SQLite.Database,
    max = 500,
  ) {
    this.statements = new BoundedMap(max);
  }

  prepare(source: string): RowStatement {
    let statement = this.statements.get(source);
    if (!statement) {
      statement = prepareRows(this.sqlite, source);
      this.statements.set(source, statement);
    }
    return statement;
  }

  close(): void {
    this.sqlite.close();
  }
}

/**
 * A statement whose rows are built here from raw value arrays. better-sqlite3 builds each row
 * object value by value through the V8 API, which on Node 20 costs about 0.4 µs a column: 13 µs
 * for two 16-column rows, against 5 µs read raw and named in JavaScript (docs/performance.md,
 * 'Statement cache and row builder'). Rows are the same plain objects (a repeated column name
 * keeps its last value, as before). Parameters come as one array, as Kysely and src/db/batch.ts
 * pass them.
 */
export class RowStatement implements SqliteStatement {
  /** Whether the statement returns rows (a SELECT, or a write with RETURNING). */
  readonly reader: boolean;
  private readonly toRow: (values: unknown[]) => Record<string, unknown>;

  constructor(private readonly statement: SQLite.Statement) {
    this.reader = statement.reader;
    // A statement that returns no rows has no columns, and better-sqlite3 refuses all(), get()
    // and iterate() on it: only run() is left, unchanged.
    const names = this.reader
      ? statement
          .raw(true)
          .columns()
          .map((c) => c.name)
      : [];
    this.toRow = rowBuilder(names);
  }

  all(parameters: readonly unknown[] = []): Record<string, unknown>[] {
    return (this.statement.all(parameters) as unknown[][]).map(this.toRow);
  }

  get(parameters: readonly unknown[] = []): Record<string, unknown> | undefined {
    const values = this.statement.get(parameters) as unknown[] | undefined;
    return values && this.toRow(values);
  }

  *iterate(parameters: readonly unknown[] = []): IterableIterator<Record<string, unknown>> {
    for (const values of this.statement.iterate(parameters) as IterableIterator<unknown[]>) {
      yield this.toRow(values);
    }
  }

  /** Runs the statement for its effect; a reader may be run so too. */
  run(parameters: readonly unknown[] = []): SQLite.RunResult {
    return this.statement.run(parameters);
  }
}

/** Prepares `source` on the SQLite connection, its rows built from raw value arrays. */
export function prepareRows(sqlite: SQLite.Database, source: string): RowStatement {
  return new RowStatement(sqlite.prepare(equalitiesUnplanned(source)));
}

/**
 * `x = ?` and `x is ?` written `x = +?` and `x is +?` (outside quoted strings, names and
 * comments): the same comparison, whose value the query planner does not look at.
 *
 * SQLite 3.54 (better-sqlite3 13, which Node 22 and later load) looks at the value bound to every
 * `= ?` term it weighs for a loop other than the one the term serves, to tell 0 and 1 from other
 * numbers, and marks the statement to be planned again when a new value is bound. better-sqlite3
 * clears the bindings after each run, and SQLite expires a statement so marked whenever its
 * bindings are cleared: every join, `exists` or non-unique lookup with such a term was parsed and
 * planned again on every run, 5 to 55 µs each (docs/performance.md, 'Statements planned again on
 * every run'). The unary plus is a no-op on the value (no affinity, no collation, as a bare
 * parameter has none), but the planner stops at it. Its one other effect: a partial index whose
 * condition is `x = literal` is no longer chosen from `x = ?` bound to that literal, so such
 * conditions are written with the literal in the SQL (as the repositories do).
 */
export function equalitiesUnplanned(source: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    // Skipped whole: a quoted string or name (a doubled quote inside it ends and starts it again,
    // which keeps it inside) and a comment.
    const end =
      c === "'" || c === '"'
        ? source.indexOf(c, i + 1)
        : c === '-' && source[i + 1] === '-'
          ? source.indexOf('\n', i)
          : c === '/' && source[i + 1] === '*'
            ? source.indexOf('*/', i + 2) + 1
            : i;
    if (end !== i) {
      i = end <= 0 ? source.length : end;
      continue;
    }
    if (c !== '?' || !comparedForEquality(source, i)) continue;
    out += `${source.slice(from, i)}+`;
    from = i;
  }
  return from === 0 ? source : out + source.slice(from);
}

/** Whether the `?` at `at` follows `=` or `==` (not `<=`, `>=`, `!=`) or the keyword `is`. */
function comparedForEquality(source: string, at: number): boolean {
  let i = at;
  while (i > 0 && /\s/.test(source[i - 1]!)) i--;
  return /(?:(?:^|[^<>!=])==?|(?:^|[^\w$])is)$/i.test(source.slice(Math.max(0, i - 3), i));
}

/**
 * A function that names a raw row's values, generated once per statement: each row is then one
 * object literal of a fixed shape, which V8 builds from a template with a single hidden class.
 * Every way without generated code adds the columns one by one under names V8 cannot predict, a
 * property lookup and a shape change a column: 7 to 20 times slower in bench/rows.ts, and much
 * worse once V8 gives up on a wide row's shape (docs/performance.md, 'Statement cache and row
 * builder').
 *
 * This is the only code Tollgate generates, and it is narrow: the source is a fixed template, and
 * the only text from outside it is the column names of our own SQL, each written as
 * `JSON.stringify(name)`, a complete string literal for any string (quotes, backslashes and
 * control characters escaped; U+2028 and U+2029 are legal in string literals). A name is only
 * ever a key and the values are only ever read from the array, so no name can end the literal or
 * run code (test/foundation/sqlite-fast-paths.test.ts tries). It needs code generation from
 * strings, which Node allows unless started with `--disallow-code-generation-from-strings`.
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
