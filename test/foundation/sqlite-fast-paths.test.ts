import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Database,
  equalitiesUnplanned,
  openDatabase,
  prepareRows,
  rowBuilder,
} from '../../src/db/database.js';
import { precompile } from '../../src/db/precompiled.js';
import { openSqlite } from '../../src/db/sqlite.js';

// The SQLite-only shortcuts of src/db: rows built from raw arrays, precompiled reads that never see
// another request's open transaction, the reads and the writes of one turn batched in one
// transaction each (src/db/batch.ts), and mapped reads. They run on a SQLite file whichever
// database the rest of the suite uses.

let dir: string;
let database: Database;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-fast-'));
  database = openDatabase({ kind: 'sqlite', file: join(dir, 'db.sqlite'), synchronous: 'NORMAL' });
  await sql`create table t (id integer primary key, name text unique not null, n integer not null default 0)`.execute(
    database.db,
  );
});

afterEach(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: the test table is outside the typed schema
const db = () => database.db as any;

const insertOne = () =>
  precompile(
    database,
    ['name'] as const,
    (p) => db().insertInto('t').values({ name: p.name }).returning(['id', 'name']),
    {
      write: true,
    },
  );

describe('rows built from raw arrays', () => {
  it('gives the same objects as better-sqlite3, including a repeated column name keeping its last value', () => {
    const raw = openSqlite(':memory:');
    raw.exec(
      `create table a (x integer, y text, z blob, w real); insert into a values (1, 'one', x'00ff', 1.5), (2, null, null, null)`,
    );
    const query = 'select x, y, z, w, x as y from a order by x';
    expect(prepareRows(raw, query).all()).toEqual(raw.prepare(query).all());
    expect(prepareRows(raw, query).get()).toEqual(raw.prepare(query).get());
    expect([...(prepareRows(raw, query).iterate() as Iterable<unknown>)]).toEqual(raw.prepare(query).all());
    expect(prepareRows(raw, 'select x from a where x = 99').get()).toBeUndefined();
    raw.close();
  });

  it('keeps column names that are not identifiers, and never lets one set the prototype', () => {
    const raw = openSqlite(':memory:');
    const query = `select 1 as "__proto__", 2 as "it's", 3 as "a\\b""c", 4 as "}; throw 1; ({", 5 as "constructor"`;
    const row = prepareRows(raw, query).get() as Record<string, unknown>;
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.entries(row)).toEqual([
      ['__proto__', 1],
      ["it's", 2],
      ['a\\b"c', 3],
      ['}; throw 1; ({', 4],
      ['constructor', 5],
    ]);
    raw.close();
  });

  it('never runs a column name as code (the row builder is generated code)', () => {
    const scope = globalThis as { injected?: unknown };
    const attacks = [
      '}; globalThis.injected = 1; ({',
      '"}); globalThis.injected = 2; ({"',
      "'+(globalThis.injected = 3)+'",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a name that would run if it became a template
      '`${globalThis.injected = 4}`',
      '\\"]: (globalThis.injected = 5), [\\"',
      'a\n}; globalThis.injected = 6; ({ b',
      'a\u2028}; globalThis.injected = 7; ({ b',
      '*/ globalThis.injected = 8; /*',
      '// }; globalThis.injected = 9; ({',
      '</script><script>globalThis.injected = 10</script>',
    ];
    const values = attacks.map((_, i) => i);
    const row = rowBuilder(attacks)(values);
    expect(scope.injected).toBeUndefined();
    expect(Object.keys(row)).toEqual(attacks);
    expect(Object.values(row)).toEqual(values);
    // The same names, as SQLite reports them for a query's columns.
    const raw = openSqlite(':memory:');
    const query = `select ${attacks.map((name, i) => `${i} as "${name.replaceAll('"', '""')}"`).join(', ')}`;
    expect(prepareRows(raw, query).get()).toEqual(row);
    expect(scope.injected).toBeUndefined();
    raw.close();
  });
});

describe('equality parameters the query planner does not look at (SQLite 3.54 planned each join again on every run)', () => {
  it('writes `= ?`, `== ?` and `is ?` as `= +?`, and nothing else: not other comparisons, strings, names or comments', () => {
    const cases: [string, string][] = [
      ['select * from "t" where "id" = ?', 'select * from "t" where "id" = +?'],
      [
        'select * from t where a=? and b == ? and c is ? and d IS\n ?',
        'select * from t where a=+? and b == +? and c is +? and d IS\n +?',
      ],
      [
        'update "t" set "n" = ? where "id" = ? and "n" < ?',
        'update "t" set "n" = +? where "id" = +? and "n" < ?',
      ],
      [
        'select 1 where a <= ? or a >= ? or a != ? or a <> ? or a in (?, ?) or a like ? or a is not ? or this ?',
        'select 1 where a <= ? or a >= ? or a != ? or a <> ? or a in (?, ?) or a like ? or a is not ? or this ?',
      ],
      ["select 'a = ?', 'it''s = ?' from t where x = ?", "select 'a = ?', 'it''s = ?' from t where x = +?"],
      [
        'select "col = ?" from t where "weird "" name" = ?',
        'select "col = ?" from t where "weird "" name" = +?',
      ],
      [
        "select 1 -- don't = ?\nwhere a = ? /* b = ? 'c */ and b = ?",
        "select 1 -- don't = ?\nwhere a = +? /* b = ? 'c */ and b = +?",
      ],
      ["select 'unterminated = ?", "select 'unterminated = ?"],
      ['select ?, ? = 1', 'select ?, ? = 1'],
    ];
    for (const [source, expected] of cases) expect(equalitiesUnplanned(source)).toBe(expected);
  });

  it('compares every kind of value with every column affinity as the bare parameter does', () => {
    const raw = openSqlite(':memory:');
    raw.exec(`create table v (i integer, t text, r real, b blob, n numeric, x);
      insert into v values (5, '5', 5.0, x'35', 5, 5), (0, 'abc', 0.5, x'00ff', '7.0', 'abc'),
        (null, null, null, null, null, null), (1, '1', 1.0, x'01', 1, x'01')`);
    const values = [
      5,
      '5',
      5.0,
      0,
      1,
      '1',
      'abc',
      0.5,
      '7.0',
      7,
      null,
      Buffer.from('5'),
      Buffer.from([0, 255]),
      5n,
    ];
    for (const column of ['i', 't', 'r', 'b', 'n', 'x']) {
      for (const op of ['=', 'is']) {
        const query = `select rowid from v where ${column} ${op} ? order by rowid`;
        for (const value of values) {
          expect(prepareRows(raw, query).all([value])).toEqual(raw.prepare(query).all(value));
        }
      }
    }
    const join = 'select a.rowid as a, b.rowid as b from v a join v b on b.i = a.i where a.t = ? and b.x = ?';
    expect(prepareRows(raw, join).all(['5', 5])).toEqual([{ a: 1, b: 1 }]);
    raw.close();
  });

  it('so a partial index is chosen only from a literal in the SQL, as the repositories write such conditions', () => {
    const raw = openSqlite(':memory:');
    raw.exec(
      'create table p (id integer primary key, k integer, flag integer); create index p_flagged on p (k) where flag = 1',
    );
    const plan = (query: string, ...values: unknown[]) =>
      (raw.prepare(`explain query plan ${query}`).all(...values) as { detail: string }[])
        .map((r) => r.detail)
        .join();
    const bound = 'select id from p where k = ? and flag = ?';
    expect(plan(bound, 3, 1)).toContain('p_flagged');
    expect(plan(equalitiesUnplanned(bound), 3, 1)).not.toContain('p_flagged');
    expect(plan(equalitiesUnplanned('select id from p where k = ? and flag = 1'), 3)).toContain('p_flagged');
    raw.close();
  });
});

describe('precompile refuses a query whose placeholders are not each a parameter', () => {
  it('a placeholder left out, inlined into the SQL, or built into a larger value', () => {
    expect(() =>
      precompile(database, ['name', 'n'] as const, (p) =>
        db().selectFrom('t').selectAll().where('name', '=', p.name),
      ),
    ).toThrow(/placeholder n is not bound/);
    expect(() =>
      precompile(database, ['name'] as const, (p) =>
        db().selectFrom('t').selectAll().where('name', '=', sql.lit(p.name)),
      ),
    ).toThrow(/not bound/);
    expect(() =>
      precompile(database, ['name'] as const, (p) =>
        db().selectFrom('t').selectAll().where('name', '=', `x${p.name}`),
      ),
    ).toThrow(/not bound/);
    // Used twice is fine: each use is its own parameter.
    expect(() =>
      precompile(database, ['name'] as const, (p) =>
        db().selectFrom('t').selectAll().where('name', '=', p.name).where('name', '>=', p.name),
      ),
    ).not.toThrow();
  });
});

describe('precompiled reads', () => {
  it('do not read what another request has written in a transaction it has not committed', async () => {
    const read = precompile(database, ['name'] as const, (p) =>
      db().selectFrom('t').selectAll().where('name', '=', p.name),
    );
    const trx = await database.db.startTransaction().execute();
    await sql`insert into t (name) values ('pending')`.execute(trx);
    // The transaction holds the connection across an await: the read waits for it to finish.
    const seen = read.first({ name: 'pending' });
    await trx.rollback().execute();
    expect(await seen).toBeUndefined();
    await sql`insert into t (name) values ('committed')`.execute(database.db);
    expect(await read.first({ name: 'committed' })).toMatchObject({ name: 'committed' });
  });
});

describe('batched reads', () => {
  const byName = () =>
    precompile(database, ['name'] as const, (p) =>
      db().selectFrom('t').selectAll().where('name', '=', p.name),
    );

  it('run the reads of one turn in one read transaction and answer each caller its own row', async () => {
    await db()
      .insertInto('t')
      .values(Array.from({ length: 50 }, (_, i) => ({ name: `row-${i + 1}`, n: i + 1 })))
      .execute();
    // Records, for each row SQLite reads through it, whether a transaction was open.
    const inTransaction: boolean[] = [];
    database.sqlite!.function('probe', (n: number) => {
      inTransaction.push(database.sqlite!.inTransaction);
      return n;
    });
    const read = precompile(database, ['name'] as const, (p) =>
      db()
        .selectFrom('t')
        .select(['name', sql<number>`probe(n)`.as('n')])
        .where('name', '=', p.name),
    );
    const names = [...Array.from({ length: 50 }, (_, i) => `row-${50 - i}`), 'absent', 'row-7'];
    const rows = await Promise.all(names.map((name) => read.first({ name })));
    expect(rows).toEqual(
      names.map((name) => (name === 'absent' ? undefined : { name, n: Number(name.slice(4)) })),
    );
    expect(inTransaction).toHaveLength(51);
    expect(inTransaction.every(Boolean)).toBe(true);
    expect(database.sqlite!.inTransaction).toBe(false);
  });

  it('reject only the read that fails; the others of its turn are answered', async () => {
    await sql`insert into t (name) values ('kept')`.execute(database.db);
    const read = byName();
    // abs() of the smallest 64-bit integer is an integer overflow: an error while the read runs.
    const failing = precompile(database, ['x'] as const, (p) =>
      db().selectFrom('t').select(sql`abs(${p.x})`.as('a')),
    );
    const results = await Promise.allSettled([
      read.first({ name: 'kept' }),
      failing.first({ x: -9223372036854775808n }),
      read.first({ name: 'kept' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results[0]).toMatchObject({ value: { name: 'kept' } });
    expect(results[2]).toMatchObject({ value: { name: 'kept' } });
    expect(database.sqlite!.inTransaction).toBe(false);
    expect(await read.first({ name: 'kept' })).toMatchObject({ name: 'kept' });
  });

  it('never keep a snapshot past their turn: a write by another connection is seen by the next read', async () => {
    const read = byName();
    expect(await read.first({ name: 'elsewhere' })).toBeUndefined();
    const other = openSqlite(join(dir, 'db.sqlite'));
    try {
      other.prepare(`insert into t (name, n) values ('elsewhere', 3)`).run();
      expect(await read.first({ name: 'elsewhere' })).toMatchObject({ name: 'elsewhere', n: 3 });
    } finally {
      other.close();
    }
  });
});

describe('mapped reads', () => {
  it('are on, and see what another connection writes, before and after its checkpoints', async () => {
    // The value in effect: 2 GiB capped at SQLite's compile-time maximum (0 would turn mapping off).
    expect(database.sqlite!.pragma('mmap_size', { simple: true })).toBe(0x7fff0000);
    const read = precompile(database, [] as const, () =>
      db()
        .selectFrom('t')
        .select([sql<number>`count(*)`.as('rows'), sql<number>`sum(n)`.as('total')]),
    );
    expect(await read.first({})).toEqual({ rows: 0, total: null });
    const other = openSqlite(join(dir, 'db.sqlite'));
    try {
      const insert = other.prepare('insert into t (name, n) values (?, 1)');
      other.transaction(() => {
        for (let i = 0; i < 5000; i++) insert.run(`row ${i} ${'x'.repeat(200)}`);
      })();
      expect(await read.first({})).toEqual({ rows: 5000, total: 5000 });
      other.pragma('wal_checkpoint(TRUNCATE)');
      expect(await read.first({})).toEqual({ rows: 5000, total: 5000 });
      other.prepare('update t set n = 2 where id % 2 = 0').run();
      other.pragma('wal_checkpoint(TRUNCATE)');
      expect(await read.first({})).toEqual({ rows: 5000, total: 7500 });
      other.prepare('delete from t where id > 1000').run();
      other.pragma('wal_checkpoint(TRUNCATE)');
      other.exec('vacuum');
      expect(await read.first({})).toEqual({ rows: 1000, total: 1500 });
    } finally {
      other.close();
    }
  });
});

describe('group commit', () => {
  it('commits writes of the same turn together and answers each caller its own rows', async () => {
    const insert = insertOne();
    const names = Array.from({ length: 20 }, (_, i) => `row-${i}`);
    const rows = await Promise.all(names.map((name) => insert.first({ name })));
    expect(rows.map((r) => (r as { name: string }).name)).toEqual(names);
    const count = await sql<{ n: number }>`select count(*) as n from t`.execute(database.db);
    expect(count.rows[0]!.n).toBe(20);
  });

  it('rejects only the statement that fails; the rest of the batch is committed', async () => {
    const insert = insertOne();
    const results = await Promise.allSettled([
      insert.first({ name: 'a' }),
      insert.first({ name: 'a' }), // unique violation
      insert.first({ name: 'b' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const names = await sql<{ name: string }>`select name from t order by name`.execute(database.db);
    expect(names.rows.map((r) => r.name)).toEqual(['a', 'b']);
  });

  it('waits for a transaction another request holds, and is not rolled back with it', async () => {
    const insert = insertOne();
    const trx = await database.db.startTransaction().execute();
    await sql`insert into t (name) values ('theirs')`.execute(trx);
    const ours = insert.first({ name: 'ours' });
    await new Promise((r) => setImmediate(r));
    await trx.rollback().execute();
    expect(await ours).toMatchObject({ name: 'ours' });
    const names = await sql<{ name: string }>`select name from t`.execute(database.db);
    expect(names.rows.map((r) => r.name)).toEqual(['ours']);
  });
});
