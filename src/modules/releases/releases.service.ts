import { BoundedMap } from '../../bounded-map.js';
import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { type Tx, withTransaction } from '../../db/transaction.js';
import { ApiError, type ErrorCode } from '../../http/errors.js';
import { uuid } from '../../random.js';
import { type Actor, type Changes, diff } from '../audit/audit.model.js';
import type { AuditService } from '../audit/audit.service.js';
import type { Product } from '../catalogue/catalogue.model.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { isChannel } from './channels.js';
import {
  type ArtifactRow,
  type Changelog,
  checkFileName,
  checkHeaderVersion,
  checkVersion,
  compareWithTemplate,
  METADATA_FIELDS,
  type MetadataField,
  parseBool,
  parseChangelog,
  parseOverride,
  type Release,
  type ReleaseRow,
  renderFileName,
  SHA256_HEX,
  toRelease,
} from './releases.model.js';
import type { ArtifactInsert, ReleasesRepository } from './releases.repository.js';
import type {
  ExternalReleaseBody,
  LegacyReleaseBody,
  MetadataInput,
  ReleaseUpdateBody,
  RepublishBody,
} from './releases.schemas.js';
import type { ReleaseChannel, ReleaseStatus } from './releases.tables.js';
import { type ArtifactIntegrity, type ReleaseSigner, signArtifact } from './signatures.js';
import type { StatSnapshot } from './storage/driver.js';
import { isValidExternalUrl } from './storage/external.js';
import { type ArtifactStorage, refOf, verifyError } from './storage/storage.js';
import type { ReceivedUpload } from './upload.js';
import { EMPTY_METADATA, isWebUrl, type PackageMetadata, WP_VERSION } from './wp-headers.js';

/** Why a release is withdrawn: by the administrator, or because its artifact is being deleted. */
export type WithdrawReason = 'withdrawn' | 'artifact_deleted';

/** Runs inside the withdrawal transaction (e.g. the token module invalidates unclaimed tokens). */
export type WithdrawHook = (ctx: { tx: Tx; release: ReleaseRow; reason: WithdrawReason }) => Promise<void>;

/** Counts unclaimed, unexpired, not invalidated download tokens per artifact id. */
export type OutstandingTokenCounter = (artifactIds: number[]) => Promise<Map<number, number>>;

/** Counts, per release of a product, the distinct sites whose download of it is on record. */
export type SiteCounter = (productId: number) => Promise<Map<number, number>>;

/** Fields every way of publishing shares, already validated. */
interface Publication {
  version: string;
  changelog: Changelog | null;
  status: 'published' | 'draft';
  setCurrent: boolean;
  fileName: string;
  /** What the zip's plugin or theme header said (wp-headers.ts); nothing for other publications. */
  metadata: PackageMetadata;
  /** docs/distribution.md, 'Channels and staged rollouts': stable and 100 unless given. */
  channel: ReleaseChannel;
  rolloutPercent: number;
  /** An upload published with `version_override` against its zip's header version (audited). */
  versionOverride?: { header_version: string | null };
}

/** What the distribution module streams after a successful claim. */
export interface OpenedArtifact {
  /** The plaintext; a chunk is valid until the second chunk after it is asked for (StorageDriver.open). */
  chunks: AsyncGenerator<Buffer, void, undefined>;
  size: number;
  sha256: string;
  fileName: string;
  /** Base64 MD5 of the bytes (`Content-MD5`), from the stored row; null until signed. */
  md5: string | null;
  /** Base64 Ed25519 signature over their SHA-384 (`X-Content-Signature`); null until signed. */
  signature: string | null;
}

/** Products whose issuance candidates are kept at once: a store sells a few dozen. */
const MAX_KEPT_PRODUCTS = 1000;

/** A published release and why it cannot be issued (candidateProblem), if it cannot. */
export interface Candidate {
  release: Release;
  problem: ErrorCode | null;
}

/**
 * Release administration (docs/releases.md) and the reads the distribution module needs. Releases
 * are immutable in version and artifact binding; only changelog and the current flag change, and
 * status moves draft → published → withdrawn → published.
 */
/** A stored changelog (JSON text) as the audit trail shows it. */
const parsedJson = (text: unknown): unknown => (typeof text === 'string' ? JSON.parse(text) : null);

export class ReleasesService {
  private readonly withdrawHooks: WithdrawHook[] = [];
  private tokenCounter: OutstandingTokenCounter = async (ids) => new Map(ids.map((id) => [id, 0]));
  private siteCounter: SiteCounter = async () => new Map();

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: ReleasesRepository,
    readonly storage: ArtifactStorage,
    private readonly catalogue: CatalogueService,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    /** Signs every stored artifact at upload (docs/releases.md, 'Signatures and Content-MD5'). */
    private readonly signer: ReleaseSigner,
  ) {}

  /**
   * The MD5 and signature columns of new vault bytes, from the digests computed while they
   * streamed in. A key that cannot be opened is 500 `signing_key_unavailable`: nothing unsigned is
   * stored.
   */
  signedIntegrity(digests: { md5: string; sha384: Buffer }): Promise<ArtifactIntegrity> {
    return signArtifact(this.signer, this.clock, digests);
  }

  /** Records an administrator's change to a release in its transaction (docs/admin.md, 'Audit trail'). */
  private async recordIn(actor: Actor | undefined, id: number, action: string, changes: Changes, tx: Tx) {
    if (!actor || Object.keys(changes).length === 0) return;
    await this.audit.record(actor, { entity_type: 'release', entity_id: id, action, changes }, tx);
  }

  // ---- seams for the download-token module ----

  /** Registers a hook run in the same transaction as every withdrawal (and deletion-withdrawal). */
  onWithdraw(hook: WithdrawHook): void {
    this.withdrawHooks.push(hook);
  }

  /** Lets the token module report outstanding tokens in deletion previews (0 until it does). */
  setOutstandingTokenCounter(counter: OutstandingTokenCounter): void {
    this.tokenCounter = counter;
  }

  /** Lets the token module count the sites that took each release (0 until it does). */
  setSiteCounter(counter: SiteCounter): void {
    this.siteCounter = counter;
  }

  outstandingTokens(artifactIds: number[]): Promise<Map<number, number>> {
    return this.tokenCounter(artifactIds);
  }

  /**
   * Withdraws a published release inside the caller's transaction: its status changes, then the
   * withdraw hooks run (src/wiring.ts: its download tokens stop working). A withdrawal and an
   * artifact deletion (deletions.service.ts) both withdraw through here.
   */
  async withdrawIn(row: ReleaseRow, reason: WithdrawReason, now: string, tx: Tx): Promise<void> {
    await this.repo.updateRelease(
      row.id,
      { status: 'withdrawn', is_current: 0, withdrawn_at: now, updated_at: now },
      tx,
    );
    const withdrawn: ReleaseRow = { ...row, status: 'withdrawn', is_current: 0 };
    for (const hook of this.withdrawHooks) await hook({ tx, release: withdrawn, reason });
  }

  // ---- reads ----

  private async hydrate(rows: ReleaseRow[], tx?: Tx): Promise<Release[]> {
    const artifacts = new Map(
      (await this.repo.findArtifacts([...new Set(rows.map((r) => r.artifact_id))], tx)).map((a) => [a.id, a]),
    );
    return rows.map((r) => toRelease(r, artifacts.get(r.artifact_id)!));
  }

  async getRelease(versionId: number): Promise<Release | null> {
    const row = await this.repo.findRelease(versionId);
    return row ? (await this.hydrate([row]))[0]! : null;
  }

  /** The release if it belongs to the product, else 404 `release_not_found`. */
  async requireRelease(productId: number, versionId: number): Promise<Release> {
    const release = await this.getRelease(versionId);
    if (!release || release.product_id !== productId) throw new ApiError('release_not_found');
    return release;
  }

  /**
   * A draft or withdrawn release is refused by download and external-link requests with 410
   * `release_not_published` / `release_withdrawn` (docs/distribution.md, 'Errors and what the
   * client should do').
   */
  assertPublished(release: Pick<Release, 'status'>): void {
    if (release.status !== 'published') throw notPublished(release.status);
  }

  /** Published releases of a product in candidate order (docs/distribution.md, 'Which release'). */
  async listPublishedCandidates(productId: number): Promise<Release[]> {
    const rows = await this.repo.publishedWithArtifacts(productId);
    return rows.map(({ release, artifact }) => toRelease(release, artifact));
  }

  /** Each product's issuance candidates, kept while the SQLite change counter stands. */
  private readonly issuance = new BoundedMap<number, { generation: number; candidates: Candidate[] }>(
    MAX_KEPT_PRODUCTS,
  );

  /**
   * The published releases of a product in candidate order, each with its artifact's problem
   * (candidateProblem) or null: what package and check choose from (docs/distribution.md, 'Which
   * release'). On SQLite they are kept in memory while the counter that every change to releases,
   * artifacts and catalogue downloads moves stands (migration 2026112212), so a check reads one
   * counter instead of every release and artifact; any change, by any writer, is seen by the next
   * request. The triggers, not this service, move the counter: a change made by hand in SQL tells
   * no service. PostgreSQL has no counter (a row every release change locked would serialise them
   * across processes), so there nothing is kept and every request reads the releases
   * (test/releases/issuance-candidates.test.ts runs on both). Callers must not modify what they
   * are given: the next request gets the same objects.
   */
  async issuanceCandidates(productId: number): Promise<readonly Candidate[]> {
    const generation = await this.repo.changeGeneration();
    const kept = this.issuance.get(productId);
    if (generation !== null && kept?.generation === generation) return kept.candidates;
    // Read after the counter: a change committed in between makes the next request read again.
    const rows = await this.repo.publishedWithArtifacts(productId);
    const candidates: Candidate[] = [];
    for (const { release, artifact } of rows) {
      const r = toRelease(release, artifact);
      candidates.push({ release: r, problem: await this.problemOf(r, artifact) });
    }
    if (generation !== null) this.issuance.set(productId, { generation, candidates });
    return candidates;
  }

  /** Published releases of a product with this exact version string (changelog `version`). */
  async findPublishedVersion(productId: number, version: string): Promise<Release | null> {
    const row = await this.repo.findVersion(productId, version);
    if (row?.status !== 'published') return null;
    return (await this.hydrate([row]))[0]!;
  }

  async listForProduct(productId: number) {
    const config = await this.catalogue.getSoftwareConfig(productId);
    const auto = await this.storage.automatic();
    const releases = await this.hydrate(await this.repo.listReleases(productId));
    const taken = await this.siteCounter(productId);
    return {
      product_id: productId,
      config,
      automatic_storage_driver: auto.driver,
      releases: releases.map((r) => ({ ...r, sites_taken: taken.get(r.version_id) ?? 0 })),
    };
  }

  // ---- publication ----

  private async requireProduct(productId: number): Promise<Product> {
    const product = await this.catalogue.getProduct(productId);
    if (!product) throw new ApiError('product_not_found');
    return product;
  }

  /** Before reading an upload body: the product exists and can name its files. */
  async preflight(productId: number): Promise<Product> {
    const product = await this.requireProduct(productId);
    if (product.filename_template.includes('{slug}') && !product.slug)
      throw new ApiError('software_slug_required');
    return product;
  }

  /** Validates the shared publication fields (multipart gives text, JSON gives typed values). */
  private publication(
    product: Product,
    input: {
      version?: unknown;
      changelog?: unknown;
      set_current?: unknown;
      status?: unknown;
      filename?: unknown;
      channel?: unknown;
      rollout_percent?: unknown;
    },
    fromText: boolean,
  ): Publication {
    if (input.version === undefined || input.version === '') {
      throw new ApiError('rest_missing_param', { data: { params: { version: 'required' } } });
    }
    if (typeof input.version !== 'string') throw new ApiError('invalid_version');
    checkVersion(input.version);
    const status = input.status ?? 'published';
    if (status !== 'published' && status !== 'draft') {
      throw new ApiError('rest_invalid_param', { data: { params: { status: 'published or draft' } } });
    }
    const channel = input.channel === undefined ? 'stable' : parseChannel(input.channel);
    const rolloutPercent =
      input.rollout_percent === undefined ? 100 : parseRolloutPercent(input.rollout_percent, fromText);
    // Only a stable release becomes current by default, and only a stable one can be: the current
    // release is what stable sites and the storefront are given first.
    const setCurrent =
      input.set_current === undefined
        ? status === 'published' && channel === 'stable'
        : parseBool(input.set_current, 'set_current');
    if (setCurrent && status === 'draft') {
      throw new ApiError('invalid_parameters', {
        data: { params: { set_current: 'a draft cannot be current' } },
      });
    }
    if (setCurrent && channel !== 'stable') throw notStableCurrent('set_current');
    const changelog =
      input.changelog === undefined || input.changelog === null
        ? null
        : parseChangelog(input.changelog, fromText);
    const slug = product.slug ?? '';
    let fileName: string;
    if (input.filename !== undefined) {
      if (typeof input.filename !== 'string') throw new ApiError('invalid_filename');
      checkFileName(input.filename);
      const check = compareWithTemplate(product.filename_template, slug, input.version, input.filename);
      if (!check.valid) {
        throw new ApiError('filename_template_mismatch', {
          data: { expected_file_name: check.expected_file_name },
        });
      }
      fileName = input.filename;
    } else {
      if (product.filename_template.includes('{slug}') && !product.slug)
        throw new ApiError('software_slug_required');
      fileName = renderFileName(product.filename_template, slug, input.version);
      checkFileName(fileName);
    }
    return {
      version: input.version,
      changelog,
      status,
      setCurrent,
      fileName,
      metadata: EMPTY_METADATA,
      channel,
      rolloutPercent,
    };
  }

  /**
   * Inserts the release (and a new artifact) in one transaction. `beforeCommit` runs inside it
   * last: the upload's rename into the vault, so a release row never exists without its file and
   * a file never becomes part of the vault without its row (a crash in between leaves only an
   * unreferenced file, never a release).
   */
  private async insert(
    productId: number,
    pub: Publication,
    artifact: { id: number } | { insert: Omit<ArtifactInsert, 'created_at' | 'updated_at'> },
    binding: { file_size: number | null; file_sha256: string },
    beforeCommit?: () => Promise<void>,
    actor?: Actor,
    /** An upload: refused when its bytes are already another release's (docs/releases.md, 'Duplicates'). */
    refuseDuplicate = false,
  ): Promise<number> {
    const now = iso(this.clock.now());
    try {
      return await withTransaction(this.database, async (tx) => {
        await this.repo.lockProduct(productId, tx);
        if (await this.repo.findVersion(productId, pub.version, tx)) throw new ApiError('version_exists');
        if (refuseDuplicate) {
          // Under the product's lock: of two uploads of the same bytes at once, one is refused.
          const same = await this.repo.findReleaseBySha(productId, binding.file_sha256, tx);
          if (same) {
            throw new ApiError('duplicate_artifact', {
              message: `This file is already release ${same.version} (id ${same.id}) of this product.`,
              data: { release_id: same.id, version: same.version },
            });
          }
        }
        let artifactId: number;
        if ('id' in artifact) {
          const a = await this.repo.lockArtifact(artifact.id, tx);
          if (a?.state !== 'available') throw new ApiError('artifact_not_available');
          artifactId = a.id;
        } else {
          artifactId = await this.repo.insertArtifact(
            { ...artifact.insert, created_at: now, updated_at: now },
            tx,
          );
        }
        const current = pub.status === 'published' && pub.setCurrent;
        if (current) await this.repo.clearCurrent(productId, null, now, tx);
        const id = await this.repo.insertRelease(
          {
            product_id: productId,
            version: pub.version,
            status: pub.status,
            is_current: current ? 1 : 0,
            release_date: now,
            published_at: pub.status === 'published' ? now : null,
            withdrawn_at: null,
            changelog: pub.changelog === null ? null : JSON.stringify(pub.changelog),
            artifact_id: artifactId,
            file_name: pub.fileName,
            file_size: binding.file_size,
            file_sha256: binding.file_sha256,
            created_at: now,
            updated_at: now,
            ...pub.metadata,
            channel: pub.channel,
            rollout_percent: pub.rolloutPercent,
          },
          tx,
        );
        const changes = diff(
          {},
          {
            version: pub.version,
            status: pub.status,
            is_current: current,
            file_name: pub.fileName,
            file_size: binding.file_size,
            file_sha256: binding.file_sha256,
            artifact_id: artifactId,
            ...Object.fromEntries(Object.entries(pub.metadata).filter(([, v]) => v !== null)),
            ...(pub.channel !== 'stable' ? { channel: pub.channel } : {}),
            ...(pub.rolloutPercent !== 100 ? { rollout_percent: pub.rolloutPercent } : {}),
            ...(pub.versionOverride
              ? { version_override: true, header_version: pub.versionOverride.header_version ?? '' }
              : {}),
          },
        );
        await this.recordIn(actor, id, 'create', changes, tx);
        if (beforeCommit) await beforeCommit();
        return id;
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw new ApiError('version_exists');
      throw e;
    }
  }

  /** Multipart publication: the file is already in staging; it is discarded on any failure. */
  async createFromUpload(product: Product, upload: ReceivedUpload, actor?: Actor): Promise<Release> {
    const file = upload.file;
    try {
      if (!file) throw new ApiError('missing_file');
      for (const name of [
        'version',
        'set_current',
        'status',
        'filename',
        'storage_driver',
        'channel',
        'rollout_percent',
        'version_override',
      ] as const) {
        const v = upload.fields[name];
        if (v !== undefined && typeof v !== 'string') {
          throw new ApiError('rest_invalid_param', { data: { params: { [name]: 'text' } } });
        }
      }
      const pub: Publication = { ...this.publication(product, upload.fields, true), metadata: file.metadata };
      const override = parseOverride(upload.fields.version_override);
      if (!file.isZip) throw new ApiError('invalid_archive');
      pub.versionOverride = checkHeaderVersion(pub.version, file.header, override);
      const integrity = await this.signedIntegrity(file);
      let committed = false;
      const id = await this.insert(
        product.id,
        pub,
        {
          insert: {
            product_id: product.id,
            download_id: file.downloadId,
            driver: file.driver,
            storage_key: file.storageKey,
            key_id: file.staged.keyId,
            file_name: pub.fileName,
            file_size: file.size,
            stored_size: file.staged.storedSize,
            stored_etag: file.staged.etag ?? null,
            file_sha256: file.sha256,
            state: 'available',
            source_download_id: null,
            deletion_op: null,
            deleted_at: null,
            ...integrity,
          },
        },
        { file_size: file.size, file_sha256: file.sha256 },
        async () => {
          await file.staged.commit();
          committed = true;
        },
        actor,
        true,
      ).catch(async (e) => {
        // The rename happened but the transaction did not commit: take the file back out.
        if (committed) {
          const ref = {
            storageKey: file.storageKey,
            keyId: file.staged.keyId,
            fileSize: file.size,
            sha256: file.sha256,
          };
          await this.storage.driver(file.driver).delete?.(ref);
        }
        throw e;
      });
      return (await this.getRelease(id))!;
    } finally {
      await file?.staged.discard();
    }
  }

  /** JSON publication of an external HTTPS link (bytes never fetched; the SHA-256 is the admin's). */
  async createExternal(product: Product, body: ExternalReleaseBody, actor?: Actor): Promise<Release> {
    if (!isValidExternalUrl(body.external_url)) throw new ApiError('invalid_external_url');
    if (!SHA256_HEX.test(body.file_sha256)) throw new ApiError('invalid_file_sha256');
    const pub = this.publication(product, { ...body, filename: body.file_name }, false);
    const id = await this.insert(
      product.id,
      pub,
      {
        insert: {
          product_id: product.id,
          download_id: uuid(),
          driver: 'external',
          storage_key: body.external_url,
          key_id: null,
          file_name: pub.fileName,
          file_size: body.file_size ?? null,
          stored_size: null,
          file_sha256: body.file_sha256,
          state: 'available',
          source_download_id: null,
          deletion_op: null,
          deleted_at: null,
        },
      },
      { file_size: body.file_size ?? null, file_sha256: body.file_sha256 },
      undefined,
      actor,
    );
    return (await this.getRelease(id))!;
  }

  /**
   * JSON publication of a legacy catalogue file. It must have been protected (copied into the
   * vault) first; while its public copy still exists it can only be staged as a draft.
   */
  async createFromLegacy(product: Product, body: LegacyReleaseBody, actor?: Actor): Promise<Release> {
    const pub = this.publication(product, body, false);
    const legacy = await this.repo.findLegacy(body.legacy_download_id);
    if (!legacy) throw new ApiError('legacy_download_not_found');
    if (legacy.product_id !== product.id) throw new ApiError('cross_product_artifact_prohibited');
    const artifact = await this.repo.findProtectedCopy(legacy.download_id);
    if (!artifact) throw new ApiError('unprotected_artifact_prohibited');
    if (artifact.product_id !== product.id) throw new ApiError('cross_product_artifact_prohibited');
    if (artifact.state !== 'available') throw new ApiError('artifact_not_available');
    if (pub.status === 'published' && legacy.removed_at === null) {
      throw new ApiError('source_still_public', { data: { download_id: legacy.download_id } });
    }
    const id = await this.insert(
      product.id,
      pub,
      { id: artifact.id },
      {
        file_size: artifact.file_size === null ? null : Number(artifact.file_size),
        file_sha256: artifact.file_sha256,
      },
      undefined,
      actor,
    );
    return (await this.getRelease(id))!;
  }

  // ---- changes ----

  async update(
    productId: number,
    versionId: number,
    body: ReleaseUpdateBody,
    actor?: Actor,
  ): Promise<Release> {
    const changelog =
      body.changelog === undefined
        ? undefined
        : body.changelog === null
          ? null
          : parseChangelog(body.changelog, false);
    const metadata = metadataChanges(body);
    await this.requireRelease(productId, versionId);
    const now = iso(this.clock.now());
    await withTransaction(this.database, async (tx) => {
      await this.repo.lockProduct(productId, tx);
      const row = (await this.repo.lockRelease(versionId, tx))!;
      const channel = body.channel ?? row.channel;
      if (body.is_current === true && row.status !== 'published') throw notPublished(row.status);
      if (body.is_current === true && channel !== 'stable') throw notStableCurrent('is_current');
      if (body.is_current === true) await this.repo.clearCurrent(productId, versionId, now, tx);
      // A current release moved off stable stops being current (only a stable one can be).
      const uncurrent = channel !== 'stable' && row.is_current === 1 && body.is_current === undefined;
      const values = {
        ...(changelog !== undefined
          ? { changelog: changelog === null ? null : JSON.stringify(changelog) }
          : {}),
        ...(body.is_current !== undefined ? { is_current: body.is_current ? 1 : 0 } : {}),
        ...(uncurrent ? { is_current: 0 } : {}),
        ...metadata,
        ...(body.channel !== undefined ? { channel: body.channel } : {}),
        ...(body.rollout_percent !== undefined ? { rollout_percent: body.rollout_percent } : {}),
      };
      await this.repo.updateRelease(versionId, { ...values, updated_at: now }, tx);
      const changes = diff(row as unknown as Record<string, unknown>, values);
      const log = changes.changelog;
      if (log) changes.changelog = { before: parsedJson(log.before), after: parsedJson(log.after) };
      const action = changes.is_current && values.is_current === 1 ? 'make_current' : 'update';
      await this.recordIn(actor, versionId, action, changes, tx);
    });
    return (await this.getRelease(versionId))!;
  }

  /**
   * Raises, pauses (0) or completes (100) a release's staged rollout (docs/releases.md, 'Channels
   * and staged rollouts'), audited as `rollout`. The same percentage again changes nothing.
   */
  async setRollout(productId: number, versionId: number, percent: number, actor?: Actor): Promise<Release> {
    await this.requireRelease(productId, versionId);
    const now = iso(this.clock.now());
    await withTransaction(this.database, async (tx) => {
      await this.repo.lockProduct(productId, tx);
      const row = (await this.repo.lockRelease(versionId, tx))!;
      if (Number(row.rollout_percent) === percent) return;
      await this.repo.updateRelease(versionId, { rollout_percent: percent, updated_at: now }, tx);
      const changes = diff({ rollout_percent: Number(row.rollout_percent) }, { rollout_percent: percent });
      await this.recordIn(actor, versionId, 'rollout', changes, tx);
    });
    return (await this.getRelease(versionId))!;
  }

  /**
   * How many sites have taken each release (docs/releases.md, 'Channels and staged rollouts'): an
   * administrator's read, never the check's.
   */
  sitesTaken(productId: number): Promise<Map<number, number>> {
    return this.siteCounter(productId);
  }

  /**
   * published → withdrawn, in one transaction: lock the product's releases, check the release's
   * status, change it and run the withdraw hooks (its unclaimed download tokens stop working).
   * Withdrawing a withdrawn release changes nothing.
   */
  async withdraw(productId: number, versionId: number, actor?: Actor): Promise<Release> {
    await this.requireRelease(productId, versionId);
    const now = iso(this.clock.now());
    await withTransaction(this.database, async (tx) => {
      await this.repo.lockProduct(productId, tx);
      const row = (await this.repo.lockRelease(versionId, tx))!;
      if (row.status === 'withdrawn') return;
      if (row.status !== 'published') {
        throw new ApiError('release_state_conflict', { data: { release_status: row.status } });
      }
      await this.withdrawIn(row, 'withdrawn', now, tx);
      const changes = diff(row as unknown as Record<string, unknown>, { status: 'withdrawn', is_current: 0 });
      await this.recordIn(actor, versionId, 'withdraw', changes, tx);
    });
    return (await this.getRelease(versionId))!;
  }

  /** draft or withdrawn → published, after the artifact passes full revalidation. */
  async republish(
    productId: number,
    versionId: number,
    body: RepublishBody,
    actor?: Actor,
  ): Promise<Release> {
    const release = await this.requireRelease(productId, versionId);
    if (release.status === 'published') {
      throw new ApiError('release_state_conflict', { data: { release_status: release.status } });
    }
    const artifact = (await this.repo.findArtifact(release.artifact_id))!;
    await this.revalidate(artifact);
    const now = iso(this.clock.now());
    await withTransaction(this.database, async (tx) => {
      await this.repo.lockProduct(productId, tx);
      const row = (await this.repo.lockRelease(versionId, tx))!;
      if (row.status === 'published')
        throw new ApiError('release_state_conflict', { data: { release_status: row.status } });
      const a = await this.repo.lockArtifact(row.artifact_id, tx);
      if (a?.state !== 'available') throw new ApiError('artifact_not_available');
      // A first publication becomes current by default; restoring a withdrawn one does not.
      const current = body.set_current ?? row.status === 'draft';
      if (current) await this.repo.clearCurrent(productId, versionId, now, tx);
      await this.repo.updateRelease(
        versionId,
        {
          status: 'published',
          is_current: current ? 1 : 0,
          // The effective publication time stays the first one (entitlement windows depend on it).
          published_at: row.published_at ?? now,
          withdrawn_at: null,
          updated_at: now,
        },
        tx,
      );
      const after = { status: 'published', is_current: current ? 1 : 0 };
      await this.recordIn(
        actor,
        versionId,
        'republish',
        diff(row as unknown as Record<string, unknown>, after),
        tx,
      );
    });
    return (await this.getRelease(versionId))!;
  }

  // ---- artifact checks for publication and distribution ----

  /**
   * The cheap artifact-validity test of candidate selection ("a valid artifact" in
   * docs/distribution.md, 'Which release'), from metadata only: state, driver, checksum format,
   * HTTPS record, no public source. Null when valid.
   */
  async candidateProblem(release: Release): Promise<ErrorCode | null> {
    return this.problemOf(release, await this.repo.findArtifact(release.artifact_id));
  }

  private async problemOf(release: Release, artifact: ArtifactRow | undefined): Promise<ErrorCode | null> {
    if (artifact?.state !== 'available') return 'artifact_not_available';
    if (!this.storage.registry.has(artifact.driver)) return 'unsupported_storage_driver';
    if (!SHA256_HEX.test(release.file_sha256) || release.file_sha256 !== artifact.file_sha256) {
      return 'artifact_integrity_missing';
    }
    if (artifact.driver === 'external')
      return isValidExternalUrl(artifact.storage_key) ? null : 'artifact_integrity_missing';
    if (artifact.source_download_id) {
      const legacy = await this.repo.findLegacy(artifact.source_download_id);
      if (legacy && legacy.removed_at === null) return 'source_still_public';
    }
    return null;
  }

  /**
   * Full revalidation: everything candidateProblem checks, then the bytes (size, SHA-256 and, for
   * the encrypted vault, one authenticated pass in 64 KiB chunks). Throws the documented error
   * (`artifact_not_found`, `artifact_integrity_failed`, …: docs/distribution.md, section 8);
   * answers the stored file's stat snapshot (null for external links).
   */
  async revalidate(artifact: ArtifactRow): Promise<StatSnapshot | null> {
    if (artifact.state !== 'available') throw new ApiError('artifact_not_available');
    const driver = this.storage.driver(artifact.driver);
    if (!SHA256_HEX.test(artifact.file_sha256)) throw new ApiError('artifact_integrity_missing');
    if (!driver.managed) {
      if (!isValidExternalUrl(artifact.storage_key)) throw new ApiError('artifact_integrity_missing');
      return null;
    }
    if (artifact.driver === 'local' && (await this.storage.vault.publicRootConflict())) {
      throw new ApiError('vault_not_private');
    }
    if (artifact.source_download_id) {
      const legacy = await this.repo.findLegacy(artifact.source_download_id);
      if (legacy && legacy.removed_at === null) {
        throw new ApiError('source_still_public', { data: { download_id: legacy.download_id } });
      }
    }
    if (!driver.verify) throw new ApiError('unsupported_storage_driver');
    const result = await driver.verify(refOf(artifact));
    if (!result.ok) throw verifyError(result.reason);
    return result.snapshot;
  }

  /**
   * Pre-claim check of a release's artifact for the download route: the file is read in full before
   * the token is claimed (docs/distribution.md, '4. GET /software/download').
   */
  async precheckArtifact(release: Release): Promise<StatSnapshot> {
    const artifact = await this.repo.findArtifact(release.artifact_id);
    if (!artifact) throw new ApiError('artifact_not_found');
    if (artifact.driver === 'external') throw new ApiError('updater_external_link_prohibited');
    if (artifact.file_sha256 !== release.file_sha256) throw new ApiError('release_binding_changed');
    return (await this.revalidate(artifact))!;
  }

  /** The stored file's current stat (artifact_changed compares it with the pre-check's). */
  async statArtifact(release: Release): Promise<StatSnapshot> {
    const artifact = await this.repo.findArtifact(release.artifact_id);
    if (!artifact) throw new ApiError('artifact_not_found');
    const driver = this.storage.driver(artifact.driver);
    if (!driver.stat) throw new ApiError('storage_stat_unsupported');
    return driver.stat(refOf(artifact));
  }

  /** The plaintext bytes to stream after the claim committed. */
  async openArtifact(release: Release): Promise<OpenedArtifact> {
    const artifact = await this.repo.findArtifact(release.artifact_id);
    if (!artifact) throw new ApiError('artifact_not_found');
    const driver = this.storage.driver(artifact.driver);
    if (!driver.open) throw new ApiError('updater_external_link_prohibited');
    const chunks = await driver.open(refOf(artifact)).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') throw new ApiError('artifact_not_found');
      throw e;
    });
    return {
      chunks,
      size: Number(artifact.file_size),
      sha256: artifact.file_sha256,
      fileName: release.file_name,
      md5: artifact.file_md5,
      signature: artifact.signature,
    };
  }

  /** Locks the release row inside the caller's transaction (PostgreSQL; SQLite has one writer). */
  async lockRelease(versionId: number, tx: Tx): Promise<Release | null> {
    const row = await this.repo.lockRelease(versionId, tx);
    return row ? (await this.hydrate([row], tx))[0]! : null;
  }

  /** Counts a delivered download, inside the caller's transaction. */
  async recordDownload(versionId: number, tx: Tx): Promise<void> {
    await this.repo.countDownload(versionId, tx);
  }

  /** An artifact row, read in the caller's transaction (distribution's download redemption). */
  artifactIn(artifactId: number, tx?: Tx): Promise<ArtifactRow | undefined> {
    return this.repo.artifactIn(artifactId, tx);
  }
}

/**
 * The metadata fields a change names, checked once more past the schema (a URL with credentials,
 * a value with surrounding spaces) so every malformed one is `invalid_release_metadata`.
 */
function metadataChanges(body: MetadataInput): Partial<Record<MetadataField, string | null>> {
  const out: Partial<Record<MetadataField, string | null>> = {};
  for (const field of METADATA_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    if (value !== null) {
      const bad =
        value.trim() !== value ||
        (field === 'homepage' && !isWebUrl(value)) ||
        ((field === 'requires' || field === 'tested' || field === 'requires_php') && !WP_VERSION.test(value));
      if (bad) throw new ApiError('invalid_release_metadata', { data: { params: { [field]: 'invalid' } } });
    }
    out[field] = value;
  }
  return out;
}

/** A channel named at publication (multipart text or JSON), or 400 `invalid_channel`. */
function parseChannel(value: unknown): ReleaseChannel {
  if (!isChannel(value))
    throw new ApiError('invalid_channel', { data: { params: { channel: 'stable, rc, beta or alpha' } } });
  return value;
}

/** 0 to 100 (multipart gives text), or 400 `invalid_rollout_percent`. */
function parseRolloutPercent(value: unknown, fromText: boolean): number {
  const n = fromText && typeof value === 'string' && /^[0-9]{1,3}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 100) {
    throw new ApiError('invalid_rollout_percent', { data: { params: { rollout_percent: '0 to 100' } } });
  }
  return n;
}

function notStableCurrent(field: 'set_current' | 'is_current'): ApiError {
  return new ApiError('invalid_parameters', {
    data: { params: { [field]: 'only a stable release can be current' } },
  });
}

function notPublished(status: ReleaseStatus): ApiError {
  return new ApiError(status === 'withdrawn' ? 'release_withdrawn' : 'release_not_published');
}
