import { type Compilable, CompiledQuery } from 'kysely';
import { type Database, prepareRows } from './database.js';
import { PgInsertBatch, PgReadBatch } from './pg-batch.js';
import { poolQuery, statementName } from './pg-names.js';

/**
 * A query built and compiled once, run many times with new parameter values. Building and
 * compiling a Kysely query costs more than running a short indexed query, so hot paths keep the
 * compiled SQL and substitute their values by position. `build` receives sentinel placeholders
 * and must use each exactly where the value goes.
 *
 * On SQLite the statement runs on the connection itself, skipping Kysely's driver path (its
 * connection mutex and promise chain cost more than the query), with the other hot reads or
 * writes of the same event-loop turn (src/db/batch.ts). While another request holds a transaction
 * open across an await, it waits its turn through Kysely instead: the one connection is shared,
 * and that transaction must not be read half-done.
 *
 * On PostgreSQL it runs as a named prepared statement on the pool: each connection parses the SQL
 * once, and PostgreSQL may then reuse a generic plan, where an unnamed query (Kysely's way) is
 * parsed and planned again on every request (docs/performance.md, 'Named prepared statements on
 * PostgreSQL'). A precompiled statement never runs inside a transaction, so the pool is the right
 * place for it.
 */
export interface Precompiled<Args extends string, Row> {
  first(values: Record<Args, unknown>): Promise<Row | undefined>;
  all(values: Record<Args, unknown>): Promise<Row[]>;
}

export function precompile<Args extends string, Row>(
  database: Pick<Database, 'db' | 'sqlite' | 'groupCommit' | 'readBatch' | 'precompiled' | 'pg'>,
  names: readonly Args[],
  build: (placeholders: Record<Args, string>) => Compilable<Row>,
  options: {
    /** A single-statement write: on SQLite it joins the turn's group commit (src/db/batch.ts). */
    write?: boolean;
    /**
     * A read whose calls of one turn PostgreSQL may answer in one statement (src/db/pg-batch.ts):
     * the PostgreSQL type of each value, e.g. `{ key: 'text' }`.
     */
    pgBatch?: Record<Args, string>;
    /**
     * A single-row insert whose calls of one turn PostgreSQL may take in one statement
     * (src/db/pg-batch.ts): the PostgreSQL type of each value, and the value unique to each row.
     */
    pgInsertBatch?: { types: Record<Args, string>; key: Args };
  } = {},
): Precompiled<Args, Row> {
  const placeholders = Object.fromEntries(names.map((n) => [n, `\u0000${n}\u0000`])) as Record<Args, string>;
  const compiled = build(placeholders).compile();
  const slots = compiled.parameters.map((p) => names.find((n) => placeholders[n] === p));
  // Each placeholder must stand alone as a parameter: one that was left out, inlined into the SQL
  // or built into a larger value would run with its sentinel text instead of the caller's value.
  const unbound = names.filter((n) => !slots.includes(n));
  const stray =
    compiled.sql.includes('\u0000') ||
    compiled.parameters.some(
      (p, i) => slots[i] === undefined && typeof p === 'string' && p.includes('\u0000'),
    );
  if (unbound.length > 0 || stray) {
    throw new Error(
      `precompile: ${unbound.length > 0 ? `placeholder ${unbound.join(', ')} is not` : 'a placeholder is not'} bound as a parameter of its own: ${compiled.sql}`,
    );
  }
  const parametersOf = (values: Record<Args, unknown>) =>
    compiled.parameters.map((p, i) => {
      const name = slots[i];
      return name === undefined ? p : values[name];
    });
  database.precompiled?.add(compiled.sql);
  const { sqlite, pg } = database;
  if (pg) {
    // One name per text, shared by every repository that compiles the same statement.
    const name = statementName(compiled.sql);
    const text = compiled.sql;
    const insert = options.pgInsertBatch;
    const batch = options.pgBatch
      ? new PgReadBatch<Row>(pg, name, text, slots, options.pgBatch)
      : insert && new PgInsertBatch<Row>(pg, name, text, slots, insert.types, insert.key);
    const all = batch
      ? (values: Record<Args, unknown>): Promise<Row[]> => batch.run(parametersOf(values))
      : async (values: Record<Args, unknown>): Promise<Row[]> =>
          (await poolQuery(pg, { name, text, values: parametersOf(values) })).rows as Row[];
    return { all, first: async (values) => (await all(values))[0] };
  }
  const statement = sqlite && prepareRows(sqlite, compiled.sql);
  const viaKysely = async (parameters: unknown[]) =>
    (await database.db.executeQuery<Row>(CompiledQuery.raw(compiled.sql, parameters))).rows;
  const batch = options.write ? database.groupCommit : database.readBatch;
  const all = (values: Record<Args, unknown>): Promise<Row[]> => {
    const parameters = parametersOf(values);
    if (!statement || !batch) return viaKysely(parameters);
    return batch.run(statement, parameters, () => viaKysely(parameters)) as Promise<Row[]>;
  };
  return { all, first: async (values) => (await all(values))[0] };
}
