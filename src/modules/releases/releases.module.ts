import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Database } from '../../db/database.js';
import type { AuditService } from '../audit/audit.module.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { KeyVault } from '../vault/vault.module.js';
import { ArtifactsService } from './artifacts.service.js';
import { BucketMigration } from './bucket-migration.js';
import { DeletionsService } from './deletions.service.js';
import { PublishingService } from './publishing.service.js';
import { ReleasesRepository } from './releases.repository.js';
import { ReleasesService } from './releases.service.js';
import { ReleaseSignatures, type ReleaseSigner } from './signatures.js';
import { partSizeFor } from './storage/s3.js';
import { ArtifactStorage } from './storage/storage.js';

export type { BucketMigration, BucketMigrationResult } from './bucket-migration.js';
export type { Release } from './releases.model.js';
export type { OpenedArtifact, OutstandingTokenCounter, WithdrawHook } from './releases.service.js';
export { ReleasesService } from './releases.service.js';
export type { ReleaseSignatures, ReleaseSigner, SigningStepResult } from './signatures.js';

export interface ReleasesModule {
  /** What other modules use: candidates, releases, artifact checks and streams, withdraw hooks. */
  releases: ReleasesService;
  /** Publishing and changing releases (the administrator's routes). */
  publishing: PublishingService;
  artifacts: ArtifactsService;
  deletions: DeletionsService;
  storage: ArtifactStorage;
  /** The data step that signs artifacts stored before signing existed (run by src/cli.ts). */
  signatures: ReleaseSignatures;
  /** Moves the vault's artifacts to the bucket (run by src/cli.ts, docs/operations.md). */
  bucketMigration: BucketMigration;
  maxUploadBytes: number;
}

/** Wires the releases module; its routes sweep staging once before the server accepts uploads. */
export function createReleases(deps: {
  database: Database;
  catalogue: CatalogueService;
  clock: Clock;
  config: Config;
  /** The origin public URLs are built on (final only once the server listens). */
  publicOrigin: () => string;
  /** Records the administrator's changes to releases and artifacts (docs/admin.md, 'Audit trail'). */
  audit: AuditService;
  /** Signs every stored artifact (the signing module; docs/releases.md, 'Signatures and Content-MD5'). */
  signer: ReleaseSigner;
  /** The store's key vault: encrypted artifacts are sealed with its keys, and its rotation re-seals them. */
  vault: KeyVault;
}): ReleasesModule {
  const { config } = deps;
  const repo = new ReleasesRepository(deps.database);
  const storage = new ArtifactStorage({
    dataDir: config.dataDir,
    vaultDir: config.vaultDir,
    publicRoots: config.publicRoots,
    keyring: deps.vault.keyring,
    // Files are exactly as durable as the rows that reference them: PostgreSQL commits and
    // SQLITE_SYNCHRONOUS=FULL survive power loss, so their artifacts are fsynced; with SQLite's
    // default NORMAL the last commits (and uploads) may roll back on power loss, never on a crash.
    durableFiles: config.database.kind === 'postgres' || config.database.synchronous === 'FULL',
    s3: config.s3,
    s3PartSize: partSizeFor(config.maxUploadBytes),
  });
  const releases = new ReleasesService(repo, storage, deps.catalogue, deps.clock, deps.signer);
  const publishing = new PublishingService(
    deps.database,
    repo,
    releases,
    storage,
    deps.catalogue,
    deps.clock,
    deps.audit,
  );
  const signatures = new ReleaseSignatures(repo, storage, deps.signer, deps.clock);
  const artifacts = new ArtifactsService(
    deps.database,
    repo,
    storage,
    releases,
    deps.catalogue,
    deps.clock,
    {
      maxUploadBytes: config.maxUploadBytes,
      publicOrigin: deps.publicOrigin,
    },
    deps.audit,
    deps.vault,
  );
  const deletions = new DeletionsService(
    deps.database,
    repo,
    storage,
    releases,
    deps.catalogue,
    deps.clock,
    deps.audit,
  );
  const bucketMigration = new BucketMigration(deps.database, repo, storage, deps.clock, deps.audit);
  return {
    releases,
    publishing,
    artifacts,
    deletions,
    storage,
    signatures,
    bucketMigration,
    maxUploadBytes: config.maxUploadBytes,
  };
}
