import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { OAuthTables } from './oauth.tables.js';

export type TokenRow = Selectable<OAuthTables['oauth_activation_tokens']>;

/** Activation-token queries: looked up and claimed by hash only. */
export class OAuthRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async insertToken(values: Insertable<OAuthTables['oauth_activation_tokens']>): Promise<void> {
    await this.db.insertInto('oauth_activation_tokens').values(values).execute();
  }

  /** Tokens long past their lifetime are of no use to anyone: removed as new ones are issued. */
  async deleteExpiredBefore(cutoff: string): Promise<void> {
    await this.db.deleteFrom('oauth_activation_tokens').where('expires_at', '<', cutoff).execute();
  }

  findByHash(db: Kysely<DB>, tokenHash: string): Promise<TokenRow | undefined> {
    return db
      .selectFrom('oauth_activation_tokens')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
  }

  /**
   * The single-use guarantee: only the one UPDATE that finds `used_at` still empty claims the
   * token; every other concurrent exchange updates 0 rows (and on PostgreSQL waits for the row).
   */
  async claim(db: Kysely<DB>, id: number, now: string): Promise<boolean> {
    const result = await db
      .updateTable('oauth_activation_tokens')
      .set({ used_at: now })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
