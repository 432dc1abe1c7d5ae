import type SQLite from 'better-sqlite3';

interface Pending {
  statement: SQLite.Statement;
  parameters: unknown[];
  resolve(rows: unknown[]): void;
  reject(error: unknown): void;
  /** Runs the write on its own through Kysely (waits for a transaction another request holds). */
  alone(): Promise<unknown[]>;
}

/**
 * Group commit for the hot single-statement writes on SQLite (rate counters, download tokens).
 * An autocommit write costs a WAL append and its file locks, 50–90 µs here, nearly all of it per
 * commit rather than per row; writes that arrive in the same turn of the event loop are committed
 * together in one transaction (about 8 µs a row), and only then does any caller hear back, so the
 * durability is the autocommit's. A statement that fails is undone alone (SQLite rolls back just
 * that statement) and rejects only its caller; if the whole transaction fails, every caller in it
 * is rejected. While another request holds a transaction open across an await, the batch runs
 * statement by statement through Kysely, which waits its turn.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private readonly sqlite: SQLite.Database) {}

  /** Runs `statement` (a write, with RETURNING or not) in the next batch; answers its rows. */
  run(
    statement: SQLite.Statement,
    parameters: unknown[],
    alone: () => Promise<unknown[]>,
  ): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ statement, parameters, resolve, reject, alone });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = () => {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (this.sqlite.inTransaction) {
      for (const p of batch) p.alone().then(p.resolve, p.reject);
      return;
    }
    const done: [Pending, unknown[]][] = [];
    try {
      this.sqlite.exec('BEGIN IMMEDIATE');
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
        if (!this.sqlite.inTransaction) {
          // SQLite abandoned the whole transaction (I/O error, disk full): nothing in it stands.
          for (const [q] of done) q.reject(e);
          for (const q of batch.slice(batch.indexOf(p) + 1)) q.reject(e);
          return;
        }
      }
    }
    try {
      this.sqlite.exec('COMMIT');
    } catch (e) {
      if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK');
      for (const [p] of done) p.reject(e);
      return;
    }
    for (const [p, rows] of done) p.resolve(rows);
  };
}
