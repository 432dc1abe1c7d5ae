import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The better-sqlite3 release this Node.js runs, chosen once at start (docs/development.md,
 * "Node.js versions"). No single release serves every supported Node.js:
 *
 * - better-sqlite3 12 wraps its statements in Node's raw `ObjectWrap`. From Node 24.19, a wrapped
 *   statement collected after its environment is gone (at process exit, and when the checkpoint
 *   worker thread of src/db/checkpointer.ts leaves) fails an assertion and aborts the process.
 * - better-sqlite3 13 is built on Node-API 10, which Node 20 lacks: it crashes there on the first
 *   statement.
 *
 * So Node 22 and later load better-sqlite3 13 (the `better-sqlite3` dependency) and Node 20 loads
 * better-sqlite3 12 (the optional `better-sqlite3-node20` dependency, an npm alias). Their API is
 * the same for everything Tollgate uses.
 */
export const SQLITE_DRIVER =
  Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20';

const require = createRequire(import.meta.url);

let driver: { Driver: typeof BetterSqlite3; path: string } | undefined;

/** Loaded on first use: a server on PostgreSQL never loads it. */
function load(): { Driver: typeof BetterSqlite3; path: string } {
  if (driver) return driver;
  let path: string;
  try {
    path = require.resolve(SQLITE_DRIVER);
  } catch {
    // The alias is optional so that a failed build of it never stops an install on Node 22 or 24,
    // where it is not used; on Node 20 it must be there.
    throw new Error(
      `${SQLITE_DRIVER} is not installed (Node.js ${process.versions.node} needs it): run npm install again and check that it builds`,
    );
  }
  driver = { Driver: require(path) as typeof BetterSqlite3, path };
  return driver;
}

/** Opens a SQLite database with this runtime's better-sqlite3. */
export function openSqlite(file: string, options?: BetterSqlite3.Options): BetterSqlite3.Database {
  return new (load().Driver)(file, options);
}

/** Where the driver's main module is, for a worker thread to load the same one. */
export function sqliteDriverPath(): string {
  return load().path;
}
