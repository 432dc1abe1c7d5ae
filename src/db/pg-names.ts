import { createHash } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { BoundedMap } from '../bounded-map.js';

/**
 * The name of the prepared statement of a SQL text on PostgreSQL: its digest, so that one text has
 * one name in every process and for every caller, and no name ever stands for two texts
 * (PostgreSQL would refuse the second).
 */
export function statementName(text: string): string {
  return `tg_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
}

/** How many times a text is run unnamed before it is named: a one-off query stays unnamed. */
const NAME_AFTER = 2;
/**
 * The most texts named in one process. Each named text is a prepared statement on each pooled
 * connection that ran it (its parse tree and plan in that backend's memory); the store's own
 * queries are a few hundred texts, and a text built with a varying number of values (an `in`
 * list) stops being named once the budget is spent.
 */
const MAX_NAMES = 1000;
/** Only single data statements are prepared: not `begin`/`commit`, savepoints or DDL. */
const PREPARABLE = /^\s*(select|insert|update|delete|with)\s/i;

/**
 * The queries Kysely sends on PostgreSQL, as named prepared statements once they repeat. Kysely
 * sends each query unnamed, which PostgreSQL parses and plans again every time; named, each pooled
 * connection parses a text once and PostgreSQL may reuse a generic plan. The hot statements are
 * named from the start by `precompile` (src/db/precompiled.ts); this covers everything else that
 * runs often (the session lookup, the settings read, the outbox and renewal polls, the download's
 * transaction) without marking each call site (docs/performance.md, 'Named prepared statements on
 * PostgreSQL').
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  /** Texts seen fewer than NAME_AFTER times, oldest forgotten first. */
  private readonly seen = new BoundedMap<string, number>(5000);

  constructor(private readonly maxNames = MAX_NAMES) {}

  /** The name to run `text` under, or undefined to run it unnamed. */
  nameOf(text: string): string | undefined {
    const name = this.names.get(text);
    if (name !== undefined || this.names.size >= this.maxNames) return name;
    if (!PREPARABLE.test(text) || text.includes(';')) return undefined;
    const count = (this.seen.get(text) ?? 0) + 1;
    if (count < NAME_AFTER) {
      this.seen.set(text, count);
      return undefined;
    }
    this.seen.delete(text);
    const named = statementName(text);
    this.names.set(text, named);
    return named;
  }

  get size(): number {
    return this.names.size;
  }
}

/**
 * A prepared statement whose table changed shape since it was prepared on this connection (a
 * migration by another instance added a column to a `select *`): PostgreSQL refuses to run it
 * until it is prepared again.
 */
export function isStalePlan(error: unknown): boolean {
  const e = error as { code?: string; message?: string } | null;
  return e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '');
}

/** Forgets the statement `name` on this connection, here and in PostgreSQL, so that it is prepared anew. */
async function forget(client: pg.PoolClient, name: string): Promise<void> {
  const connection = (client as unknown as { connection?: { parsedStatements?: Record<string, string> } })
    .connection;
  if (connection?.parsedStatements) delete connection.parsedStatements[name];
  await client.query(`deallocate "${name}"`);
}

/**
 * The pool Kysely's PostgreSQL dialect runs on, its clients naming the queries that repeat. A
 * statement refused as stale is prepared again and run once more when no transaction is open on
 * the connection; inside one, the transaction has failed anyway, so the error goes to the caller
 * and the connection is closed at its release (its other statements may be stale too).
 */
export function namingPool(pool: pg.Pool, names: StatementNames): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let inTransaction = false;
    let discard = false;
    const wrapper = {
      query: async (text: string, values: readonly unknown[]) => {
        if (typeof text !== 'string') return client.query(text);
        if (/^\s*(begin|start transaction)\b/i.test(text)) inTransaction = true;
        else if (/^\s*(commit|rollback)\s*$/i.test(text)) inTransaction = false;
        const name = names.nameOf(text);
        if (name === undefined) return client.query(text, values as unknown[]);
        const config = { name, text, values: values as unknown[] };
        try {
          return await client.query(config);
        } catch (error) {
          if (!isStalePlan(error)) throw error;
          if (inTransaction) {
            discard = true;
            throw error;
          }
          await forget(client, name);
          return client.query(config);
        }
      },
      release: () => {
        if (discard) wrapped.delete(client);
        client.release(discard || undefined);
      },
    };
    return wrapper as unknown as PostgresPoolClient;
  };
  return {
    connect: async () => {
      const client = await pool.connect();
      let wrapper = wrapped.get(client);
      if (!wrapper) {
        wrapper = wrap(client);
        wrapped.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

/**
 * A named query on the pool. The pool closes the connection of a query that failed, so a stale
 * statement is prepared again on the next connection; each attempt closes one stale connection,
 * and a pool of `max` connections needs at most `max` retries.
 */
export async function poolQuery(pool: pg.Pool, config: pg.QueryConfig): Promise<pg.QueryResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await pool.query(config);
    } catch (error) {
      if (!isStalePlan(error) || attempt >= pool.options.max) throw error;
    }
  }
}
