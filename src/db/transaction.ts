import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely, Dialect as KyselyDialect, SelectQueryBuilder, Transaction } from 'kysely';
import type { Database, Dialect } from './database.js';
import type { DB } from './schema.js';

/**
 * The one transaction convention (docs/development.md, 'Transactions'):
 *
 * - a service opens a transaction with `withTransaction(database, async (tx) => …)`;
 * - every repository method that reads or writes takes `tx?: Tx` as its last argument and runs on
 *   `tx ?? this.db` (`on(this.db, tx)`): given a transaction it joins it, without one it runs on
 *   its own;
 * - a service that calls another module inside its transaction hands the same `tx` on.
 *
 * On SQLite there is one connection: a query on the root connection while a transaction of the
 * same request is open waits for that transaction, which waits for the query, for ever. The
 * guard below turns that mistake into an error the moment it happens (in tests, where it is on).
 */
export type Tx = Transaction<DB>;

/** The connection a repository method runs on: the transaction it was handed, or its own. */
export const on = (db: Kysely<DB>, tx: Tx | undefined): Kysely<DB> => tx ?? db;

/**
 * How a caller names the failure of the transaction's own steps, when its documented errors say
 * which step failed (licensing's `activation_transaction_failed`, `activation_commit_failed`).
 */
export interface TransactionSteps {
  begin?: <T>(run: () => Promise<T>) => Promise<T>;
  commit?: <T>(run: () => Promise<T>) => Promise<T>;
}

const passThrough = <T>(run: () => Promise<T>) => run();

/**
 * Runs `fn` in one transaction: committed when it returns, rolled back when it throws (the
 * rollback's own failure is dropped, so the caller sees the error that caused it).
 */
export async function withTransaction<T>(
  database: Pick<Database, 'db'>,
  fn: (tx: Tx) => Promise<T>,
  steps: TransactionSteps = {},
): Promise<T> {
  const tx = await (steps.begin ?? passThrough)(() => database.db.startTransaction().execute());
  try {
    const result = guarding ? await guarded(database.db, () => fn(tx)) : await fn(tx);
    await (steps.commit ?? passThrough)(() => tx.commit().execute());
    return result;
  } catch (e) {
    if (!tx.isCommitted && !tx.isRolledBack)
      await tx
        .rollback()
        .execute()
        .catch(() => {});
    throw e;
  }
}

/**
 * Reads a row for update: on PostgreSQL the row stays locked until the transaction ends, so the
 * same change from several processes runs one at a time. SQLite has one writer and Kysely runs
 * one transaction at a time on its one connection, so there it is a plain read.
 * Use: `.$call(forUpdate(this.dialect))`.
 */
export const forUpdate =
  (dialect: Dialect) =>
  // biome-ignore lint/suspicious/noExplicitAny: any select query, whatever its tables and columns
  <Q extends SelectQueryBuilder<any, any, any>>(q: Q): Q =>
    dialect === 'postgres' ? (q.forUpdate() as Q) : q;

interface OpenTransaction {
  root: Kysely<DB>;
  open: boolean;
}

const open = new AsyncLocalStorage<OpenTransaction>();
/** Set once a guarded database exists: until then no async context is tracked (it has a cost). */
let guarding = false;

async function guarded<T>(root: Kysely<DB>, fn: () => Promise<T>): Promise<T> {
  const store: OpenTransaction = { root, open: true };
  try {
    return await open.run(store, fn);
  } finally {
    // Work the callback started and left running keeps this store: once the transaction has
    // ended, its root queries are no longer a mistake.
    store.open = false;
  }
}

/**
 * Wraps a dialect so that its driver refuses a new connection asked for by code that runs inside
 * an open transaction of the same database (a transaction's own queries use the connection it
 * holds and never ask). The root is known only once the Kysely instance exists: `bind` sets it.
 */
export function guardedDialect(dialect: KyselyDialect): {
  dialect: KyselyDialect;
  bind(root: Kysely<DB>): void;
} {
  let root: Kysely<DB> | null = null;
  guarding = true;
  const wrapped: KyselyDialect = {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver: () => {
      const driver = dialect.createDriver();
      const acquire = driver.acquireConnection.bind(driver);
      driver.acquireConnection = () => {
        const store = open.getStore();
        if (store?.open && store.root === root) {
          return Promise.reject(
            new Error(
              'the root connection was used inside an open transaction: pass the transaction (tx) on (docs/development.md, Transactions)',
            ),
          );
        }
        return acquire();
      };
      return driver;
    },
  };
  return {
    dialect: wrapped,
    bind(db) {
      root = db;
    },
  };
}

/** The guard is on in tests (NODE_ENV=test, which the test runner sets) and off in production. */
export const guardTransactions = (): boolean => process.env.NODE_ENV === 'test';
