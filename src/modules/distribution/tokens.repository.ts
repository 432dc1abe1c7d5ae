import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { Database, Dialect } from '../../db/database.js';
import { type Precompiled, precompile } from '../../db/precompiled.js';
import type { DB } from '../../db/schema.js';
import { forUpdate, on, type Tx } from '../../db/transaction.js';
import type { ActivationRow, LicenseRow } from '../licensing/licensing.model.js';
import {
  ARTIFACT_COLUMNS,
  type ArtifactRow,
  METADATA_FIELDS,
  type ReleaseRow,
} from '../releases/releases.model.js';
import type { DistributionTables } from './distribution.tables.js';

export type TokenRow = Selectable<DistributionTables['download_tokens']>;
export type NewToken = Insertable<DistributionTables['download_tokens']>;

/**
 * Every column of a row type, checked by tsc: a column added to the table and not to the list fails
 * the build, so the joined reads below never return a row with a field missing.
 */
const allColumns =
  <T>() =>
  <const C extends readonly (keyof T & string)[]>(
    columns: C &
      ([Exclude<keyof T, C[number]>] extends [never] ? unknown : { missing: Exclude<keyof T, C[number]> }),
  ): C =>
    columns;

const TOKEN_ROW = allColumns<TokenRow>()([
  'id',
  'token_hash',
  'token_locator',
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
  'user_id',
  'created_at',
  'expires_at',
  'used_at',
  'invalidated_at',
  'invalidated_reason',
]);

const RELEASE_ROW = allColumns<ReleaseRow>()([
  'id',
  'product_id',
  'version',
  'status',
  'is_current',
  'release_date',
  'published_at',
  'withdrawn_at',
  'changelog',
  'download_count',
  'artifact_id',
  'file_name',
  'file_size',
  'file_sha256',
  'created_at',
  'updated_at',
  ...METADATA_FIELDS,
  'channel',
  'rollout_percent',
]);

const ARTIFACT_ROW = allColumns<ArtifactRow>()([...ARTIFACT_COLUMNS, 'stored_etag']);

/** What redemption checks of the license (docs/distribution.md, '4. GET /software/download'). */
const CLAIM_LICENSE = [
  'id',
  'product_id',
  'user_id',
  'status',
  'usage_expires_at',
  'entitlement_policy',
  'created_at',
  'subscription_id',
  'trial',
] as const satisfies readonly (keyof LicenseRow)[];
export type ClaimLicense = Pick<LicenseRow, (typeof CLAIM_LICENSE)[number]>;

/** What redemption compares of a protected token's activation with the token's binding. */
const CLAIM_ACTIVATION = [
  'id',
  'status',
  'license_id',
  'activation_revision',
  'identity_key',
  'installation_id',
  'domain_normalized',
] as const satisfies readonly (keyof ActivationRow)[];
export type ClaimActivation = Pick<ActivationRow, (typeof CLAIM_ACTIVATION)[number]>;

/** `alias.column as prefix_column`, for reads that join tables sharing column names. */
const prefixed = (alias: string, prefix: string, columns: readonly string[]) =>
  columns.map((c) => sql.ref(`${alias}.${c}`).as(`${prefix}${c}`));

/** The row of one table out of a joined read's prefixed columns; undefined when its id is null (no row). */
function unprefixed<T>(
  row: Record<string, unknown>,
  prefix: string,
  columns: readonly string[],
): T | undefined {
  if (row[`${prefix}id`] === null || row[`${prefix}id`] === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const c of columns) out[c] = row[`${prefix}${c}`];
  return out as T;
}

/** A token with its release and that release's artifact (either absent when its row is). */
export interface Redeemable {
  token: TokenRow;
  release: ReleaseRow | undefined;
  artifact: ArtifactRow | undefined;
}

/**
 * Everything redemption's transaction re-checks, read (and on PostgreSQL locked) in one statement:
 * the release, its artifact, the product's status, and the license with its subscription's status
 * and the activation where the token's policy binds them.
 */
export interface ClaimRows {
  release: ReleaseRow;
  artifact: ArtifactRow;
  product: { status: string; licensing_enabled: string | null; software_enabled: string | null };
  license: ClaimLicense | undefined;
  subscriptionStatus: string | null;
  activation: ClaimActivation | undefined;
}

/**
 * The columns the update check's issuance writes, in the order its statement takes them: the row's
 * own but the id (the database's) and user_id (null here; only account downloads set it).
 */
type IssuedColumn = Exclude<(typeof TOKEN_ROW)[number], 'id' | 'user_id'>;
export const TOKEN_COLUMNS = TOKEN_ROW.filter((c): c is IssuedColumn => c !== 'id' && c !== 'user_id');

/** Each column's PostgreSQL type, for the arrays of the batched insert. */
const TOKEN_TYPES: Record<(typeof TOKEN_COLUMNS)[number], string> = {
  token_hash: 'text',
  token_locator: 'int8',
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

  /**
   * Download's one read before its transaction: the token, its release and the release's artifact;
   * found by its locator and hash, or (`unlocated`) a token minted before locators by its hash.
   */
  private readonly redeemable: Precompiled<'locator' | 'hash', Record<string, unknown>>;
  private readonly unlocated: Precompiled<'hash', Record<string, unknown>>;

  /** Redemption opens its transaction on `database`, the database these queries run on. */
  constructor(
    readonly database: Pick<
      Database,
      'db' | 'dialect' | 'sqlite' | 'groupCommit' | 'readBatch' | 'precompiled' | 'pg'
    >,
  ) {
    this.db = database.db;
    this.dialect = database.dialect;
    const joined = () =>
      database.db
        .selectFrom('download_tokens as t')
        .leftJoin('releases as r', 'r.id', 't.release_id')
        .leftJoin('artifacts as a', 'a.id', 'r.artifact_id')
        .select([
          ...prefixed('t', 't_', TOKEN_ROW),
          ...prefixed('r', 'r_', RELEASE_ROW),
          ...prefixed('a', 'a_', ARTIFACT_ROW),
        ]);
    this.redeemable = precompile(database, ['locator', 'hash'], (p) =>
      joined()
        .where('t.token_locator', '=', p.locator as unknown as number)
        .where('t.token_hash', '=', p.hash),
    );
    this.unlocated = precompile(database, ['hash'], (p) =>
      joined().where('t.token_locator', 'is', null).where('t.token_hash', '=', p.hash),
    );
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

  /**
   * The token by its locator and hash, with its release and the release's artifact, in one
   * statement; a token minted before locators (none stored) by its hash alone, when the first finds
   * nothing.
   */
  async findRedeemable(locator: number, hash: string): Promise<Redeemable | undefined> {
    const row = (await this.redeemable.first({ locator, hash })) ?? (await this.unlocated.first({ hash }));
    const token = row && unprefixed<TokenRow>(row, 't_', TOKEN_ROW);
    if (!row || !token) return undefined;
    return {
      token,
      release: unprefixed<ReleaseRow>(row, 'r_', RELEASE_ROW),
      artifact: unprefixed<ArtifactRow>(row, 'a_', ARTIFACT_ROW),
    };
  }

  /**
   * The one read of redemption's transaction (docs/performance.md, 'Targets of 2026-11-28'), one
   * shape per token policy. PostgreSQL locks the token, release, license and activation rows (FOR
   * UPDATE OF them: the product and artifact are read, as they were when read one by one). Inner
   * joins only, since PostgreSQL refuses to lock the nullable side of an outer join: undefined
   * when a row is missing, or a locked row no longer joins once its change committed; the caller
   * then reads them one by one to answer the precise error.
   */
  async lockForClaim(token: TokenRow, tx: Tx): Promise<ClaimRows | undefined> {
    const licensed = token.policy !== 'public';
    const site = token.policy === 'protected';
    let query = tx
      .selectFrom('download_tokens as t')
      .innerJoin('releases as r', 'r.id', 't.release_id')
      .innerJoin('artifacts as a', 'a.id', 'r.artifact_id')
      .innerJoin('products as p', 'p.id', 't.product_id')
      .select([
        ...prefixed('r', 'r_', RELEASE_ROW),
        ...prefixed('a', 'a_', ARTIFACT_ROW),
        'p.status as p_status',
        'p.licensing_enabled as p_licensing_enabled',
        'p.software_enabled as p_software_enabled',
      ])
      .where('t.id', '=', token.id);
    if (licensed) {
      query = query
        .innerJoin('licenses as l', 'l.id', 't.license_id')
        .select([
          ...prefixed('l', 'l_', CLAIM_LICENSE),
          (eb) =>
            eb
              .selectFrom('subscriptions as s')
              .select('s.status')
              .whereRef('s.id', '=', 'l.subscription_id')
              .as('s_status'),
        ]);
    }
    if (site) {
      query = query
        .innerJoin('activations as v', 'v.id', 't.activation_id')
        .select(prefixed('v', 'v_', CLAIM_ACTIVATION));
    }
    if (this.dialect === 'postgres') {
      const locked = ['t', 'r', ...(licensed ? ['l'] : []), ...(site ? ['v'] : [])];
      query = query.forUpdate(locked as 't'[]);
    }
    const row = (await query.executeTakeFirst()) as Record<string, unknown> | undefined;
    const release = row && unprefixed<ReleaseRow>(row, 'r_', RELEASE_ROW);
    const artifact = row && unprefixed<ArtifactRow>(row, 'a_', ARTIFACT_ROW);
    if (!row || !release || !artifact) return undefined;
    return {
      release,
      artifact,
      product: {
        status: row.p_status as string,
        licensing_enabled: row.p_licensing_enabled as string | null,
        software_enabled: row.p_software_enabled as string | null,
      },
      license: licensed ? unprefixed<ClaimLicense>(row, 'l_', CLAIM_LICENSE) : undefined,
      subscriptionStatus: licensed ? ((row.s_status as string | null | undefined) ?? null) : null,
      activation: site ? unprefixed<ClaimActivation>(row, 'v_', CLAIM_ACTIVATION) : undefined,
    };
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

  /**
   * PostgreSQL only: the claim and the release's download count in one statement (a round trip
   * less on the download route), the count raised only when the claim took. True when it did.
   */
  async claimCounting(id: number, releaseId: number, now: string, tx: Tx): Promise<boolean> {
    const r = await tx
      .with('claimed', (db) =>
        db
          .updateTable('download_tokens')
          .set({ used_at: now })
          .where('id', '=', id)
          .where('used_at', 'is', null)
          .where('invalidated_at', 'is', null)
          .where('expires_at', '>', now)
          .where('binding_version', '=', 1)
          .returning('id'),
      )
      .updateTable('releases')
      .from('claimed')
      .set((eb) => ({ download_count: eb('releases.download_count', '+', 1) }))
      .where('releases.id', '=', releaseId)
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
