import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { isUniqueViolation } from '../../db/errors.js';
import type { DB } from '../../db/schema.js';
import type { CatalogueTables } from './catalogue.tables.js';

export type CouponRow = Selectable<CatalogueTables['coupons']>;
type CouponInsert = Insertable<CatalogueTables['coupons']>;
type CouponUpdate = Updateable<CatalogueTables['coupons']>;

export class CouponsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  find(id: number): Promise<CouponRow | undefined> {
    return this.db.selectFrom('coupons').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByCode(code: string): Promise<CouponRow | undefined> {
    return this.db.selectFrom('coupons').selectAll().where('code', '=', code).executeTakeFirst();
  }

  list(limit: number, offset: number): Promise<CouponRow[]> {
    return this.db
      .selectFrom('coupons')
      .selectAll()
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('coupons')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** undefined when the code is taken: the unique index decides, so concurrent creates stay exact. */
  insert(values: CouponInsert): Promise<CouponRow | undefined> {
    return this.db
      .insertInto('coupons')
      .values(values)
      .onConflict((oc) => oc.column('code').doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  /** false when the new code is taken by another coupon. */
  async update(id: number, values: CouponUpdate): Promise<boolean> {
    try {
      await this.db.updateTable('coupons').set(values).where('id', '=', id).execute();
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }

  async delete(id: number): Promise<boolean> {
    const r = await this.db.deleteFrom('coupons').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
