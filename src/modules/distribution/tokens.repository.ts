import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, Dialect } from '../../db/database.js';
import { type Precompiled, precompile } from '../../db/precompiled.js';
import type { DB } from '../../db/schema.js';
import { forUpdate, on, type Tx } from '../../db/transaction.js';
import type { DistributionTables } from './distribution.tables.js';

export type TokenRow = Selectable<DistributionTables['download_tokens']>;
export type NewToken = Insertable<DistributionTables['download_tokens']>;

/** The token row's columns, in the order the issuance statement takes them. */
const TOKEN_COLUMNS = [
  'token_hash',
  'binding_version',
  'policy',
  'product_id',
  'release_id',
  'artifact_id',
  'artifact_sha256',
  'purpose',
  'license_id',
  'activation_id',
  'activation_revision',
  'identity_key',
  'installation_id',
  'domain_normalized',
  'created_at',
  'expires_at',
  'used_at',
  'invalidated_at',
  'invalidated_reason',
] as const satisfies readonly (keyof NewToken)[];

/** Each column's PostgreSQL type, for the arrays of the batched insert. */
const TOKEN_TYPES: Record<(typeof TOKEN_COLUMNS)[number], string> = {
  token_hash: 'text',
  binding_version: 'int4',
  policy: 'text',
  product_id: 'int4',
  release_id: 'int4',
  artifact_id: 'int4',
  artifact_sha256: 'text',
  purpose: 'text',
  license_id: 'int4',
  activation_id: 'int4',
  activation_revision: 'int4',
  identity_key: 'text',
  installation_id: 'text',
  domain_normalized: 'text',
  created_at: 'text',
  expires_at: 'text',
  used_at: 'text',
  invalidated_at: 'text',
  invalidated_reason: 'text',
};

/** How many ids one statement names at most. */
const ID_SLICE = 500;

/** Every download-token query. Rows are locked FOR UPDATE on PostgreSQL. */
export class TokensRepository {
  private readonly db: Kysely<DB>;
  private readonly dialect: Dialect;
  /** The issuance hot path's insert, compiled once (src/db/precompiled.ts); it joins SQLite's group commit. */
  private readonly insertToken: Precompiled<(typeof TOKEN_COLUMNS)[number], { id: number }>;

  /** Redemption opens its transaction on `database`, the database these queries run on. */
  constructor(readonly database: Pick<Database, 'db' | 'dialect' | 'sqlite' | 'groupCommit' | 'pg'>) {
    this.db = database.db;
    this.dialect = database.dialect;
    this.insertToken = precompile(
      database,
      TOKEN_COLUMNS,
      (p) =>
        database.db
          .insertInto('download_tokens')
          .values(p as unknown as NewToken)
          .returning('id'),
      // The tokens minted in one turn go to PostgreSQL as one statement (src/db/pg-batch.ts).
      { write: true, pgInsertBatch: { types: TOKEN_TYPES, key: 'token_hash' } },
    );
  }

  /** Every column is given (null where unbound), so the values are the statement's parameters. */
  async insert(values: { [C in (typeof TOKEN_COLUMNS)[number]]-?: NewToken[C] | null }): Promise<number> {
    const row = await this.insertToken.first(values);
    if (!row) throw new Error('token insert returned no row');
    return row.id;
  }

  /**
   * An account token (docs/distribution.md, 'What a token is bound to'): minted when a customer
   * clicks Download, not by the update check, so it is a plain insert and leaves the update
   * check's precompiled statement (and its columns) as they are.
   */
  async insertAccount(values: NewToken, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .insertInto('download_tokens')
      .values(values)
      .returning('id')
      .executeTakeFirst();
    if (!row) throw new Error('token insert returned no row');
    return row.id;
  }

  findByHash(hash: string, tx?: Tx): Promise<TokenRow | undefined> {
    return on(this.db, tx)
      .selectFrom('download_tokens')
      .selectAll()
      .where('token_hash', '=', hash)
      .executeTakeFirst();
  }

  lockToken(id: number, tx?: Tx): Promise<TokenRow | undefined> {
    return on(this.db, tx)
      .selectFrom('download_tokens')
      .selectAll()
      .where('id', '=', id)
      .$call(forUpdate(this.dialect))
      .executeTakeFirst();
  }

  /** The atomic claim of a download token: true for exactly one caller. */
  async claim(id: number, now: string, tx?: Tx): Promise<boolean> {
    const r = await on(this.db, tx)
      .updateTable('download_tokens')
      .set({ used_at: now })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .where('invalidated_at', 'is', null)
      .where('expires_at', '>', now)
      .where('binding_version', '=', 1)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Marks unclaimed tokens matching `column = value` invalidated (inside the caller's transaction). */
  async invalidate(
    column: 'activation_id' | 'release_id' | 'artifact_id',
    value: number,
    reason: string,
    now: string,
    tx?: Tx,
  ): Promise<void> {
    await on(this.db, tx)
      .updateTable('download_tokens')
      .set({ invalidated_at: now, invalidated_reason: reason })
      .where(column, '=', value)
      .where('used_at', 'is', null)
      .where('invalidated_at', 'is', null)
      .execute();
  }

  /**
   * Deletes the oldest tokens (by id, which is issuance order) that expired before `before`, at
   * most `limit`, and stops at the first one that did not: the scan reads the head of the table
   * only, never all of it. Answers how many were deleted.
   */
  async pruneExpired(before: string, limit: number, tx?: Tx): Promise<number> {
    const head = await on(this.db, tx)
      .selectFrom('download_tokens')
      .select(['id', 'expires_at'])
      .orderBy('id')
      .limit(limit)
      .execute();
    const ids: number[] = [];
    for (const row of head) {
      if (row.expires_at >= before) break;
      ids.push(row.id);
    }
    if (ids.length === 0) return 0;
    const r = await on(this.db, tx).deleteFrom('download_tokens').where('id', 'in', ids).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /**
   * A license's unclaimed tokens. A protected token always names its activation, and the table keeps
   * no index on license_id (one page less written per token), so they are found through the
   * activations (licensing names them), the ids in slices, well under either database's limit of
   * parameters. Account tokens name no activation: they are found by license_id on the partial
   * index that holds account tokens only (migration 2026112470).
   */
  async invalidateForLicense(
    licenseId: number,
    activationIds: readonly number[],
    reason: string,
    now: string,
    tx?: Tx,
  ): Promise<void> {
    for (let i = 0; i < activationIds.length; i += ID_SLICE) {
      await on(this.db, tx)
        .updateTable('download_tokens')
        .set({ invalidated_at: now, invalidated_reason: reason })
        .where('activation_id', 'in', activationIds.slice(i, i + ID_SLICE))
        .where('license_id', '=', licenseId)
        .where('used_at', 'is', null)
        .where('invalidated_at', 'is', null)
        .execute();
    }
    await on(this.db, tx)
      .updateTable('download_tokens')
      .set({ invalidated_at: now, invalidated_reason: reason })
      .where('license_id', '=', licenseId)
      // The partial index's own condition, so that both databases choose it.
      .where('user_id', 'is not', null)
      .where('used_at', 'is', null)
      .where('invalidated_at', 'is', null)
      .execute();
  }

  async outstanding(artifactIds: number[], now: string, tx?: Tx): Promise<Map<number, number>> {
    const out = new Map(artifactIds.map((id) => [id, 0]));
    if (artifactIds.length === 0) return out;
    const rows = await on(this.db, tx)
      .selectFrom('download_tokens')
      .select(['artifact_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('artifact_id', 'in', artifactIds)
      .where('used_at', 'is', null)
      .where('invalidated_at', 'is', null)
      .where('expires_at', '>', now)
      .groupBy('artifact_id')
      .execute();
    for (const r of rows) out.set(r.artifact_id, Number(r.n));
    return out;
  }

  /**
   * Per release of a product, the distinct activations whose download of it was claimed, among
   * the token rows still kept (docs/releases.md, 'Channels and staged rollouts'). An
   * administrator's read of the releases list, never run by a check or a download.
   */
  async sitesTaken(productId: number, tx?: Tx): Promise<Map<number, number>> {
    const rows = await on(this.db, tx)
      .selectFrom('download_tokens')
      .select(['release_id', (eb) => eb.fn.count<number>('activation_id').distinct().as('n')])
      .where('product_id', '=', productId)
      .where('used_at', 'is not', null)
      .where('activation_id', 'is not', null)
      .groupBy('release_id')
      .execute();
    return new Map(rows.map((r) => [r.release_id, Number(r.n)]));
  }

  /**
   * Deletes the tokens of test licenses (docs/payments.md, 'Deleting test data'): through their
   * activations (indexed) and, for account tokens, their license (the partial index).
   */
  async deleteOfTestLicenses(tx?: Tx): Promise<number> {
    const db = on(this.db, tx);
    const licenses = db.selectFrom('licenses').select('id').where('test', '=', 1);
    const activations = db.selectFrom('activations').select('id').where('license_id', 'in', licenses);
    const a = await db
      .deleteFrom('download_tokens')
      .where('activation_id', 'in', activations)
      .executeTakeFirst();
    const b = await db
      .deleteFrom('download_tokens')
      .where('user_id', 'is not', null)
      .where('license_id', 'in', licenses)
      .executeTakeFirst();
    return Number(a.numDeletedRows) + Number(b.numDeletedRows);
  }
}
