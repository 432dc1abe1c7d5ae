import { join } from 'node:path';
import type { S3Config } from '../../../config.js';
import { ApiError } from '../../../http/errors.js';
import type { Keyring } from '../../vault/keyring.js';
import type { ArtifactRow } from '../releases.model.js';
import type { ArtifactRef, StorageDriver, VerifyFailure } from './driver.js';
import { EncryptedVaultDriver } from './encrypted.js';
import { ExternalLinkDriver } from './external.js';
import { LocalVaultDriver } from './local.js';
import { StorageRegistry } from './registry.js';
import { MIN_PART_SIZE, ObjectStore, S3Driver } from './s3.js';
import { Vault } from './vault.js';

export interface StorageOptions {
  dataDir: string;
  vaultDir: string;
  publicRoots: string[];
  /** The store's vault keys (the vault module), which the encrypted drivers seal with. */
  keyring: Keyring;
  /** fsync artifacts before their release commits: as durable as the rows that reference them. */
  durableFiles: boolean;
  /** A bucket for new artifacts (S3_BUCKET); none keeps them in the vault. */
  s3?: S3Config | null;
  /** Multipart part size for the bucket (partSizeFor the upload limit). */
  s3PartSize?: number;
}

export type ManagedDriverName = 'local' | 'local_encrypted' | 's3' | 's3_encrypted';

/** The driver of the vault and of the bucket that store the same kind of bytes (plain or sealed). */
export const BUCKET_DRIVER_OF = { local: 's3', local_encrypted: 's3_encrypted' } as const;

export interface AutomaticChoice {
  driver: ManagedDriverName | null;
  reason: string;
}

export const refOf = (
  a: Pick<ArtifactRow, 'storage_key' | 'key_id' | 'file_size' | 'file_sha256' | 'stored_etag'>,
): ArtifactRef => ({
  storageKey: a.storage_key,
  keyId: a.key_id,
  fileSize: a.file_size === null ? null : Number(a.file_size),
  sha256: a.file_sha256,
  storedEtag: a.stored_etag ?? null,
});

/**
 * Maps a failed verification to its error code (docs/distribution.md, section 8; docs/releases.md).
 */
export function verifyError(reason: VerifyFailure): ApiError {
  if (reason === 'missing') return new ApiError('artifact_not_found');
  if (reason === 'key_unavailable') return new ApiError('vault_key_unavailable');
  return new ApiError('artifact_integrity_failed', { data: { reason } });
}

/**
 * The vault, the driver registry and the keys they seal with: the storage half of the releases module.
 * The automatic driver (upload without storage_driver, product driver unset) is `local` when
 * the vault is writable and outside every public root, else `local_encrypted` when the vault is
 * at least writable (only ciphertext could then be exposed), else none (503 storage_unavailable).
 */
export class ArtifactStorage {
  readonly vault: Vault;
  readonly keyring: Keyring;
  readonly registry = new StorageRegistry();
  readonly local: LocalVaultDriver;
  readonly encrypted: EncryptedVaultDriver;
  /** The old store's public web root (DATA_DIR/public); its uploads/ folder is served at /uploads. */
  readonly publicDir: string;
  readonly uploadsDir: string;
  /** The bucket new artifacts go to (S3_BUCKET), with its `s3` and `s3_encrypted` drivers; else null. */
  readonly objects: { store: ObjectStore; plain: S3Driver; encrypted: S3Driver } | null = null;

  constructor(opts: StorageOptions) {
    this.vault = new Vault(opts.vaultDir, opts.publicRoots, opts.durableFiles);
    this.keyring = opts.keyring;
    this.local = new LocalVaultDriver(this.vault);
    this.encrypted = new EncryptedVaultDriver(this.vault, this.keyring);
    this.registry.register(this.local);
    this.registry.register(this.encrypted);
    this.registry.register(new ExternalLinkDriver());
    if (opts.s3) {
      const store = new ObjectStore(opts.s3, opts.s3PartSize ?? MIN_PART_SIZE);
      this.objects = {
        store,
        plain: new S3Driver(store, null),
        encrypted: new S3Driver(store, this.keyring),
      };
      this.registry.register(this.objects.plain);
      this.registry.register(this.objects.encrypted);
    }
    this.publicDir = join(opts.dataDir, 'public');
    this.uploadsDir = join(this.publicDir, 'uploads');
  }

  /** At start: create the vault and sweep what dead processes left in staging. */
  async start(): Promise<number> {
    await this.vault.ensure().catch(() => {});
    await this.objects?.store.sweepUploads();
    return this.vault.sweepStaging();
  }

  driver(name: string): StorageDriver {
    return this.registry.get(name);
  }

  async automatic(): Promise<AutomaticChoice> {
    if (this.objects) return { driver: 's3', reason: 'S3_BUCKET is set: new files go to the bucket' };
    const h = await this.vault.health();
    if (!h.writable) return { driver: null, reason: 'the vault directory is not writable' };
    if (h.publicRoot) {
      return { driver: 'local_encrypted', reason: `the vault lies under the public root ${h.publicRoot}` };
    }
    return { driver: 'local', reason: 'the vault is writable and outside every public root' };
  }

  /**
   * The driver for new bytes: the request's, else the product's configured one, else automatic.
   * `local` is refused while the vault is under a public root; nothing works while it is not writable.
   */
  async chooseManaged(requested: string | undefined, configured: string): Promise<ManagedDriverName> {
    if (this.objects) return this.chooseInBucket(requested, configured);
    const name = requested || (configured === 'local' || configured === 'local_encrypted' ? configured : '');
    if (name && name !== 'local' && name !== 'local_encrypted') {
      if (name === 'external' && requested) {
        throw new ApiError('rest_invalid_param', {
          data: { params: { storage_driver: 'external links are published with the JSON body' } },
        });
      }
      if (requested) this.driver(name); // unknown: 501 unsupported_storage_driver
    }
    const auto = await this.automatic();
    if (!auto.driver) throw new ApiError('storage_unavailable');
    if (name === 'local' && auto.driver !== 'local') throw new ApiError('vault_not_private');
    if (name === 'local' || name === 'local_encrypted') return name;
    return auto.driver;
  }

  /**
   * With a bucket configured every new file goes there: `local` and `local_encrypted` (asked for,
   * or the product's) choose plain or sealed bytes, as `s3` and `s3_encrypted` do; automatic is
   * plain, the bucket being private as the vault is.
   */
  private chooseInBucket(requested: string | undefined, configured: string): ManagedDriverName {
    const name = requested || configured;
    if (name === 'local' || name === 'local_encrypted') return BUCKET_DRIVER_OF[name];
    if (name === 's3' || name === 's3_encrypted') return name;
    if (name === 'external' && requested) {
      throw new ApiError('rest_invalid_param', {
        data: { params: { storage_driver: 'external links are published with the JSON body' } },
      });
    }
    if (requested) this.driver(requested); // unknown: 501 unsupported_storage_driver
    return 's3';
  }

  /** Full verification of a stored artifact (bounded memory), or the matching error. */
  async verify(artifact: ArtifactRow): Promise<void> {
    const driver = this.driver(artifact.driver);
    if (!driver.verify) return;
    const result = await driver.verify(refOf(artifact));
    if (!result.ok) throw verifyError(result.reason);
  }
}
