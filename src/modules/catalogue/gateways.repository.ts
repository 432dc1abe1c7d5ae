import type { Kysely, Selectable, Updateable } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { CatalogueTables } from './catalogue.tables.js';

export type GatewayRow = Selectable<CatalogueTables['payment_gateways']>;

/** The built-in gateways are rows seeded by the foundation migration; only their switches change. */
export class GatewaysRepository {
  constructor(private readonly db: Kysely<DB>) {}

  list(tx?: Tx): Promise<GatewayRow[]> {
    return on(this.db, tx).selectFrom('payment_gateways').selectAll().orderBy('position').execute();
  }

  find(id: string, tx?: Tx): Promise<GatewayRow | undefined> {
    return on(this.db, tx).selectFrom('payment_gateways').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async update(id: string, values: Updateable<CatalogueTables['payment_gateways']>, tx?: Tx): Promise<void> {
    await on(this.db, tx).updateTable('payment_gateways').set(values).where('id', '=', id).execute();
  }
}
