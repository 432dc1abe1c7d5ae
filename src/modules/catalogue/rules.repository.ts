import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { CatalogueTables } from './catalogue.tables.js';

/** The store's rule lists: read whole, edited a row at a time. */
type RuleTable = 'tax_rates' | 'shipping_zones';
export type RuleRow<T extends RuleTable> = Selectable<CatalogueTables[T]>;

/** Tax rates and shipping zones share their queries; each list keeps its own order. */
export class RulesRepository<T extends RuleTable> {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly table: T,
    private readonly order: readonly ('id' | 'priority')[],
  ) {}

  async list(tx?: Tx): Promise<RuleRow<T>[]> {
    let q = on(this.db, tx)
      .selectFrom(this.table as RuleTable)
      .selectAll();
    for (const column of this.order) q = q.orderBy(column as 'id');
    return (await q.execute()) as RuleRow<T>[];
  }

  async insert(values: Insertable<CatalogueTables[T]>, tx?: Tx): Promise<RuleRow<T>> {
    return (await on(this.db, tx)
      .insertInto(this.table as RuleTable)
      .values(values as Insertable<CatalogueTables[RuleTable]>)
      .returningAll()
      .executeTakeFirstOrThrow()) as RuleRow<T>;
  }

  async find(id: number, tx?: Tx): Promise<RuleRow<T> | undefined> {
    return (await on(this.db, tx)
      .selectFrom(this.table as RuleTable)
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst()) as RuleRow<T> | undefined;
  }

  /** The row as updated, or undefined when there is none. */
  async update(id: number, values: Updateable<CatalogueTables[T]>, tx?: Tx): Promise<RuleRow<T> | undefined> {
    return (await on(this.db, tx)
      .updateTable(this.table as RuleTable)
      .set(values as Updateable<CatalogueTables[RuleTable]>)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()) as RuleRow<T> | undefined;
  }

  async delete(id: number, tx?: Tx): Promise<boolean> {
    const r = await on(this.db, tx)
      .deleteFrom(this.table as RuleTable)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
