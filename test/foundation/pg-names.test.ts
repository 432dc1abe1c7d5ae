import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StatementNames, statementName } from '../../src/db/pg-names.js';
import { precompile } from '../../src/db/precompiled.js';
import { withTransaction } from '../../src/db/transaction.js';
import { dialectUnderTest, freshDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * src/db/pg-names.ts: Kysely's queries that repeat run as named prepared statements on PostgreSQL,
 * and a statement left stale by a change of its table (a migration run by another instance) is
 * prepared again instead of failing every request on that connection.
 */
describe('which texts are named', () => {
  it('a data statement from its second run, under its digest; never transaction control, DDL or several statements', () => {
    const names = new StatementNames();
    const text = 'select * from "licenses" where "id" = $1';
    expect(names.nameOf(text)).toBeUndefined();
    expect(names.nameOf(text)).toBe(statementName(text));
    expect(names.nameOf(text)).toBe(statementName(text));
    for (const other of [
      'begin',
      'commit',
      'rollback',
      'alter table x add column y int',
      'select 1; select 2',
    ]) {
      names.nameOf(other);
      expect(names.nameOf(other), other).toBeUndefined();
    }
    expect(names.size).toBe(1);
  });

  it('names at most its budget of texts, and keeps naming those', () => {
    const names = new StatementNames(3);
    const texts = Array.from({ length: 5 }, (_, i) => `select ${i} where $1::int > 0`);
    for (const t of texts) names.nameOf(t);
    expect(texts.map((t) => names.nameOf(t) !== undefined)).toEqual([true, true, true, false, false]);
    expect(names.nameOf(texts[0]!)).toBe(statementName(texts[0]!));
  });
});

describe.runIf(dialectUnderTest === 'postgres')('named statements on PostgreSQL', () => {
  let d: TestDatabase;
  const sent: string[] = [];
  const query = pg.Client.prototype.query;

  beforeAll(async () => {
    d = await freshDatabase();
    await sql`create table shapes (id int primary key, a int)`.execute(d.database.db);
    await sql`insert into shapes values (1, 10)`.execute(d.database.db);
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text: string; name?: string };
      sent.push(typeof config === 'string' ? config : `${config.name ?? ''} ${config.text}`);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
  });
  afterEach(() => {
    sent.length = 0;
  });
  afterAll(async () => {
    pg.Client.prototype.query = query;
    await d.drop();
  });

  const read = (tx?: Parameters<Parameters<typeof withTransaction>[1]>[0]) =>
    (tx ?? d.database.db)
      .selectFrom('shapes' as never)
      .selectAll()
      .execute() as Promise<Record<string, unknown>[]>;

  it("Kysely's repeated query goes named from its second run", async () => {
    await read();
    await read();
    await read();
    expect(sent.map((s) => s.startsWith('tg_'))).toEqual([false, true, true]);
  });

  it('a statement left stale by a new column is prepared again, and answers with the column', async () => {
    await read();
    // Another instance's migration: on a connection of its own.
    const other = new pg.Client({ connectionString: (d.config as { url: string }).url });
    await other.connect();
    await other.query('alter table shapes add column b int default 7');
    sent.length = 0;
    expect(await read()).toEqual([{ id: 1, a: 10, b: 7 }]);
    expect(sent.some((s) => s.startsWith('deallocate'))).toBe(true);

    // Inside a transaction the statement fails (the transaction is lost either way), and the
    // connection is closed at its release; the next read works.
    await other.query('alter table shapes add column c int default 8');
    await other.end();
    await expect(withTransaction(d.database, async (tx) => read(tx))).rejects.toMatchObject({
      code: '0A000',
    });
    expect(await read()).toEqual([{ id: 1, a: 10, b: 7, c: 8 }]);
  });

  it('a precompiled statement left stale is prepared again on the next connection', async () => {
    const byId = precompile(d.database, ['id'] as const, (p) => ({
      compile: () =>
        sql<Record<string, unknown>>`select * from shapes where id = ${p.id}::int`.compile(d.database.db),
    }));
    expect(await byId.first({ id: 1 })).toMatchObject({ id: 1, a: 10 });
    const other = new pg.Client({ connectionString: (d.config as { url: string }).url });
    await other.connect();
    await other.query('alter table shapes add column e int default 9');
    await other.end();
    expect(await byId.first({ id: 1 })).toMatchObject({ id: 1, a: 10, e: 9 });
  });
});
