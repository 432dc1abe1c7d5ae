import type SQLite from 'better-sqlite3';
import type { SqliteStatement } from 'kysely';
import { TurnQueue } from './turn-queue.js';

interface Pending {
  statement: SqliteStatement;
  parameters: unknown[];
  resolve(rows: unknown[]): void;
  reject(error: unknown): void;
  /** Runs the statement on its own through Kysely (waits for a transaction another request holds). */
  alone(): Promise<unknown[]>;
}

/**
 * The hot statements of one turn of the event loop, run together at its end in one transaction on
 * the SQLite connection. A database has two: one for writes, one for reads.
 *
 * - **Writes (group commit).** An autocommit write costs a WAL append and its file locks, 50–90 µs
 *   here, nearly all of it per commit rather than per row. Together they cost about 8 µs a row, and
 *   no caller hears back before the commit, so the durability is the autocommit's. A statement
 *   that fails is undone alone (SQLite rolls back just that statement) and rejects only its
 *   caller; if the whole transaction fails, every caller in it is rejected.
 * - **Reads.** Run one by one as requests come in, each read takes and drops SQLite's read lock
 *   (two `fcntl` calls) and finds SQLite's code and B-tree pages pushed out of the CPU's caches by
 *   the HTTP work since the last one: in the server it cost three to five times what it costs in
 *   a loop. Run back to back in one read transaction, at their loop cost, the reads of the requests
 *   that arrived in the same turn halve validate's CPU per request (docs/performance.md, 'Batched
 *   reads per event-loop turn'). They see one snapshot, taken at the end of the turn, so every
 *   write committed before a read was asked for is visible to it. A read that fails rejects only
 *   its caller.
 *
 * While another request holds a transaction open across an await, the batch runs statement by
 * statement through Kysely, which waits its turn: nothing reads or joins a transaction half-done.
 */
export class TurnBatch {
  private readonly turn = new TurnQueue<Pending>((batch) => this.flush(batch));
  private readonly begin: SQLite.Statement;
  private readonly commit: SQLite.Statement;

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly mode: 'read' | 'write',
    /** Called after each commit of a batch (the checkpointer counts them). */
    private readonly onCommit: () => void = () => {},
  ) {
    this.begin = sqlite.prepare(mode === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN');
    this.commit = sqlite.prepare('COMMIT');
  }

  /** Runs `statement` in this turn's batch; answers its rows (none for a write without RETURNING). */
  run(
    statement: SqliteStatement,
    parameters: unknown[],
    alone: () => Promise<unknown[]>,
  ): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      this.turn.push({ statement, parameters, resolve, reject, alone });
    });
  }

  private flush(batch: Pending[]): void {
    if (this.sqlite.inTransaction) {
      for (const p of batch) p.alone().then(p.resolve, p.reject);
      return;
    }
    const done: [Pending, unknown[]][] = [];
    try {
      this.begin.run();
    } catch (e) {
      for (const p of batch) p.reject(e);
      return;
    }
    for (const p of batch) {
      try {
        if (p.statement.reader) {
          done.push([p, p.statement.all(p.parameters) as unknown[]]);
        } else {
          p.statement.run(p.parameters);
          done.push([p, []]);
        }
      } catch (e) {
        p.reject(e);
        if (this.mode === 'write' && !this.sqlite.inTransaction) {
          // SQLite abandoned the whole transaction (I/O error, disk full): nothing in it stands.
          for (const [q] of done) q.reject(e);
          for (const q of batch.slice(batch.indexOf(p) + 1)) q.reject(e);
          return;
        }
      }
    }
    try {
      if (this.sqlite.inTransaction) this.commit.run();
    } catch (e) {
      if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK');
      for (const [p] of done) p.reject(e);
      return;
    }
    this.onCommit();
    for (const [p, rows] of done) p.resolve(rows);
  }
}
