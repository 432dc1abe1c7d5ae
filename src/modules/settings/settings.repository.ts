import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';

/** The settings table: one row a setting, its value as JSON text. Queries only. */
export class SettingsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Every stored setting. */
  readAll(tx?: Tx): Promise<{ key: string; value: string }[]> {
    return on(this.db, tx).selectFrom('settings').select(['key', 'value']).execute();
  }

  /** Stores one setting, replacing its value when it is already stored. */
  async put(key: string, value: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .insertInto('settings')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  }
}
