import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Checkpointer } from '../../src/db/checkpointer.js';
import { openDatabase } from '../../src/db/database.js';
import { precompile } from '../../src/db/precompiled.js';
import { openSqlite } from '../../src/db/sqlite.js';
import { waitFor } from '../helpers/wait.js';

// WAL checkpoints on a worker thread while writes are busy (src/db/checkpointer.ts), on a SQLite
// file whichever database the rest of the suite uses.

let dir: string;
let file: string;
let sqlite: SQLite.Database;
let checkpointer: Checkpointer;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-ckpt-'));
  file = join(dir, 'db.sqlite');
  sqlite = openSqlite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.exec('create table t (id integer primary key, body blob not null)');
});

afterEach(async () => {
  await checkpointer?.stop();
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

const autocheckpoint = () => sqlite.pragma('wal_autocheckpoint', { simple: true });
const insert = (bytes = 100) => sqlite.prepare('insert into t (body) values (?)').run(Buffer.alloc(bytes, 7));
/**
 * A loaded machine may take long to reach a state: wait for it up to 25 s (under the test's own
 * timeout of 30 s), looking every 20 ms.
 */
const SLOW = { timeoutMs: 25_000, intervalMs: 20 };
/** Tells the checkpointer of a busy second's worth of commits, without writing (keeps it from going idle). */
const stayBusy = () => {
  for (let i = 0; i < 5; i++) checkpointer.committed();
};
/** `n` commits, each told to the checkpointer; stops early once it runs if `untilRunning`. */
const commit = (n: number, untilRunning = false) => {
  for (let i = 0; i < n && !(untilRunning && checkpointer.running); i++) {
    insert();
    checkpointer.committed();
  }
};
/** Commits until the checkpointer is busy (a busy second must not straddle two). */
const makeBusy = () => {
  commit(1000, true);
  expect(checkpointer.running).toBe(true);
};

describe('WAL checkpoints', () => {
  it('quiet: SQLite checkpoints on its own, no thread is started', () => {
    checkpointer = new Checkpointer(sqlite, file, 'NORMAL', { busyCommitsPerSecond: 20 });
    commit(5);
    expect(checkpointer.running).toBe(false);
    expect(autocheckpoint()).toBe(1000);
  });

  it('busy: a worker copies the WAL into the database file; idle, it goes and SQLite checkpoints again', async () => {
    checkpointer = new Checkpointer(sqlite, file, 'NORMAL', {
      busyCommitsPerSecond: 5,
      pollMs: 20,
      // Kept busy (stayBusy) until its checkpoint is seen, so a short idle time cannot end it first.
      idleMs: 300,
    });
    makeBusy();
    expect(autocheckpoint()).toBe(0);
    // 4 MB written: with the main connection's checkpoint off, only the worker can put it in the file.
    const before = statSync(file).size;
    for (let i = 0; i < 4; i++) {
      sqlite.transaction(() => {
        for (let j = 0; j < 256; j++) insert(4000);
      })();
    }
    const walFrames = 1024; // at least one 4 KiB page a row
    // Its own report says when every frame of the WAL is in the file; busy until then.
    await waitFor(
      () => {
        const last = checkpointer.last;
        return last !== null && last.log >= walFrames && last.checkpointed === last.log;
      },
      'every frame of the WAL checkpointed',
      { ...SLOW, meanwhile: stayBusy },
    );
    expect(statSync(file).size).toBeGreaterThan(before + 4_000_000);
    expect(sqlite.prepare('select count(*) as n from t where length(body) = 4000').get()).toEqual({
      n: 1024,
    });
    // Left quiet, it goes, and SQLite checkpoints on its own again.
    await waitFor(() => !checkpointer.running, 'the checkpoint worker to stop', SLOW);
    expect(autocheckpoint()).toBe(1000);
  });

  it('a worker that fails leaves checkpoints to SQLite, and is not tried again at once', async () => {
    // Its connection cannot open: the folder does not exist.
    checkpointer = new Checkpointer(sqlite, join(dir, 'missing', 'db.sqlite'), 'NORMAL', {
      busyCommitsPerSecond: 5,
      pollMs: 20,
    });
    makeBusy();
    await waitFor(() => !checkpointer.running, 'the checkpoint worker to stop', SLOW);
    expect(autocheckpoint()).toBe(1000);
    commit(50);
    expect(checkpointer.running).toBe(false);
    expect(autocheckpoint()).toBe(1000);
  });

  it('the database starts it from its group commits and stops it when closed', async () => {
    const database = openDatabase({ kind: 'sqlite', file: join(dir, 'app.sqlite'), synchronous: 'NORMAL' });
    await sql`create table u (id integer primary key, n integer not null)`.execute(database.db);
    const write = precompile(
      database,
      ['n'] as const,
      // biome-ignore lint/suspicious/noExplicitAny: the test table is outside the typed schema
      (p) => (database.db as any).insertInto('u').values({ n: p.n }),
      { write: true },
    );
    for (let i = 0; i < 2000 && !database.checkpointer!.running; i++) await write.all({ n: i });
    expect(database.checkpointer!.running).toBe(true);
    expect(database.sqlite!.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await database.close();
    expect(database.checkpointer!.running).toBe(false);
  });
});
