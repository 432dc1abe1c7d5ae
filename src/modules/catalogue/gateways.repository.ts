import type { Kysely, Selectable, Updateable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CatalogueTables } from './catalogue.tables.js';

export type GatewayRow = Selectable<CatalogueTables['payment_gateways']>;

/** The built-in gateways are rows seeded by the foundation migration; only their switches change. */
export class GatewaysRepository {
  constructor(private readonly db: Kysely<DB>) {}

  list(): Promise<GatewayRow[]> {
    return this.db.selectFrom('payment_gateways').selectAll().orderBy('position').execute();
  }

  find(id: string): Promise<GatewayRow | undefined> {
    return this.db.selectFrom('payment_gateways').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async update(id: string, values: Updateable<CatalogueTables['payment_gateways']>): Promise<void> {
    await this.db.updateTable('payment_gateways').set(values).where('id', '=', id).execute();
  }
}
