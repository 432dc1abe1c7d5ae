import { type Compilable, CompiledQuery, type Kysely } from 'kysely';

/**
 * A query built and compiled once, run many times with new parameter values. Building and
 * compiling a Kysely query costs more than running a short indexed query, so hot paths keep the
 * compiled SQL and substitute their values by position. `build` receives sentinel placeholders
 * and must use each exactly where the value goes.
 */
export function precompile<Schema, Args extends string, Row>(
  db: Kysely<Schema>,
  names: readonly Args[],
  build: (placeholders: Record<Args, string>) => Compilable<Row>,
): (values: Record<Args, unknown>) => Promise<Row | undefined> {
  const placeholders = Object.fromEntries(names.map((n) => [n, `\u0000${n}\u0000`])) as Record<Args, string>;
  const compiled = build(placeholders).compile();
  const slots = compiled.parameters.map((p) => names.find((n) => placeholders[n] === p));
  return async (values) => {
    const parameters = compiled.parameters.map((p, i) => {
      const name = slots[i];
      return name === undefined ? p : values[name];
    });
    const result = await db.executeQuery<Row>(CompiledQuery.raw(compiled.sql, parameters));
    return result.rows[0];
  };
}
