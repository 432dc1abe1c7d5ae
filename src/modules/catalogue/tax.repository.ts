import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CatalogueTables } from './catalogue.tables.js';

export type TaxRateRow = Selectable<CatalogueTables['tax_rates']>;

export class TaxRepository {
  constructor(private readonly db: Kysely<DB>) {}

  list(): Promise<TaxRateRow[]> {
    return this.db.selectFrom('tax_rates').selectAll().orderBy('priority').orderBy('id').execute();
  }

  insert(values: Insertable<CatalogueTables['tax_rates']>): Promise<TaxRateRow> {
    return this.db.insertInto('tax_rates').values(values).returningAll().executeTakeFirstOrThrow();
  }

  async delete(id: number): Promise<boolean> {
    const r = await this.db.deleteFrom('tax_rates').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
