import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forUpdate, withTransaction } from '../../src/db/transaction.js';
import { dialectUnderTest, freshDatabase, type TestDatabase } from '../helpers/db.js';

// The transaction convention of docs/development.md ('Transactions'), on the database under test.
describe('withTransaction', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(() => t.drop());

  const read = async (key: string) =>
    (await t.database.db.selectFrom('app_state').select('value').where('key', '=', key).executeTakeFirst())
      ?.value;

  it('commits what the callback wrote when it returns, and answers its value', async () => {
    const value = await withTransaction(t.database, async (tx) => {
      await tx.insertInto('app_state').values({ key: 'tx-commit', value: 'one' }).execute();
      return 42;
    });
    expect(value).toBe(42);
    expect(await read('tx-commit')).toBe('one');
  });

  it('rolls back when the callback throws, and passes its error on', async () => {
    const failure = new Error('step failed');
    await expect(
      withTransaction(t.database, async (tx) => {
        await tx.insertInto('app_state').values({ key: 'tx-rollback', value: 'one' }).execute();
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await read('tx-rollback')).toBeUndefined();
  });

  it('refuses the root connection inside an open transaction, and allows it again once the transaction ends', async () => {
    let inner: unknown = null;
    await expect(
      withTransaction(t.database, async (tx) => {
        await tx.insertInto('app_state').values({ key: 'tx-guard', value: 'one' }).execute();
        try {
          await t.database.db.selectFrom('app_state').select('value').execute();
        } catch (e) {
          inner = e;
          throw e;
        }
      }),
    ).rejects.toThrow(/root connection/);
    expect(inner).toBeInstanceOf(Error);
    // The transaction rolled back, and the root connection answers again.
    expect(await read('tx-guard')).toBeUndefined();
  });

  it('lets the named steps wrap BEGIN and COMMIT, so a caller can give their failures its own codes', async () => {
    const seen: string[] = [];
    await withTransaction(
      t.database,
      async (tx) => {
        seen.push('body');
        await tx.insertInto('app_state').values({ key: 'tx-steps', value: 'one' }).execute();
      },
      {
        begin: async (run) => {
          seen.push('begin');
          return run();
        },
        commit: async (run) => {
          seen.push('commit');
          return run();
        },
      },
    );
    expect(seen).toEqual(['begin', 'body', 'commit']);
    const commitFailure = new Error('commit refused');
    await expect(
      withTransaction(
        t.database,
        async (tx) => {
          await tx.insertInto('app_state').values({ key: 'tx-commit-fails', value: 'one' }).execute();
        },
        {
          commit: async () => {
            throw commitFailure;
          },
        },
      ),
    ).rejects.toBe(commitFailure);
    // The commit did not run, so the transaction was rolled back.
    expect(await read('tx-commit-fails')).toBeUndefined();
  });

  it.runIf(dialectUnderTest === 'postgres')(
    'forUpdate holds the row on PostgreSQL until the transaction ends',
    async () => {
      await t.database.db.insertInto('app_state').values({ key: 'tx-lock', value: '0' }).execute();
      const order: string[] = [];
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => {
        locked = r;
      });
      const first = withTransaction(t.database, async (tx) => {
        await tx
          .selectFrom('app_state')
          .select('value')
          .where('key', '=', 'tx-lock')
          .$call(forUpdate('postgres'))
          .execute();
        locked();
        await held;
        order.push('first');
      });
      await isLocked;
      const second = withTransaction(t.database, async (tx) => {
        await tx
          .selectFrom('app_state')
          .select('value')
          .where('key', '=', 'tx-lock')
          .$call(forUpdate('postgres'))
          .execute();
        order.push('second');
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(order).toEqual([]);
      release();
      await Promise.all([first, second]);
      expect(order).toEqual(['first', 'second']);
    },
  );
});
