import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { CatalogueTables } from './catalogue.tables.js';

export type ShippingZoneRow = Selectable<CatalogueTables['shipping_zones']>;

export class ShippingRepository {
  constructor(private readonly db: Kysely<DB>) {}

  list(tx?: Tx): Promise<ShippingZoneRow[]> {
    return on(this.db, tx).selectFrom('shipping_zones').selectAll().orderBy('id').execute();
  }

  insert(values: Insertable<CatalogueTables['shipping_zones']>, tx?: Tx): Promise<ShippingZoneRow> {
    return on(this.db, tx)
      .insertInto('shipping_zones')
      .values(values)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async delete(id: number, tx?: Tx): Promise<boolean> {
    const r = await on(this.db, tx).deleteFrom('shipping_zones').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
