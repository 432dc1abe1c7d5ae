import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';

export interface TrialClaim {
  kind: 'email' | 'site';
  value: string;
}

/** The trials' claims (docs/selling.md, 'Trials'): one per product and email, one per product and site. */
export class TrialRepository {
  private readonly db: Kysely<DB>;

  constructor(database: Pick<Database, 'db'>) {
    this.db = database.db;
  }

  /** Whether any of the claims was made already for the product. */
  async anyClaimed(productId: number, claims: TrialClaim[]): Promise<boolean> {
    for (const c of claims) {
      const row = await this.db
        .selectFrom('trial_claims')
        .select('id')
        .where('product_id', '=', productId)
        .where('kind', '=', c.kind)
        .where('value', '=', c.value)
        .executeTakeFirst();
      if (row) return true;
    }
    return false;
  }

  /** The claims of a trial license, in its transaction; a unique violation means another won. */
  async insertClaims(rows: Insertable<DB['trial_claims']>[], tx: Tx): Promise<void> {
    await on(this.db, tx).insertInto('trial_claims').values(rows).execute();
  }
}
