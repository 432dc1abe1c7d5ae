import { BoundedMap } from '../../bounded-map.js';
import type { Clock } from '../../clock.js';
import type { Tx } from '../../db/transaction.js';
import { ApiError, type ErrorCode } from '../../http/errors.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { type ArtifactRow, type Release, type ReleaseRow, SHA256_HEX, toRelease } from './releases.model.js';
import type { ReleasesRepository } from './releases.repository.js';
import type { ReleaseStatus } from './releases.tables.js';
import { type ArtifactIntegrity, type ReleaseSigner, signArtifact } from './signatures.js';
import type { StatSnapshot } from './storage/driver.js';
import { isValidExternalUrl } from './storage/external.js';
import { type ArtifactStorage, refOf, verifyError } from './storage/storage.js';

/** Why a release is withdrawn: by the administrator, or because its artifact is being deleted. */
export type WithdrawReason = 'withdrawn' | 'artifact_deleted';

/** Runs inside the withdrawal transaction (e.g. the token module invalidates unclaimed tokens). */
export type WithdrawHook = (ctx: { tx: Tx; release: ReleaseRow; reason: WithdrawReason }) => Promise<void>;

/** Counts unclaimed, unexpired, not invalidated download tokens per artifact id. */
export type OutstandingTokenCounter = (artifactIds: number[]) => Promise<Map<number, number>>;

/** Counts, per release of a product, the distinct sites whose download of it is on record. */
export type SiteCounter = (productId: number) => Promise<Map<number, number>>;

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
 * The releases as the rest of the store reads them (docs/releases.md): a release, a product's
 * releases and its issuance candidates, the artifact checks and streams the distribution module
 * needs, and the withdraw seam every withdrawal runs through. Publishing and changing releases is
 * PublishingService's (publishing.service.ts).
 */
export class ReleasesService {
  private readonly withdrawHooks: WithdrawHook[] = [];
  private tokenCounter: OutstandingTokenCounter = async (ids) => new Map(ids.map((id) => [id, 0]));
  private siteCounter: SiteCounter = async () => new Map();

  constructor(
    private readonly repo: ReleasesRepository,
    readonly storage: ArtifactStorage,
    private readonly catalogue: CatalogueService,
    private readonly clock: Clock,
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

  /**
   * How many sites have taken each release (docs/releases.md, 'Channels and staged rollouts'): an
   * administrator's read, never the check's.
   */
  sitesTaken(productId: number): Promise<Map<number, number>> {
    return this.siteCounter(productId);
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
   * the token is claimed (docs/distribution.md, '4. GET /software/download'). `row`: the release's
   * artifact row when the caller already read it (the download reads it with the token).
   */
  async precheckArtifact(release: Release, row?: ArtifactRow): Promise<StatSnapshot> {
    const artifact = row ?? (await this.repo.findArtifact(release.artifact_id));
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

  /**
   * The plaintext bytes to stream after the claim committed. `row`: the release's artifact row when
   * the caller already read it (the download, in its claim's transaction).
   */
  async openArtifact(release: Release, row?: ArtifactRow): Promise<OpenedArtifact> {
    const artifact = row ?? (await this.repo.findArtifact(release.artifact_id));
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

export function notPublished(status: ReleaseStatus): ApiError {
  return new ApiError(status === 'withdrawn' ? 'release_withdrawn' : 'release_not_published');
}
