import { requireAdmin } from '../../http/auth.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { METADATA_FIELDS, type MetadataField } from './releases.model.js';
import type { ReleasesModule } from './releases.module.js';
import {
  ArtifactDeleteBody,
  ArtifactParams,
  ArtifactResponse,
  DeletePublicSourceResponse,
  DeletionExecuteBody,
  DeletionJobResponse,
  DeletionPreviewBody,
  EmptyBody,
  OpParams,
  PreviewResponse,
  ProductIdParams,
  ProtectBody,
  ProtectResponse,
  ReleaseResponse,
  ReleaseUpdateBody,
  RepublishBody,
  RolloutBody,
  StorageStatusResponse,
  ValidateBody,
  ValidateResponse,
  VersionParams,
  VersionsResponse,
} from './releases.schemas.js';
import { uploadRoutes } from './upload.routes.js';

const tags = ['releases'];
const admin = { preValidation: requireAdmin };
const deletionCodes = { validationCodes: { unknown: 'invalid_parameters' as const } };
/** Every malformed metadata field answers one code (docs/releases.md, 'Metadata WordPress shows'). */
const METADATA_CODES = Object.fromEntries(
  METADATA_FIELDS.map((f) => [f, 'invalid_release_metadata' as const]),
) as Record<MetadataField, 'invalid_release_metadata'>;

/**
 * Release administration (docs/releases.md), artifact deletion and storage diagnostics; all
 * administrator-only.
 */
export async function releasesRoutes(app: App, opts: { module: ReleasesModule }) {
  const { releases, publishing, artifacts, deletions, storage } = opts.module;
  // Before the first request: leftovers of uploads cut off by a crash are swept.
  const swept = await storage.start();
  if (swept > 0) app.log.warn({ swept }, 'removed staging files left by an interrupted upload');
  const orphans = await artifacts.sweepOrphans();
  if (orphans > 0)
    app.log.warn(
      { orphans },
      'removed vault files or bucket objects no artifact names (an upload cut off before its commit)',
    );

  await app.register(uploadRoutes, { module: opts.module });

  app.get(
    '/software/products/:product_id/versions',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Software configuration and every release, drafts and withdrawn included',
        params: ProductIdParams,
        response: { 200: VersionsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => releases.listForProduct(request.params.product_id),
  );

  app.put(
    '/software/products/:product_id/versions/:version_id',
    {
      ...admin,
      config: {
        validationCodes: {
          invalid: {
            ...METADATA_CODES,
            channel: 'invalid_channel',
            rollout_percent: 'invalid_rollout_percent',
          },
        },
      },
      schema: {
        tags,
        summary:
          'Change the changelog, current flag, channel, rollout or what WordPress shows (version and artifact are immutable)',
        params: VersionParams,
        body: ReleaseUpdateBody,
        response: { 200: ReleaseResponse, ...errors(400, 401, 403, 404, 410) },
      },
    },
    (request) =>
      publishing.update(
        request.params.product_id,
        request.params.version_id,
        request.body as ReleaseUpdateBody,
        actorOf(request),
      ),
  );

  app.patch(
    '/software/products/:product_id/versions/:version_id/rollout',
    {
      ...admin,
      config: {
        validationCodes: {
          invalid: { rollout_percent: 'invalid_rollout_percent' },
        },
      },
      schema: {
        tags,
        summary: 'Raise, pause (0) or complete (100) the staged rollout of a release',
        params: VersionParams,
        body: RolloutBody,
        response: { 200: ReleaseResponse, ...errors(400, 401, 403, 404) },
      },
    },
    (request) =>
      publishing.setRollout(
        request.params.product_id,
        request.params.version_id,
        request.body.rollout_percent,
        actorOf(request),
      ),
  );

  app.post(
    '/software/products/:product_id/versions/:version_id/withdraw',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Withdraw a published release; unclaimed download tokens are invalidated',
        params: VersionParams,
        body: EmptyBody,
        response: { 200: ReleaseResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    (request) => publishing.withdraw(request.params.product_id, request.params.version_id, actorOf(request)),
  );

  app.post(
    '/software/products/:product_id/versions/:version_id/republish',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Revalidate the artifact and publish a draft or withdrawn release',
        params: VersionParams,
        body: RepublishBody,
        response: { 200: ReleaseResponse, ...errors(400, 401, 403, 404, 409, 500, 501) },
      },
    },
    (request) =>
      publishing.republish(
        request.params.product_id,
        request.params.version_id,
        request.body,
        actorOf(request),
      ),
  );

  app.post(
    '/software/products/:product_id/versions/:version_id/delete-public-source',
    {
      ...admin,
      schema: {
        tags,
        summary: "Remove a release's public catalogue copy once the vault copy verifies",
        params: VersionParams,
        body: EmptyBody,
        response: { 200: DeletePublicSourceResponse, ...errors(400, 401, 403, 404, 409, 500) },
      },
    },
    (request) =>
      artifacts.deletePublicSource(request.params.product_id, request.params.version_id, actorOf(request)),
  );

  app.post(
    '/software/products/:product_id/artifacts/protect',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Copy an approved catalogue file into the private vault',
        params: ProductIdParams,
        body: ProtectBody,
        response: { 200: ProtectResponse, 201: ProtectResponse, ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (request, reply) => {
      const { created, artifact } = await artifacts.protect(
        request.params.product_id,
        request.body.download_id,
        actorOf(request),
      );
      return reply.status(created ? 201 : 200).send({
        artifact_id: artifact.id,
        artifact_download_id: artifact.download_id,
        storage_driver: artifact.driver,
        file_sha256: artifact.file_sha256,
        file_size: Number(artifact.file_size),
      });
    },
  );

  app.post(
    '/software/products/:product_id/artifacts/validate',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Compare a file name and version with the effective filename template',
        params: ProductIdParams,
        body: ValidateBody,
        response: { 200: ValidateResponse, ...errors(400, 401, 403, 404) },
      },
    },
    (request) =>
      artifacts.validateFileName(request.params.product_id, request.body.file_name, request.body.version),
  );

  app.get(
    '/software/storage/status',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Vault path, writability, free space, public-root check, key status and counts',
        response: { 200: StorageStatusResponse, ...errors(401, 403) },
      },
    },
    () => artifacts.status(),
  );

  // ---- artifact deletion ----

  app.post(
    '/software/products/:product_id/artifact-deletions/preview',
    {
      ...admin,
      config: deletionCodes,
      schema: {
        tags,
        summary: 'Impact of deleting artifacts (by artifact_ids or release_ids, at most 100)',
        params: ProductIdParams,
        body: DeletionPreviewBody,
        response: { 200: PreviewResponse, ...errors(400, 401, 403, 404, 409, 500, 501) },
      },
    },
    (request) => deletions.preview(request.params.product_id, request.body),
  );

  app.post(
    '/software/products/:product_id/artifact-deletions',
    {
      ...admin,
      config: deletionCodes,
      schema: {
        tags,
        summary: "Delete artifacts: the preview's acknowledgement and fingerprint are required",
        params: ProductIdParams,
        body: DeletionExecuteBody,
        response: { 200: DeletionJobResponse, ...errors(400, 401, 403, 404, 409, 500, 501) },
      },
    },
    (request) => deletions.execute(request.params.product_id, request.body, actorOf(request)),
  );

  app.get(
    '/software/artifact-deletions/:op',
    {
      ...admin,
      schema: {
        tags,
        summary: 'A deletion job',
        params: OpParams,
        response: { 200: DeletionJobResponse, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => deletions.job(request.params.op),
  );

  app.post(
    '/software/artifact-deletions/:op/retry',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Run a failed deletion job again',
        params: OpParams,
        body: EmptyBody,
        response: { 200: DeletionJobResponse, ...errors(400, 401, 403, 404, 409, 500, 501) },
      },
    },
    (request) => deletions.retry(request.params.op),
  );

  app.get(
    '/software/products/:product_id/artifacts/:artifact_id',
    {
      ...admin,
      schema: {
        tags,
        summary: 'An artifact, its state and the releases bound to it',
        params: ArtifactParams,
        response: { 200: ArtifactResponse, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => deletions.artifactDetail(request.params.product_id, request.params.artifact_id),
  );

  app.delete(
    '/software/products/:product_id/artifacts/:artifact_id',
    {
      ...admin,
      config: deletionCodes,
      schema: {
        tags,
        summary: 'Delete one artifact (same acknowledgement and fingerprint rules as artifact-deletions)',
        params: ArtifactParams,
        body: ArtifactDeleteBody,
        response: { 200: DeletionJobResponse, ...errors(400, 401, 403, 404, 409, 500, 501) },
      },
    },
    (request) =>
      deletions.deleteOne(
        request.params.product_id,
        request.params.artifact_id,
        request.body,
        actorOf(request),
      ),
  );
}
