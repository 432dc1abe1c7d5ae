import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { OAuthTables } from './oauth.tables.js';

export type TokenRow = Selectable<OAuthTables['oauth_activation_tokens']>;

/** Activation-token queries: looked up and claimed by hash only. */
export class OAuthRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async insertToken(values: Insertable<OAuthTables['oauth_activation_tokens']>, tx?: Tx): Promise<void> {
    await on(this.db, tx).insertInto('oauth_activation_tokens').values(values).execute();
  }

  /** Tokens long past their lifetime are of no use to anyone: removed as new ones are issued. */
  async deleteExpiredBefore(cutoff: string, tx?: Tx): Promise<void> {
    await on(this.db, tx).deleteFrom('oauth_activation_tokens').where('expires_at', '<', cutoff).execute();
  }

  findByHash(tokenHash: string, tx?: Tx): Promise<TokenRow | undefined> {
    return on(this.db, tx)
      .selectFrom('oauth_activation_tokens')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  /**
   * The single-use guarantee: only the one UPDATE that finds `used_at` still empty claims the
   * token; every other concurrent exchange updates 0 rows (and on PostgreSQL waits for the row).
   */
  async claim(id: number, now: string, tx?: Tx): Promise<boolean> {
    const result = await on(this.db, tx)
      .updateTable('oauth_activation_tokens')
      .set({ used_at: now })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
