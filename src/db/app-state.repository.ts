import type { Kysely } from 'kysely';
import type { DB } from './schema.js';
import { on, type Tx } from './transaction.js';

/** The `app_state` table: named values the server keeps for itself (secrets, the test clock). */
export class AppStateRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async get(key: string, tx?: Tx): Promise<string | undefined> {
    const row = await on(this.db, tx)
      .selectFrom('app_state')
      .select('value')
      .where('key', '=', key)
      .executeTakeFirst();
    return row?.value;
  }

  async set(key: string, value: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .insertInto('app_state')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  }

  /** Stores the value unless the key has one already (the first writer wins). */
  async setIfAbsent(key: string, value: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .insertInto('app_state')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
  }
}
