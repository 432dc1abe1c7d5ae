import { type Insertable, type Kysely, sql, type Updateable } from 'kysely';
import type { Database, Dialect } from '../../db/database.js';
import { precompile } from '../../db/precompiled.js';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';
import type { ArtifactRow, DeletionRow, LegacyDownloadRow, ReleaseRow } from './releases.model.js';
import type { ArtifactState, ReleasesTables } from './releases.tables.js';

export type ArtifactInsert = Insertable<ReleasesTables['artifacts']>;
export type ReleaseInsert = Insertable<ReleasesTables['releases']>;
export type ReleaseUpdate = Updateable<ReleasesTables['releases']>;
export type ArtifactUpdate = Updateable<ReleasesTables['artifacts']>;
export type LegacyInsert = Insertable<ReleasesTables['legacy_downloads']>;
export type DeletionInsert = Insertable<ReleasesTables['artifact_deletions']>;
export type DeletionUpdate = Updateable<ReleasesTables['artifact_deletions']>;

/** The artifact columns the published-releases query reads alongside each release, aliased `a_…`. */
const ARTIFACT_COLUMNS = [
  'id',
  'product_id',
  'download_id',
  'driver',
  'storage_key',
  'key_id',
  'file_name',
  'file_size',
  'stored_size',
  'file_sha256',
  'state',
  'source_download_id',
  'deletion_op',
  'created_at',
  'updated_at',
  'deleted_at',
] as const satisfies readonly (keyof ArtifactRow)[];
const ARTIFACT_ALIASES = ARTIFACT_COLUMNS.map((c) => `a_${c}` as const);

/**
 * Candidate order (docs/distribution.md, 'Which release') of releases aliased `r`: the current
 * release first, then effective publication time (published_at, else release_date) newest first,
 * then record id newest first.
 */
const CANDIDATE_ORDER = sql`r.is_current desc, coalesce(r.published_at, r.release_date) desc, r.id desc`;

/** Releases, artifacts, catalogue downloads and deletion jobs: queries only. */
export class ReleasesRepository {
  private hotQueries?: ReturnType<ReleasesRepository['compileHot']>;

  constructor(
    readonly db: Kysely<DB>,
    readonly dialect: Dialect,
    /** Given to the root repository only: a bound (transaction) one runs every query through `db`. */
    private readonly root?: Pick<Database, 'db' | 'sqlite' | 'readBatch'>,
  ) {}

  /** The update check's reads, compiled once on the root connection (src/db/precompiled.ts). */
  private compileHot(root: Pick<Database, 'db' | 'sqlite' | 'readBatch'>) {
    return {
      published: precompile(root, ['product'] as const, (p) =>
        this.publishedQuery(root.db, p.product as unknown as number),
      ),
      generation: precompile(root, [] as const, () =>
        root.db.selectFrom('release_changes').select('generation').where('id', '=', 1),
      ),
      artifact: precompile(root, ['id'] as const, (p) =>
        root.db
          .selectFrom('artifacts')
          .selectAll()
          .where('id', '=', p.id as unknown as number),
      ),
    };
  }

  private get hot() {
    if (!this.root) return undefined;
    this.hotQueries ??= this.compileHot(this.root);
    return this.hotQueries;
  }

  private publishedQuery(db: Kysely<DB>, productId: number) {
    return db
      .selectFrom('releases as r')
      .innerJoin('artifacts as a', 'a.id', 'r.artifact_id')
      .selectAll('r')
      .select(ARTIFACT_COLUMNS.map((c) => `a.${c} as a_${c}` as const))
      .where('r.product_id', '=', productId)
      .where('r.status', '=', sql.lit('published'))
      .orderBy(CANDIDATE_ORDER);
  }

  /**
   * A product's published releases in candidate order (docs/distribution.md, 'Which release'), each
   * with its artifact: one query, where the update check used to make three.
   */
  async publishedWithArtifacts(productId: number): Promise<{ release: ReleaseRow; artifact: ArtifactRow }[]> {
    const rows = this.hot
      ? await this.hot.published.all({ product: productId })
      : await this.publishedQuery(this.db, productId).execute();
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
  async changeGeneration(): Promise<number | null> {
    const hot = this.root?.sqlite ? this.hot : undefined;
    if (!hot) return null;
    const row = await hot.generation.first({});
    return row ? Number(row.generation) : null;
  }

  /** The same queries on another connection (a caller's transaction). */
  bind(db: Kysely<DB>): ReleasesRepository {
    return new ReleasesRepository(db, this.dialect);
  }

  transaction<T>(fn: (repo: ReleasesRepository) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new ReleasesRepository(trx, this.dialect)));
  }

  /** Serialises release changes of one product across server processes (SQLite has one writer). */
  async lockProduct(productId: number): Promise<void> {
    if (this.dialect !== 'postgres') return;
    await sql`select pg_advisory_xact_lock(hashtext(${`tollgate:releases:${productId}`}))`.execute(this.db);
  }

  // ---- releases ----

  async insertRelease(values: ReleaseInsert): Promise<number> {
    const row = await this.db.insertInto('releases').values(values).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  findRelease(id: number, lock = false): Promise<ReleaseRow | undefined> {
    return this.db
      .selectFrom('releases')
      .selectAll()
      .where('id', '=', id)
      .$if(lock && this.dialect === 'postgres', (q) => q.forUpdate())
      .executeTakeFirst();
  }

  findReleases(ids: number[]): Promise<ReleaseRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('releases').selectAll().where('id', 'in', ids).orderBy('id').execute();
  }

  findVersion(productId: number, version: string): Promise<ReleaseRow | undefined> {
    return this.db
      .selectFrom('releases')
      .selectAll()
      .where('product_id', '=', productId)
      .where('version', '=', version)
      .executeTakeFirst();
  }

  /** Every release of a product (the administrator's list), in candidate order. */
  listReleases(productId: number): Promise<ReleaseRow[]> {
    return this.db
      .selectFrom('releases as r')
      .selectAll('r')
      .where('r.product_id', '=', productId)
      .orderBy(CANDIDATE_ORDER)
      .execute();
  }

  releasesOfArtifacts(artifactIds: number[]): Promise<ReleaseRow[]> {
    if (artifactIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('releases')
      .selectAll()
      .where('artifact_id', 'in', artifactIds)
      .orderBy('id')
      .execute();
  }

  async updateRelease(id: number, values: ReleaseUpdate): Promise<void> {
    await this.db.updateTable('releases').set(values).where('id', '=', id).execute();
  }

  /** Clears the current flag of the product's other releases. */
  async clearCurrent(productId: number, exceptId: number | null, now: string): Promise<void> {
    await this.db
      .updateTable('releases')
      .set({ is_current: 0, updated_at: now })
      .where('product_id', '=', productId)
      .where('is_current', '=', 1)
      .$if(exceptId !== null, (q) => q.where('id', '!=', exceptId!))
      .execute();
  }

  // ---- artifacts ----

  async insertArtifact(values: ArtifactInsert): Promise<number> {
    const row = await this.db
      .insertInto('artifacts')
      .values(values)
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  findArtifact(id: number, lock = false): Promise<ArtifactRow | undefined> {
    if (!lock && this.hot) return this.hot.artifact.first({ id });
    return this.db
      .selectFrom('artifacts')
      .selectAll()
      .where('id', '=', id)
      .$if(lock && this.dialect === 'postgres', (q) => q.forUpdate())
      .executeTakeFirst();
  }

  /** Every storage key of the vault drivers that a row names, whatever the artifact's state. */
  async managedStorageKeys(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('artifacts')
      .select('storage_key')
      .where('driver', 'in', ['local', 'local_encrypted'])
      .execute();
    return rows.map((r) => r.storage_key);
  }

  findArtifacts(ids: number[]): Promise<ArtifactRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('artifacts').selectAll().where('id', 'in', ids).orderBy('id').execute();
  }

  /** The vault copy made of a catalogue download by protect, if any (the newest usable one first). */
  findProtectedCopy(downloadId: string): Promise<ArtifactRow | undefined> {
    return this.db
      .selectFrom('artifacts')
      .selectAll()
      .where('source_download_id', '=', downloadId)
      .orderBy('id', 'desc')
      .executeTakeFirst();
  }

  async updateArtifact(id: number, values: ArtifactUpdate): Promise<void> {
    await this.db.updateTable('artifacts').set(values).where('id', '=', id).execute();
  }

  /** Moves artifacts from one state to another; answers how many moved (a lost race moves fewer). */
  async transitionArtifacts(
    ids: number[],
    from: ArtifactState[],
    values: ArtifactUpdate & { state: ArtifactState },
  ): Promise<number> {
    if (ids.length === 0) return 0;
    const r = await this.db
      .updateTable('artifacts')
      .set(values)
      .where('id', 'in', ids)
      .where('state', 'in', from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  listArtifactsByDriver(driver: string): Promise<ArtifactRow[]> {
    return this.db
      .selectFrom('artifacts')
      .selectAll()
      .where('driver', '=', driver)
      .where('state', '=', 'available')
      .orderBy('id')
      .execute();
  }

  // ---- catalogue downloads ----

  async insertLegacy(values: LegacyInsert): Promise<void> {
    await this.db.insertInto('legacy_downloads').values(values).execute();
  }

  findLegacy(downloadId: string): Promise<LegacyDownloadRow | undefined> {
    return this.db
      .selectFrom('legacy_downloads')
      .selectAll()
      .where('download_id', '=', downloadId)
      .executeTakeFirst();
  }

  findLegacyByPath(publicPath: string): Promise<LegacyDownloadRow | undefined> {
    return this.db
      .selectFrom('legacy_downloads')
      .selectAll()
      .where('public_path', '=', publicPath)
      .where('removed_at', 'is', null)
      .executeTakeFirst();
  }

  async markLegacyRemoved(downloadId: string, now: string): Promise<void> {
    await this.db
      .updateTable('legacy_downloads')
      .set({ removed_at: now })
      .where('download_id', '=', downloadId)
      .execute();
  }

  // ---- deletion jobs ----

  async insertDeletion(values: DeletionInsert): Promise<void> {
    await this.db.insertInto('artifact_deletions').values(values).execute();
  }

  findDeletion(opId: string): Promise<DeletionRow | undefined> {
    return this.db.selectFrom('artifact_deletions').selectAll().where('op_id', '=', opId).executeTakeFirst();
  }

  async updateDeletion(opId: string, values: DeletionUpdate): Promise<void> {
    await this.db.updateTable('artifact_deletions').set(values).where('op_id', '=', opId).execute();
  }

  /** Claims a job for a (re)run: failed, or running but untouched since `staleBefore` (a dead process). */
  async claimDeletion(opId: string, staleBefore: string, now: string): Promise<boolean> {
    const r = await this.db
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

  async counts(): Promise<{
    artifacts: { driver: string; state: string; key_id: string | null; n: number }[];
    releases: { status: string; n: number }[];
    publicSources: number;
    failedJobs: number;
  }> {
    const artifacts = await this.db
      .selectFrom('artifacts')
      .select(['driver', 'state', 'key_id', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(['driver', 'state', 'key_id'])
      .execute();
    const releases = await this.db
      .selectFrom('releases')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    const sources = await this.db
      .selectFrom('legacy_downloads')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('removed_at', 'is', null)
      .executeTakeFirstOrThrow();
    const failed = await this.db
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
