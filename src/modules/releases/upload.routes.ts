import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import multipart from '@fastify/multipart';
import { requireAdmin } from '../../http/auth.js';
import { ApiError } from '../../http/errors.js';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { validationError, validatorCompiler } from '../../http/validation.js';
import { actorOf } from '../audit/audit.model.js';
import { PUBLIC_SEGMENT } from './artifacts.service.js';
import type { ReleasesModule } from './releases.module.js';
import {
  type ExternalReleaseBody,
  IdParams,
  LegacyDownloadResponse,
  type LegacyReleaseBody,
  ProductIdParams,
  ReleaseJsonBody,
  ReleaseResponse,
} from './releases.schemas.js';
import { receiveUpload } from './upload.js';

const UPLOAD_FIELDS = new Set([
  'file',
  'version',
  'storage_driver',
  'changelog',
  'set_current',
  'filename',
  'status',
  'channel',
  'rollout_percent',
  'version_override',
]);
const EXTERNAL_ONLY = ['file_sha256', 'file_size', 'file_name'] as const;

const jsonCodes = {
  invalid: {
    version: 'invalid_version',
    external_url: 'invalid_external_url',
    file_sha256: 'invalid_file_sha256',
    file_name: 'invalid_filename',
    channel: 'invalid_channel',
    rollout_percent: 'invalid_rollout_percent',
  },
} as const;
const validateJson = validatorCompiler({
  schema: ReleaseJsonBody,
  method: 'POST',
  url: '',
  httpPart: 'body',
}) as ((data: unknown) => boolean) & { errors?: never[] };

/**
 * Routes that take multipart bodies. @fastify/multipart is registered in this scope only, so every
 * other route keeps refusing any content type but JSON (415).
 */
export async function uploadRoutes(app: App, opts: { module: ReleasesModule }) {
  const { publishing, artifacts, storage, maxUploadBytes } = opts.module;
  await app.register(multipart, { throwFileSizeLimit: true });

  // An upload refused early leaves its body unread: the error handler reads and drops the rest,
  // within bounds, before the connection closes (src/http/linger.ts).

  app.post(
    '/software/products/:product_id/versions',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['releases'],
        summary:
          'Publish a release: multipart upload, or JSON for an external link or a protected catalogue file',
        description:
          'multipart/form-data fields: file (.zip, required), version, storage_driver (local|local_encrypted, ' +
          'or s3|s3_encrypted when a bucket is configured, before file), changelog (text or JSON), set_current (true|false), filename, status (published|draft), ' +
          'channel (stable|rc|beta|alpha), rollout_percent (0-100), ' +
          "version_override (true|1: publish although version differs from the zip's plugin or theme header Version, " +
          'else 400 release_version_mismatch; audited). An upload whose SHA-256 is already a release of the product is 409 duplicate_artifact. ' +
          'application/json: {version, external_url, file_sha256, file_size?, file_name?, changelog?, ' +
          'set_current?, status?, channel?, rollout_percent?} or {version, legacy_download_id, changelog?, ' +
          'set_current?, status?, channel?, rollout_percent?}.',
        consumes: ['multipart/form-data', 'application/json'],
        params: ProductIdParams,
        response: { 201: ReleaseResponse, ...errors(400, 401, 403, 404, 409, 413, 415, 501, 503) },
      },
    },
    async (request, reply) => {
      const product = await publishing.preflight(request.params.product_id);
      if (request.isMultipart()) {
        const upload = await receiveUpload(request, {
          allowed: UPLOAD_FIELDS,
          limit: maxUploadBytes,
          storage,
          chooseDriver: (fields) => {
            const requested = fields.storage_driver;
            if (requested !== undefined && typeof requested !== 'string') {
              throw new ApiError('rest_invalid_param', { data: { params: { storage_driver: 'text' } } });
            }
            return storage.chooseManaged(requested, product.storage_driver);
          },
        });
        return reply.status(201).send(await publishing.createFromUpload(product, upload, actorOf(request)));
      }
      const body = request.body;
      if (!validateJson(body)) throw validationError(validateJson.errors ?? [], 'body', jsonCodes);
      const json = body as ReleaseJsonBody;
      if (json.external_url !== undefined && json.legacy_download_id !== undefined) {
        throw new ApiError('invalid_parameters', {
          data: { params: { legacy_download_id: 'give external_url or legacy_download_id, not both' } },
        });
      }
      if (json.external_url !== undefined) {
        if (json.file_sha256 === undefined) {
          throw new ApiError('rest_missing_param', { data: { params: { file_sha256: 'required' } } });
        }
        return reply
          .status(201)
          .send(await publishing.createExternal(product, json as ExternalReleaseBody, actorOf(request)));
      }
      if (json.legacy_download_id !== undefined) {
        const extra = EXTERNAL_ONLY.find((f) => json[f] !== undefined);
        if (extra)
          throw new ApiError('invalid_parameters', { data: { params: { [extra]: 'external links only' } } });
        return reply
          .status(201)
          .send(await publishing.createFromLegacy(product, json as LegacyReleaseBody, actorOf(request)));
      }
      throw new ApiError('missing_file');
    },
  );

  app.post(
    '/products/:id/downloads',
    {
      preValidation: requireAdmin,
      schema: {
        tags: ['releases'],
        summary: "Add a file to the legacy catalogue's public uploads folder (served to anyone)",
        description: 'multipart/form-data with one field: file.',
        consumes: ['multipart/form-data'],
        params: IdParams,
        response: { 201: LegacyDownloadResponse, ...errors(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) throw new ApiError('rest_unsupported_media_type');
      return reply
        .status(201)
        .send(await artifacts.uploadLegacy(request.params.id, request, actorOf(request)));
    },
  );
}

/**
 * The legacy catalogue's public folder, served to anyone like a web server would (outside /v1).
 * Only generated path segments resolve; the vault is never under this tree.
 */
export async function publicUploadsRoutes(app: App, opts: { uploadsDir: string }) {
  app.get('/uploads/*', { schema: { hide: true } }, async (request, reply) => {
    const rest = (request.params as { '*': string })['*'] ?? '';
    const segments = rest.split('/');
    if (segments.length > 8 || !segments.every((s) => PUBLIC_SEGMENT.test(s) && !s.includes('..'))) {
      throw new ApiError('rest_no_route');
    }
    const path = join(opts.uploadsDir, ...segments);
    const s = await stat(path).catch(() => null);
    if (!s?.isFile()) throw new ApiError('rest_no_route');
    return reply
      .header(
        'content-type',
        path.toLowerCase().endsWith('.zip') ? 'application/zip' : 'application/octet-stream',
      )
      .header('content-length', s.size)
      .header('x-content-type-options', 'nosniff')
      .send(createReadStream(path));
  });
}
