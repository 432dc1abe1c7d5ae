import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { type Clock, iso } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { withTransaction } from '../../db/transaction.js';
import { ApiError } from '../../http/errors.js';
import { uuid } from '../../random.js';
import { type Actor, diff } from '../audit/audit.model.js';
import type { AuditService, ChangeRecorder } from '../audit/audit.service.js';
import type { Product } from '../catalogue/catalogue.model.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import { isChannel } from './channels.js';
import {
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
  renderFileName,
  SHA256_HEX,
} from './releases.model.js';
import type { ArtifactInsert, ReleasesRepository } from './releases.repository.js';
import type {
  ExternalReleaseBody,
  LegacyReleaseBody,
  MetadataInput,
  ReleaseUpdateBody,
  RepublishBody,
} from './releases.schemas.js';
import { notPublished, type ReleasesService } from './releases.service.js';
import type { ReleaseChannel } from './releases.tables.js';
import { isValidExternalUrl } from './storage/external.js';
import type { ArtifactStorage } from './storage/storage.js';
import { mapStreamError, type ReceivedUpload, stageFile } from './upload.js';
import { EMPTY_METADATA, isWebUrl, type PackageMetadata, WP_VERSION } from './wp-headers.js';

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

/** A stored changelog (JSON text) as the audit trail shows it. */
const parsedJson = (text: unknown): unknown => (typeof text === 'string' ? JSON.parse(text) : null);

/**
 * Publishing and changing releases (docs/releases.md): the three ways in (upload, external link,
 * protected legacy file), then changelog, metadata, current flag, channel and rollout, withdrawal
 * and republication, each in one transaction under the product's lock and audited. Releases are
 * immutable in version and artifact binding. The reads, the withdraw seam and the artifact checks
 * that distribution uses are ReleasesService's.
 */
export class PublishingService {
  /** Records an administrator's change to a release in its transaction (docs/admin.md, 'Audit trail'). */
  private readonly recordIn: ChangeRecorder;

  constructor(
    private readonly database: Pick<Database, 'db'>,
    private readonly repo: ReleasesRepository,
    private readonly releases: ReleasesService,
    private readonly storage: ArtifactStorage,
    private readonly catalogue: CatalogueService,
    private readonly clock: Clock,
    audit: AuditService,
  ) {
    this.recordIn = audit.recorderOf('release');
  }

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
      const integrity = await this.releases.signedIntegrity(file);
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
      return (await this.releases.getRelease(id))!;
    } finally {
      await file?.staged.discard();
    }
  }

  /**
   * A release from a zip on disk (an import, docs/migrating.md): staged, checked and published as
   * an upload of the same file with the same `version` and `changelog` is. A version the product
   * already has is that release (`created` false), so an import run again makes it once.
   */
  async createFromFile(
    productId: number,
    path: string,
    fields: { version: string; changelog?: string },
    limit: number,
    actor?: Actor,
  ): Promise<{ id: number; created: boolean }> {
    const product = await this.preflight(productId);
    const existing = await this.repo.findVersion(productId, fields.version);
    if (existing) return { id: existing.id, created: false };
    const driver = await this.storage.chooseManaged(undefined, product.storage_driver);
    const file = await stageFile(createReadStream(path), basename(path), {
      limit,
      storage: this.storage,
      driver,
    }).catch((e: unknown) => {
      throw mapStreamError(e);
    });
    const release = await this.createFromUpload(product, { fields, file }, actor);
    return { id: release.version_id, created: true };
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
    return (await this.releases.getRelease(id))!;
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
    return (await this.releases.getRelease(id))!;
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
    await this.releases.requireRelease(productId, versionId);
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
    return (await this.releases.getRelease(versionId))!;
  }

  /**
   * Raises, pauses (0) or completes (100) a release's staged rollout (docs/releases.md, 'Channels
   * and staged rollouts'), audited as `rollout`. The same percentage again changes nothing.
   */
  async setRollout(productId: number, versionId: number, percent: number, actor?: Actor): Promise<Release> {
    await this.releases.requireRelease(productId, versionId);
    const now = iso(this.clock.now());
    await withTransaction(this.database, async (tx) => {
      await this.repo.lockProduct(productId, tx);
      const row = (await this.repo.lockRelease(versionId, tx))!;
      if (Number(row.rollout_percent) === percent) return;
      await this.repo.updateRelease(versionId, { rollout_percent: percent, updated_at: now }, tx);
      const changes = diff({ rollout_percent: Number(row.rollout_percent) }, { rollout_percent: percent });
      await this.recordIn(actor, versionId, 'rollout', changes, tx);
    });
    return (await this.releases.getRelease(versionId))!;
  }

  /**
   * published → withdrawn, in one transaction: lock the product's releases, check the release's
   * status, change it and run the withdraw hooks (its unclaimed download tokens stop working).
   * Withdrawing a withdrawn release changes nothing.
   */
  async withdraw(productId: number, versionId: number, actor?: Actor): Promise<Release> {
    await this.releases.requireRelease(productId, versionId);
    const now = iso(this.clock.now());
    await withTransaction(this.database, async (tx) => {
      await this.repo.lockProduct(productId, tx);
      const row = (await this.repo.lockRelease(versionId, tx))!;
      if (row.status === 'withdrawn') return;
      if (row.status !== 'published') {
        throw new ApiError('release_state_conflict', { data: { release_status: row.status } });
      }
      await this.releases.withdrawIn(row, 'withdrawn', now, tx);
      const changes = diff(row as unknown as Record<string, unknown>, { status: 'withdrawn', is_current: 0 });
      await this.recordIn(actor, versionId, 'withdraw', changes, tx);
    });
    return (await this.releases.getRelease(versionId))!;
  }

  /** draft or withdrawn → published, after the artifact passes full revalidation. */
  async republish(
    productId: number,
    versionId: number,
    body: RepublishBody,
    actor?: Actor,
  ): Promise<Release> {
    const release = await this.releases.requireRelease(productId, versionId);
    if (release.status === 'published') {
      throw new ApiError('release_state_conflict', { data: { release_status: release.status } });
    }
    const artifact = (await this.repo.findArtifact(release.artifact_id))!;
    await this.releases.revalidate(artifact);
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
    return (await this.releases.getRelease(versionId))!;
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
