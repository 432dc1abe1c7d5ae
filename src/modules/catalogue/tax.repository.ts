import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { CatalogueTables } from './catalogue.tables.js';

export type TaxRateRow = Selectable<CatalogueTables['tax_rates']>;

export class TaxRepository {
  constructor(private readonly db: Kysely<DB>) {}

  list(tx?: Tx): Promise<TaxRateRow[]> {
    return on(this.db, tx).selectFrom('tax_rates').selectAll().orderBy('priority').orderBy('id').execute();
  }

  insert(values: Insertable<CatalogueTables['tax_rates']>, tx?: Tx): Promise<TaxRateRow> {
    return on(this.db, tx).insertInto('tax_rates').values(values).returningAll().executeTakeFirstOrThrow();
  }

  async delete(id: number, tx?: Tx): Promise<boolean> {
    const r = await on(this.db, tx).deleteFrom('tax_rates').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
