import { type Insertable, type Kysely, sql, type Updateable } from 'kysely';
import type { Database, Dialect } from '../../db/database.js';
import { type Precompiled, precompile } from '../../db/precompiled.js';
import type { DB } from '../../db/schema.js';
import { forUpdate, on, type Tx } from '../../db/transaction.js';
import {
  ARTIFACT_COLUMNS,
  type ArtifactRow,
  type DeletionRow,
  type LegacyDownloadRow,
  type ReleaseRow,
} from './releases.model.js';
import type { ArtifactState, ReleasesTables } from './releases.tables.js';

export type ArtifactInsert = Insertable<ReleasesTables['artifacts']>;
export type ReleaseInsert = Insertable<ReleasesTables['releases']>;
export type ReleaseUpdate = Updateable<ReleasesTables['releases']>;
export type ArtifactUpdate = Updateable<ReleasesTables['artifacts']>;
export type LegacyInsert = Insertable<ReleasesTables['legacy_downloads']>;
export type DeletionInsert = Insertable<ReleasesTables['artifact_deletions']>;
export type DeletionUpdate = Updateable<ReleasesTables['artifact_deletions']>;

const ARTIFACT_ALIASES = ARTIFACT_COLUMNS.map((c) => `a_${c}` as const);

/**
 * Candidate order (docs/distribution.md, 'Which release') of releases aliased `r`: the current
 * release first, then effective publication time (published_at, else release_date) newest first,
 * then record id newest first.
 */
const CANDIDATE_ORDER = sql`r.is_current desc, coalesce(r.published_at, r.release_date) desc, r.id desc`;

/** A product's published releases, each with its artifact's columns aliased `a_…`, in candidate order. */
function publishedQuery(db: Kysely<DB>, productId: number) {
  return db
    .selectFrom('releases as r')
    .innerJoin('artifacts as a', 'a.id', 'r.artifact_id')
    .selectAll('r')
    .select(ARTIFACT_COLUMNS.map((c) => `a.${c} as a_${c}` as const))
    .where('r.product_id', '=', productId)
    .where('r.status', '=', sql.lit('published'))
    .orderBy(CANDIDATE_ORDER);
}
type PublishedRow = Awaited<ReturnType<ReturnType<typeof publishedQuery>['execute']>>[number];

/** Releases, artifacts, catalogue downloads and deletion jobs: queries only. */
export class ReleasesRepository {
  private readonly db: Kysely<DB>;
  private readonly dialect: Dialect;
  // The update check's reads, compiled once (src/db/precompiled.ts).
  private readonly published: Precompiled<'product', PublishedRow>;
  private readonly artifact: Precompiled<'id', ArtifactRow>;
  /** SQLite only: PostgreSQL has no change counter (migration 2026112212). */
  private readonly generation: Precompiled<never, { generation: number }> | null;

  constructor(
    database: Pick<Database, 'db' | 'dialect' | 'sqlite' | 'groupCommit' | 'readBatch' | 'precompiled'>,
  ) {
    const { db } = database;
    this.db = db;
    this.dialect = database.dialect;
    // On PostgreSQL the calls of one turn go as one statement (src/db/pg-batch.ts).
    this.published = precompile(
      database,
      ['product'] as const,
      (p) => publishedQuery(db, p.product as unknown as number),
      { pgBatch: { product: 'int8' } },
    );
    this.artifact = precompile(
      database,
      ['id'] as const,
      (p) =>
        db
          .selectFrom('artifacts')
          .selectAll()
          .where('id', '=', p.id as unknown as number),
      { pgBatch: { id: 'int8' } },
    );
    this.generation = database.sqlite
      ? precompile(database, [] as const, () =>
          db.selectFrom('release_changes').select('generation').where('id', '=', 1),
        )
      : null;
  }

  /**
   * A product's published releases in candidate order (docs/distribution.md, 'Which release'), each
   * with its artifact: one query, where the update check used to make three.
   */
  async publishedWithArtifacts(
    productId: number,
    tx?: Tx,
  ): Promise<{ release: ReleaseRow; artifact: ArtifactRow }[]> {
    const rows = tx
      ? await publishedQuery(tx, productId).execute()
      : await this.published.all({ product: productId });
    return rows.map((row) => {
      const artifact: Record<string, unknown> = {};
      for (let i = 0; i < ARTIFACT_COLUMNS.length; i++) {
        artifact[ARTIFACT_COLUMNS[i]!] = row[ARTIFACT_ALIASES[i]!];
      }
      // The row is the release's own columns plus the aliased artifact ones, which nothing reads.
      return { release: row as ReleaseRow, artifact: artifact as ArtifactRow };
    });
  }

  /**
   * SQLite: the counter that every change to releases, artifacts and catalogue downloads moves
   * (migration 2026112212). Null on PostgreSQL, which has none.
   */
  changeGeneration(): Promise<number | null> {
    if (!this.generation) return Promise.resolve(null);
    // Every update check of a turn asks, and their reads run together at the turn's end in one
    // snapshot (src/db/batch.ts): one read answers them all, and since it runs after the last of
    // them asked, it sees every write committed before any of them did. Forgotten the moment it
    // is answered, so a later request reads again.
    if (this.generationRead) return this.generationRead;
    const read = this.generation.first({}).then((row) => {
      this.generationRead = null;
      return row ? Number(row.generation) : null;
    });
    this.generationRead = read;
    read.catch(() => {
      this.generationRead = null;
    });
    return read;
  }

  /** The counter's read under way, shared by the requests that ask before it runs. */
  private generationRead: Promise<number | null> | null = null;

  /** Serialises release changes of one product across server processes (SQLite has one writer). */
  async lockProduct(productId: number, tx: Tx): Promise<void> {
    if (this.dialect !== 'postgres') return;
    await sql`select pg_advisory_xact_lock(hashtext(${`tollgate:releases:${productId}`}))`.execute(tx);
  }

  // ---- releases ----

  async insertRelease(values: ReleaseInsert, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .insertInto('releases')
      .values(values)
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  findRelease(id: number, tx?: Tx): Promise<ReleaseRow | undefined> {
    return on(this.db, tx).selectFrom('releases').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The release row, locked until the transaction ends (PostgreSQL; SQLite has one writer). */
  lockRelease(id: number, tx: Tx): Promise<ReleaseRow | undefined> {
    return tx
      .selectFrom('releases')
      .selectAll()
      .where('id', '=', id)
      .$call(forUpdate(this.dialect))
      .executeTakeFirst();
  }

  findReleases(ids: number[], tx?: Tx): Promise<ReleaseRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return on(this.db, tx).selectFrom('releases').selectAll().where('id', 'in', ids).orderBy('id').execute();
  }

  findVersion(productId: number, version: string, tx?: Tx): Promise<ReleaseRow | undefined> {
    return on(this.db, tx)
      .selectFrom('releases')
      .selectAll()
      .where('product_id', '=', productId)
      .where('version', '=', version)
      .executeTakeFirst();
  }

  /** The first release of a product whose artifact, not deleted, has these bytes. */
  findReleaseBySha(
    productId: number,
    sha256: string,
    tx?: Tx,
  ): Promise<{ id: number; version: string } | undefined> {
    return on(this.db, tx)
      .selectFrom('releases as r')
      .innerJoin('artifacts as a', 'a.id', 'r.artifact_id')
      .select(['r.id', 'r.version'])
      .where('r.product_id', '=', productId)
      .where('a.file_sha256', '=', sha256)
      .where('a.state', '!=', 'deleted')
      .orderBy('r.id')
      .limit(1)
      .executeTakeFirst();
  }

  /** Every release of a product (the administrator's list), in candidate order. */
  listReleases(productId: number, tx?: Tx): Promise<ReleaseRow[]> {
    return on(this.db, tx)
      .selectFrom('releases as r')
      .selectAll('r')
      .where('r.product_id', '=', productId)
      .orderBy(CANDIDATE_ORDER)
      .execute();
  }

  releasesOfArtifacts(artifactIds: number[], tx?: Tx): Promise<ReleaseRow[]> {
    if (artifactIds.length === 0) return Promise.resolve([]);
    return on(this.db, tx)
      .selectFrom('releases')
      .selectAll()
      .where('artifact_id', 'in', artifactIds)
      .orderBy('id')
      .execute();
  }

  async updateRelease(id: number, values: ReleaseUpdate, tx?: Tx): Promise<void> {
    await on(this.db, tx).updateTable('releases').set(values).where('id', '=', id).execute();
  }

  /** Counts a delivered download (the triggers of migration 2026112212 leave this change out). */
  async countDownload(id: number, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('releases')
      .set((eb) => ({ download_count: eb('download_count', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  /** Clears the current flag of the product's other releases. */
  async clearCurrent(productId: number, exceptId: number | null, now: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('releases')
      .set({ is_current: 0, updated_at: now })
      .where('product_id', '=', productId)
      // A literal, as the partial index releases_one_current says it (src/db/database.ts, equalitiesUnplanned).
      .where('is_current', '=', sql.lit(1))
      .$if(exceptId !== null, (q) => q.where('id', '!=', exceptId!))
      .execute();
  }

  // ---- artifacts ----

  async insertArtifact(values: ArtifactInsert, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .insertInto('artifacts')
      .values(values)
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  findArtifact(id: number, tx?: Tx): Promise<ArtifactRow | undefined> {
    if (!tx) return this.artifact.first({ id });
    return tx.selectFrom('artifacts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The artifact row, locked until the transaction ends (PostgreSQL; SQLite has one writer). */
  lockArtifact(id: number, tx: Tx): Promise<ArtifactRow | undefined> {
    return tx
      .selectFrom('artifacts')
      .selectAll()
      .where('id', '=', id)
      .$call(forUpdate(this.dialect))
      .executeTakeFirst();
  }

  /** Every storage key of the vault drivers that a row names, whatever the artifact's state. */
  async managedStorageKeys(tx?: Tx): Promise<string[]> {
    const rows = await on(this.db, tx)
      .selectFrom('artifacts')
      .select('storage_key')
      .where('driver', 'in', ['local', 'local_encrypted'])
      .execute();
    return rows.map((r) => r.storage_key);
  }

  findArtifacts(ids: number[], tx?: Tx): Promise<ArtifactRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return on(this.db, tx).selectFrom('artifacts').selectAll().where('id', 'in', ids).orderBy('id').execute();
  }

  /** The vault copy made of a catalogue download by protect, if any (the newest usable one first). */
  findProtectedCopy(downloadId: string, tx?: Tx): Promise<ArtifactRow | undefined> {
    return on(this.db, tx)
      .selectFrom('artifacts')
      .selectAll()
      .where('source_download_id', '=', downloadId)
      .orderBy('id', 'desc')
      .executeTakeFirst();
  }

  /**
   * Points an available artifact at other bytes (another store, or a re-sealed object), only while
   * it is still stored as `from` says: false when its row changed meanwhile.
   */
  async moveArtifact(
    id: number,
    from: { driver: string; storage_key: string },
    values: ArtifactUpdate,
    tx?: Tx,
  ): Promise<boolean> {
    const r = await on(this.db, tx)
      .updateTable('artifacts')
      .set(values)
      .where('id', '=', id)
      .where('driver', '=', from.driver)
      .where('storage_key', '=', from.storage_key)
      .where('state', '=', 'available')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Storage keys of artifacts kept in a bucket (any state: a deleted one's key is never reused). */
  async bucketStorageKeys(tx?: Tx): Promise<string[]> {
    const rows = await on(this.db, tx)
      .selectFrom('artifacts')
      .select('storage_key')
      .where('driver', 'in', ['s3', 's3_encrypted'])
      .execute();
    return rows.map((r) => r.storage_key);
  }

  async updateArtifact(id: number, values: ArtifactUpdate, tx?: Tx): Promise<void> {
    await on(this.db, tx).updateTable('artifacts').set(values).where('id', '=', id).execute();
  }

  /** Moves artifacts from one state to another; answers how many moved (a lost race moves fewer). */
  async transitionArtifacts(
    ids: number[],
    from: ArtifactState[],
    values: ArtifactUpdate & { state: ArtifactState },
    tx?: Tx,
  ): Promise<number> {
    if (ids.length === 0) return 0;
    const r = await on(this.db, tx)
      .updateTable('artifacts')
      .set(values)
      .where('id', 'in', ids)
      .where('state', 'in', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /**
   * Vault artifacts without a signature yet, after `afterId` in id order: what the signing data
   * step reads (docs/releases.md, 'Signatures and Content-MD5').
   */
  unsignedArtifacts(afterId: number, limit: number, tx?: Tx): Promise<ArtifactRow[]> {
    return on(this.db, tx)
      .selectFrom('artifacts')
      .selectAll()
      .where('driver', 'in', ['local', 'local_encrypted'])
      .where('state', '=', 'available')
      .where('signature', 'is', null)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /**
   * Stores an artifact's MD5 and signature unless it has one already (another server process
   * running the same step got there first): answers whether this call stored them.
   */
  async storeIntegrity(
    id: number,
    values: Pick<ArtifactUpdate, 'file_md5' | 'signature' | 'signing_key_id' | 'signed_at' | 'updated_at'>,
    tx?: Tx,
  ): Promise<boolean> {
    const r = await on(this.db, tx)
      .updateTable('artifacts')
      .set(values)
      .where('id', '=', id)
      .where('signature', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  listArtifactsByDriver(driver: string, tx?: Tx): Promise<ArtifactRow[]> {
    return on(this.db, tx)
      .selectFrom('artifacts')
      .selectAll()
      .where('driver', '=', driver)
      .where('state', '=', 'available')
      .orderBy('id')
      .execute();
  }

  // ---- catalogue downloads ----

  async insertLegacy(values: LegacyInsert, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .insertInto('legacy_downloads')
      .values(values)
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  findLegacy(downloadId: string, tx?: Tx): Promise<LegacyDownloadRow | undefined> {
    return on(this.db, tx)
      .selectFrom('legacy_downloads')
      .selectAll()
      .where('download_id', '=', downloadId)
      .executeTakeFirst();
  }

  async markLegacyRemoved(downloadId: string, now: string, tx?: Tx): Promise<void> {
    await on(this.db, tx)
      .updateTable('legacy_downloads')
      .set({ removed_at: now })
      .where('download_id', '=', downloadId)
      .execute();
  }

  // ---- deletion jobs ----

  async insertDeletion(values: DeletionInsert, tx?: Tx): Promise<void> {
    await on(this.db, tx).insertInto('artifact_deletions').values(values).execute();
  }

  findDeletion(opId: string, tx?: Tx): Promise<DeletionRow | undefined> {
    return on(this.db, tx)
      .selectFrom('artifact_deletions')
      .selectAll()
      .where('op_id', '=', opId)
      .executeTakeFirst();
  }

  async updateDeletion(opId: string, values: DeletionUpdate, tx?: Tx): Promise<void> {
    await on(this.db, tx).updateTable('artifact_deletions').set(values).where('op_id', '=', opId).execute();
  }

  /** Claims a job for a (re)run: failed, or running but untouched since `staleBefore` (a dead process). */
  async claimDeletion(opId: string, staleBefore: string, now: string, tx?: Tx): Promise<boolean> {
    const r = await on(this.db, tx)
      .updateTable('artifact_deletions')
      .set({ status: 'running', updated_at: now })
      .where('op_id', '=', opId)
      .where((eb) =>
        eb.or([
          eb('status', '=', 'failed'),
          eb.and([eb('status', '=', 'running'), eb('updated_at', '<', staleBefore)]),
        ]),
      )
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  // ---- diagnostics ----

  async counts(tx?: Tx): Promise<{
    artifacts: { driver: string; state: string; key_id: string | null; n: number }[];
    releases: { status: string; n: number }[];
    publicSources: number;
    failedJobs: number;
  }> {
    const db = on(this.db, tx);
    const artifacts = await db
      .selectFrom('artifacts')
      .select(['driver', 'state', 'key_id', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(['driver', 'state', 'key_id'])
      .execute();
    const releases = await db
      .selectFrom('releases')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    const sources = await db
      .selectFrom('legacy_downloads')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('removed_at', 'is', null)
      .executeTakeFirstOrThrow();
    const failed = await db
      .selectFrom('artifact_deletions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'failed')
      .executeTakeFirstOrThrow();
    return {
      artifacts: artifacts.map((a) => ({ ...a, n: Number(a.n) })),
      releases: releases.map((r) => ({ ...r, n: Number(r.n) })),
      publicSources: Number(sources.n),
      failedJobs: Number(failed.n),
    };
  }

  artifactIn(id: number, tx?: Tx): Promise<ArtifactRow | undefined> {
    return on(this.db, tx).selectFrom('artifacts').selectAll().where('id', '=', id).executeTakeFirst();
  }
}
