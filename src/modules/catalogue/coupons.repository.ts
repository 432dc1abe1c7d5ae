import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { isUniqueViolation } from '../../db/errors.js';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { CatalogueTables } from './catalogue.tables.js';

export type CouponRow = Selectable<CatalogueTables['coupons']>;
type CouponInsert = Insertable<CatalogueTables['coupons']>;
type CouponUpdate = Updateable<CatalogueTables['coupons']>;

export class CouponsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  find(id: number, tx?: Tx): Promise<CouponRow | undefined> {
    return on(this.db, tx).selectFrom('coupons').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByCode(code: string, tx?: Tx): Promise<CouponRow | undefined> {
    return on(this.db, tx).selectFrom('coupons').selectAll().where('code', '=', code).executeTakeFirst();
  }

  list(limit: number, offset: number, tx?: Tx): Promise<CouponRow[]> {
    return on(this.db, tx)
      .selectFrom('coupons')
      .selectAll()
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  async count(tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .selectFrom('coupons')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** undefined when the code is taken: the unique index decides, so concurrent creates stay exact. */
  insert(values: CouponInsert, tx?: Tx): Promise<CouponRow | undefined> {
    return on(this.db, tx)
      .insertInto('coupons')
      .values(values)
      .onConflict((oc) => oc.column('code').doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  /** false when the new code is taken by another coupon. */
  async update(id: number, values: CouponUpdate, tx?: Tx): Promise<boolean> {
    try {
      await on(this.db, tx).updateTable('coupons').set(values).where('id', '=', id).execute();
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }

  async delete(id: number, tx?: Tx): Promise<boolean> {
    const r = await on(this.db, tx).deleteFrom('coupons').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
