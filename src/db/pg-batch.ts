import type pg from 'pg';
import { poolQuery } from './pg-names.js';
import { TurnQueue } from './turn-queue.js';

interface Pending {
  parameters: unknown[];
  resolve(rows: unknown[]): void;
  reject(error: unknown): void;
}

/**
 * How the batches of this process went: a batch statement that fails is run again call by call,
 * which gives the same answers at many times the cost, so a failure is only ever a caller's bad
 * value. A batch that fails on every call (SQL the nesting breaks) shows here, and tests watch it.
 */
export const pgBatchCounts = { statements: 0, failures: 0 };

/**
 * What the batches below share: the calls of one turn of the event loop (TurnQueue); at its end a
 * caller alone runs the single named statement and several go to `send` as one. A batch that fails
 * is run again call by call (`fallBack`).
 */
abstract class PgTurnBatch<Row> {
  private readonly turn = new TurnQueue<Pending>((batch) => {
    if (batch.length === 1) this.alone(batch[0]!);
    else this.send(batch);
  });

  constructor(
    protected readonly pool: pg.Pool,
    private readonly name: string,
    private readonly text: string,
  ) {}

  /** Runs the statement with these parameters (in the single statement's order) in this turn's batch. */
  run(parameters: unknown[]): Promise<Row[]> {
    return new Promise((resolve, reject) => {
      this.turn.push({ parameters, resolve: resolve as (rows: unknown[]) => void, reject });
    });
  }

  /** Sends the calls of a turn (two or more) as one statement and answers each caller. */
  protected abstract send(batch: Pending[]): void;

  /** After a failed batch: each call on its own, so a bad value fails only its caller. */
  protected fallBack(batch: Pending[]): void {
    pgBatchCounts.failures++;
    for (const p of batch) this.alone(p);
  }

  private alone(p: Pending): void {
    poolQuery(this.pool, { name: this.name, text: this.text, values: p.parameters }).then(
      (r) => p.resolve(r.rows),
      p.reject,
    );
  }
}

/**
 * The calls of one hot read made in the same turn of the event loop, sent to PostgreSQL as one
 * statement. A query costs node-postgres about 100 µs of CPU whatever it asks (building protocol
 * messages, a socket write and read, parsing the answer), more than SQLite's whole validate
 * (docs/performance.md, 'Named prepared statements on PostgreSQL'); under load several validates
 * arrive in one turn and share that cost.
 *
 * The batched statement is made from the single one, so there is one source for the query: each
 * caller's values become one row of `unnest` over arrays (typed by `types`, since PostgreSQL must
 * know an array's element type), and the single query runs once per row as a LATERAL subquery,
 * so its joins, ORDER BY and LIMIT apply per caller exactly as before. Rows carry the caller's
 * ordinal and are handed back to each caller in the single query's order. A batch that fails is
 * run again call by call, so one caller's bad value fails only that caller.
 */
export class PgReadBatch<Row> extends PgTurnBatch<Row> {
  private readonly batchName: string;
  private readonly batchText: string;
  /** The position, among the arrays, of each `$n` that takes a caller's value (-1: a constant). */
  private readonly arrayOf: number[];
  /** The positions of the constants among the single statement's parameters. */
  private readonly constants: number[];
  private readonly arrays: number;

  constructor(
    pool: pg.Pool,
    name: string,
    text: string,
    /** For each `$n` of `text` (n - 1), the caller's value it takes, or undefined for a constant. */
    slots: (string | undefined)[],
    /** The PostgreSQL type of each named value, e.g. `{ key: 'text' }`. */
    types: Record<string, string>,
  ) {
    super(pool, name, text);
    const names = Object.keys(types);
    const missing = slots.filter((s) => s !== undefined && !names.includes(s));
    if (missing.length > 0) throw new Error(`PgReadBatch: no type for ${missing.join(', ')}`);
    // New numbering: the arrays first ($1..$k, one per name), then the constants.
    let next = names.length;
    // The callers' values are columns of `tg_args`, a name no query of ours gives a table: the single
    // query is nested inside the batch, so an alias of its own (the releases query joins artifacts
    // as `a`) would hide the outer one and the batch would fail on every call.
    const renumbered = slots.map((slot) => (slot === undefined ? `$${++next}` : `tg_args."${slot}"`));
    this.arrayOf = slots.map((slot) => (slot === undefined ? -1 : names.indexOf(slot)));
    this.constants = slots.flatMap((slot, i) => (slot === undefined ? [i] : []));
    this.arrays = names.length;
    const inner = text.replace(/\$(\d+)\b/g, (_, n: string) => renumbered[Number(n) - 1]!);
    // Each array is read through a scalar sub-select, which PostgreSQL plans without looking at its
    // value: the planner then guesses the same number of callers for every batch, so after five
    // executions it keeps the prepared statement's generic plan. Given the arrays themselves it
    // costs each batch by its own length, which rates the generic plan (priced at 10 callers) dearer
    // than a custom plan for the usual few, and plans the statement afresh on every execution: that
    // planning was most of the database's time per update check (docs/performance.md,
    // 'Batched reads kept their plan').
    const arrays = names.map((n, i) => `(select $${i + 1}::${types[n]}[])`).join(', ');
    const columns = names.map((n) => `"${n}"`).join(', ');
    // tg_row keeps each caller's rows in the single query's own order (its ORDER BY), which the
    // outer ORDER BY alone would not promise.
    this.batchText =
      `select tg_args.tg_ordinal, q.* from unnest(${arrays}) with ordinality as tg_args(${columns}, tg_ordinal) ` +
      `cross join lateral (select s.*, row_number() over () as tg_row from (${inner}) as s) as q ` +
      'order by tg_args.tg_ordinal, q.tg_row';
    this.batchName = `${name}_b`;
  }

  protected send(batch: Pending[]): void {
    // One array per named value, a caller's value at the caller's index; the constants, the same
    // for every caller, once.
    const arrays = Array.from({ length: this.arrays }, () => new Array<unknown>(batch.length));
    batch.forEach((p, caller) => {
      this.arrayOf.forEach((array, i) => {
        if (array >= 0) arrays[array]![caller] = p.parameters[i];
      });
    });
    const constants = this.constants.map((i) => batch[0]!.parameters[i]);
    this.pool
      .query({
        name: this.batchName,
        text: this.batchText,
        values: [...arrays, ...constants],
        rowMode: 'array',
      })
      .then(
        (result) => {
          pgBatchCounts.statements++;
          // The single query's columns sit between tg_ordinal (first) and tg_row (last).
          const fields = result.fields.map((f) => f.name);
          const last = fields.length - 1;
          const rows = batch.map(() => [] as Record<string, unknown>[]);
          for (const values of result.rows as unknown[][]) {
            const row: Record<string, unknown> = {};
            for (let f = 1; f < last; f++) row[fields[f]!] = values[f];
            rows[Number(values[0]) - 1]!.push(row);
          }
          batch.forEach((p, i) => {
            p.resolve(rows[i]!);
          });
        },
        () => this.fallBack(batch),
      );
  }
}

/**
 * The single-row inserts of one turn of the event loop, sent to PostgreSQL as one
 * `insert … select * from unnest(…)`: the update check mints a download token per eligible site,
 * and a statement costs node-postgres about 100 µs of CPU whatever it does (docs/performance.md,
 * 'Writes of a turn in one statement'). Made from the single statement (`insert into t (…) values
 * ($1, …, $n) returning …`, every value a caller's), so there is one source for it. The rows the
 * statement returns are handed back by a unique column of the caller's own (`key`), not by their
 * order, which PostgreSQL does not promise. A batch that fails is run again call by call: a failed
 * statement inserted nothing, and one caller's bad value then fails only that caller.
 */
export class PgInsertBatch<Row> extends PgTurnBatch<Row> {
  private readonly batchName: string;
  private readonly batchText: string;
  private readonly keySlot: number;

  constructor(
    pool: pg.Pool,
    name: string,
    text: string,
    slots: (string | undefined)[],
    /** The PostgreSQL type of each value, e.g. `{ token_hash: 'text' }`. */
    types: Record<string, string>,
    /** A value unique to each caller's row (a unique column), by which its returned row is found. */
    key: string,
  ) {
    super(pool, name, text);
    const values = /\svalues\s*\(([^)]*)\)\s*returning\s/i.exec(text);
    const columns = /^insert into\s+"[^"]+"\s*\(([^)]*)\)/i.exec(text);
    const typed = slots.every((s) => s !== undefined && types[s] !== undefined);
    const expected = slots.map((_, i) => `$${i + 1}`).join(', ');
    if (!columns || !values || !typed || values[1]!.replace(/\s+/g, ' ').trim() !== expected) {
      throw new Error(`PgInsertBatch: not a single-row insert of the callers' values: ${text}`);
    }
    const keyColumn = columns[1]!.split(',')[slots.indexOf(key)]?.trim();
    if (!keyColumn) throw new Error(`PgInsertBatch: ${key} is not among the inserted columns`);
    this.keySlot = slots.indexOf(key);
    const arrays = slots.map((s, i) => `(select $${i + 1}::${types[s!]}[])`).join(', ');
    this.batchText =
      `${text.slice(0, values.index)} select * from unnest(${arrays}) returning ` +
      `${text.slice(values.index + values[0].length)}, ${keyColumn} as tg_key`;
    this.batchName = `${name}_b`;
  }

  protected send(batch: Pending[]): void {
    const columns = batch[0]!.parameters.map((_, i) => batch.map((p) => p.parameters[i]));
    poolQuery(this.pool, { name: this.batchName, text: this.batchText, values: columns }).then(
      (result) => {
        pgBatchCounts.statements++;
        const byKey = new Map<unknown, Record<string, unknown>>();
        for (const { tg_key, ...row } of result.rows as Record<string, unknown>[]) {
          byKey.set(String(tg_key).trimEnd(), row);
        }
        for (const p of batch) {
          const row = byKey.get(String(p.parameters[this.keySlot]).trimEnd());
          if (row) p.resolve([row]);
          else p.reject(new Error('PgInsertBatch: no row came back for a caller'));
        }
      },
      () => this.fallBack(batch),
    );
  }
}
