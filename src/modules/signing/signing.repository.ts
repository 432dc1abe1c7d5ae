import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, Dialect } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { forUpdate, on, type Tx } from '../../db/transaction.js';
import type { SigningTables } from './signing.tables.js';

export type SigningKeyRow = Selectable<SigningTables['signing_keys']>;
export type NewSigningKey = Insertable<SigningTables['signing_keys']>;

/** The public columns: what any answer may show (never the sealed private key). */
const PUBLIC_COLUMNS = ['id', 'key_id', 'algorithm', 'public_key', 'created_at', 'retired_at'] as const;
export type PublicSigningKeyRow = Pick<SigningKeyRow, (typeof PUBLIC_COLUMNS)[number]>;

export class SigningRepository {
  private readonly db: Kysely<DB>;
  private readonly dialect: Dialect;

  constructor(database: Pick<Database, 'db' | 'dialect'>) {
    this.db = database.db;
    this.dialect = database.dialect;
  }

  /** Every key, newest first, without private material. */
  list(tx?: Tx): Promise<PublicSigningKeyRow[]> {
    return on(this.db, tx).selectFrom('signing_keys').select(PUBLIC_COLUMNS).orderBy('id', 'desc').execute();
  }

  /** The active key of an algorithm, with its sealed private key. */
  active(algorithm: string, tx?: Tx): Promise<SigningKeyRow | undefined> {
    return on(this.db, tx)
      .selectFrom('signing_keys')
      .selectAll()
      .where('algorithm', '=', algorithm)
      .where('retired_at', 'is', null)
      .executeTakeFirst();
  }

  /** The active key, locked until the transaction ends (PostgreSQL; SQLite has one writer). */
  lockActive(algorithm: string, tx: Tx): Promise<PublicSigningKeyRow | undefined> {
    return tx
      .selectFrom('signing_keys')
      .select(PUBLIC_COLUMNS)
      .where('algorithm', '=', algorithm)
      .where('retired_at', 'is', null)
      .$call(forUpdate(this.dialect))
      .executeTakeFirst();
  }

  /** A unique violation when another key of the algorithm is active, or the key id is taken. */
  async insert(row: NewSigningKey, tx?: Tx): Promise<void> {
    await on(this.db, tx).insertInto('signing_keys').values(row).execute();
  }

  /** The keys that still have a private half (sealed with the vault key). */
  withPrivateHalf(): Promise<{ id: number; key_id: string; private_key: string | null }[]> {
    return this.db
      .selectFrom('signing_keys')
      .select(['id', 'key_id', 'private_key'])
      .where('private_key', 'is not', null)
      .orderBy('id')
      .execute();
  }

  /** Replaces a key's sealed private half if it is still `before`; false when it changed. */
  async resealPrivateHalf(keyId: string, before: string, after: string, tx: Tx): Promise<boolean> {
    const result = await tx
      .updateTable('signing_keys')
      .set({ private_key: after })
      .where('key_id', '=', keyId)
      .where('private_key', '=', before)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Retires a key and drops its private half: from now on it only verifies. */
  async retire(id: number, at: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('signing_keys')
      .set({ retired_at: at, private_key: null })
      .where('id', '=', id)
      .where('retired_at', 'is', null)
      .execute();
  }
}
