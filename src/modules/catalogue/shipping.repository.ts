import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CatalogueTables } from './catalogue.tables.js';

export type ShippingZoneRow = Selectable<CatalogueTables['shipping_zones']>;

export class ShippingRepository {
  constructor(private readonly db: Kysely<DB>) {}

  list(): Promise<ShippingZoneRow[]> {
    return this.db.selectFrom('shipping_zones').selectAll().orderBy('id').execute();
  }

  insert(values: Insertable<CatalogueTables['shipping_zones']>): Promise<ShippingZoneRow> {
    return this.db.insertInto('shipping_zones').values(values).returningAll().executeTakeFirstOrThrow();
  }

  async delete(id: number): Promise<boolean> {
    const r = await this.db.deleteFrom('shipping_zones').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
