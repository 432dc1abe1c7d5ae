import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { Database, Dialect } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { forUpdate, on, type Tx } from '../../db/transaction.js';

/** A literal, as the partial index license_transfers_pending says it (src/db/database.ts, equalitiesUnplanned). */
const PENDING = sql.lit<'pending'>('pending');

export type TransferRow = Selectable<DB['license_transfers']>;

/** A transfer with what its pages show: the license's product and the sender's email. */
export type TransferDetail = TransferRow & { product_name: string | null; from_email: string | null };

/** License transfers (docs/selling.md, 'Transfers'). */
export class TransferRepository {
  private readonly db: Kysely<DB>;
  private readonly dialect: Dialect;

  constructor(database: Pick<Database, 'db' | 'dialect'>) {
    this.db = database.db;
    this.dialect = database.dialect;
  }

  private details(tx?: Tx) {
    return on(this.db, tx)
      .selectFrom('license_transfers as t')
      .leftJoin('licenses as l', 'l.id', 't.license_id')
      .leftJoin('products as p', 'p.id', 'l.product_id')
      .leftJoin('users as u', 'u.id', 't.from_user_id')
      .selectAll('t')
      .select(['p.name as product_name', 'u.email as from_email']);
  }

  async insert(values: Insertable<DB['license_transfers']>, tx: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .insertInto('license_transfers')
      .values(values)
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  findById(id: number, tx?: Tx): Promise<TransferRow | undefined> {
    return on(this.db, tx)
      .selectFrom('license_transfers')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
  }

  private byToken(tokenHash: string, tx: Tx) {
    return on(this.db, tx).selectFrom('license_transfers').selectAll().where('token_hash', '=', tokenHash);
  }

  findByToken(tokenHash: string, tx: Tx): Promise<TransferRow | undefined> {
    return this.byToken(tokenHash, tx).executeTakeFirst();
  }

  /** The offer a link names, locked (PostgreSQL) so that parallel accepts of it run one at a time. */
  lockByToken(tokenHash: string, tx: Tx): Promise<TransferRow | undefined> {
    return this.byToken(tokenHash, tx).$call(forUpdate(this.dialect)).executeTakeFirst();
  }

  detailByToken(tokenHash: string): Promise<TransferDetail | undefined> {
    return this.details().where('t.token_hash', '=', tokenHash).executeTakeFirst();
  }

  /** A license's offers, newest first. */
  listOfLicense(licenseId: number): Promise<TransferRow[]> {
    return this.db
      .selectFrom('license_transfers')
      .selectAll()
      .where('license_id', '=', licenseId)
      .orderBy('id', 'desc')
      .limit(100)
      .execute();
  }

  /** The pending offers of the licenses a customer owns now. */
  pendingOfOwner(userId: number): Promise<TransferRow[]> {
    return this.db
      .selectFrom('license_transfers as t')
      .innerJoin('licenses as l', 'l.id', 't.license_id')
      .selectAll('t')
      .where('l.user_id', '=', userId)
      .where('t.status', '=', PENDING)
      .orderBy('t.id', 'desc')
      .execute();
  }

  /** Moves a pending offer on (accepted, cancelled, replaced); false when it was no longer pending. */
  async settle(id: number, patch: Updateable<DB['license_transfers']>, tx: Tx): Promise<boolean> {
    const r = await on(this.db, tx)
      .updateTable('license_transfers')
      .set(patch)
      .where('id', '=', id)
      .where('status', '=', PENDING)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** The pending offer of a license, if any, in the caller's transaction. */
  pendingOf(licenseId: number, tx: Tx): Promise<TransferRow | undefined> {
    return on(this.db, tx)
      .selectFrom('license_transfers')
      .selectAll()
      .where('license_id', '=', licenseId)
      .where('status', '=', PENDING)
      .executeTakeFirst();
  }

  /** A fresh link for a pending, unexpired offer: its hash replaces the last one. */
  async setToken(id: number, tokenHash: string, now: string): Promise<boolean> {
    const r = await this.db
      .updateTable('license_transfers')
      .set({ token_hash: tokenHash, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', PENDING)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
