import { type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { Database, Dialect } from '../db/database.js';
import type { DB, Id } from '../db/schema.js';
import { forUpdate, on, type Tx } from '../db/transaction.js';

/**
 * The columns every outbox table has (docs/development.md, 'Outboxes'); a module's table is these
 * and its own (`OutboxColumns & { … }`). A row waits as `pending` until `next_attempt_at`;
 * `locked_until` is the lease of the process handling it.
 */
export interface OutboxColumns {
  id: Id;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  locked_until: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** The tables of the schema that have every outbox column. */
export type OutboxTable = { [T in keyof DB]: DB[T] extends OutboxColumns ? T : never }[keyof DB];

/**
 * Kysely cannot follow a table name that is a type parameter, so the statements below are written
 * against this one-table view of the schema, with the real table's name substituted at run time;
 * the methods' signatures give callers their own table's row types back.
 */
type OneOutbox = { outbox: OutboxColumns };

/**
 * The statements every outbox shares: the lease claim, the release, the finish guarded by the
 * lease, and a resend's lock and fresh series of attempts. Each outbox's repository holds one, for
 * its table. Timestamps are ISO text, so comparisons are textual.
 */
export class OutboxQueries<T extends OutboxTable> {
  private readonly db: Kysely<DB>;
  private readonly dialect: Dialect;

  constructor(
    database: Pick<Database, 'db' | 'dialect'>,
    private readonly table: T,
  ) {
    this.db = database.db;
    this.dialect = database.dialect;
  }

  private on(tx: Tx | undefined): { db: Kysely<OneOutbox>; table: 'outbox' } {
    return { db: on(this.db, tx) as unknown as Kysely<OneOutbox>, table: this.table as unknown as 'outbox' };
  }

  /**
   * Takes up to `limit` due rows for this process by setting their lease. PostgreSQL skips rows
   * another process is claiming (FOR UPDATE SKIP LOCKED); on both databases the outer conditions
   * are re-checked by the UPDATE itself (on SQLite, the one writer, that alone makes it safe), so
   * a row is only ever claimed by one caller per lease.
   * On PostgreSQL the due rows are picked once, as an array: written `id IN (subquery)`, the
   * planner may run the subquery again for every row it updates (a nested-loop semi-join, its
   * choice on a small table), and each run, no longer seeing the rows already leased, picks the
   * next ones: the claim then took every due row, whatever the limit.
   */
  async claimDue(now: string, leaseUntil: string, limit: number, tx?: Tx): Promise<Selectable<DB[T]>[]> {
    const { db, table } = this.on(tx);
    const due = db
      .selectFrom(table)
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<=', now)]))
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit);
    const rows = await db
      .updateTable(table)
      .set({ locked_until: leaseUntil, updated_at: now })
      .where((eb) =>
        this.dialect === 'postgres'
          ? sql<boolean>`id = any(array(${due.forUpdate().skipLocked()}))`
          : eb('id', 'in', due),
      )
      .where('status', '=', 'pending')
      .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<=', now)]))
      .returningAll()
      .execute();
    return rows as unknown as Selectable<DB[T]>[];
  }

  /**
   * Sets the row's state after an attempt and drops its lease, fenced by the lease: when the lease
   * was lost (ran out and was taken by another process) nothing changes and the answer is false.
   */
  async finish(
    id: number,
    leaseUntil: string,
    next: Omit<Updateable<DB[T]>, 'id' | 'locked_until'>,
    tx?: Tx,
  ): Promise<boolean> {
    const { db, table } = this.on(tx);
    const res = await db
      .updateTable(table)
      .set({ ...(next as Updateable<OutboxColumns>), locked_until: null })
      .where('id', '=', id)
      .where('locked_until', '=', leaseUntil)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Gives a claimed row back untouched (the process is stopping; the attempt did not count). */
  async release(id: number, leaseUntil: string, tx?: Tx): Promise<void> {
    const { db, table } = this.on(tx);
    await db
      .updateTable(table)
      .set({ locked_until: null })
      .where('id', '=', id)
      .where('locked_until', '=', leaseUntil)
      .execute();
  }

  /**
   * The row whose `column` is `value` as it is, locked for the rest of the transaction (`FOR
   * UPDATE` on PostgreSQL): a resend records its state before.
   */
  async lock(
    column: 'id' | (keyof DB[T] & string),
    value: number | string,
    tx: Tx,
  ): Promise<Selectable<DB[T]> | undefined> {
    const { db, table } = this.on(tx);
    const row = await db
      .selectFrom(table)
      .selectAll()
      .where(column as 'id', '=', value as number)
      .$call(forUpdate(this.dialect))
      .executeTakeFirst();
    return row as unknown as Selectable<DB[T]> | undefined;
  }

  /**
   * Makes the row whose `column` is `value` due now with a fresh series of attempts, whatever its
   * state; undefined when there is no such row.
   */
  async reschedule(
    column: 'id' | (keyof DB[T] & string),
    value: number | string,
    now: string,
    tx?: Tx,
  ): Promise<Selectable<DB[T]> | undefined> {
    const { db, table } = this.on(tx);
    const row = await db
      .updateTable(table)
      .set({
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        locked_until: null,
        last_error: null,
        updated_at: now,
      })
      .where(column as 'id', '=', value as number)
      .returningAll()
      .executeTakeFirst();
    return row as unknown as Selectable<DB[T]> | undefined;
  }

  /**
   * What waits (the metrics' outbox gauges, docs/operations.md): how many rows are pending, retries
   * not yet due included, and the `next_attempt_at` of the oldest one due at `now`. One statement on
   * the `(status, next_attempt_at)` index, run at scrape time, never per request.
   */
  async backlog(now: string, tx?: Tx): Promise<{ depth: number; oldestDue: string | null }> {
    const { db, table } = this.on(tx);
    const row = await db
      .selectFrom(table)
      .select((eb) => [
        eb.fn.countAll<number | string>().as('depth'),
        sql<string | null>`min(case when next_attempt_at <= ${now} then next_attempt_at end)`.as(
          'oldest_due',
        ),
      ])
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return { depth: Number(row.depth), oldestDue: row.oldest_due ?? null };
  }
}

/**
 * The repository of a module's outbox table: its own queries on `db`, and `outbox`, the statements
 * every outbox shares, for its worker's claim, release and finish, and the resend.
 */
export abstract class OutboxRepository<T extends OutboxTable> {
  protected readonly db: Kysely<DB>;
  readonly outbox: OutboxQueries<T>;

  constructor(database: Pick<Database, 'db' | 'dialect'>, table: T) {
    this.db = database.db;
    this.outbox = new OutboxQueries(database, table);
  }
}
