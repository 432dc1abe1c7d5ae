import type { Readable } from 'node:stream';
import type { Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../http/errors.js';
import { nulRefused } from '../../http/input.js';
import { uuid } from '../../random.js';
import { Inspector, UploadTooLarge } from './inspect.js';
import type { StagedFile } from './storage/driver.js';
import type { ArtifactStorage, ManagedDriverName } from './storage/storage.js';
import { EMPTY_PACKAGE, type PackageHeader, type PackageMetadata, readPackage } from './wp-headers.js';

/** A file received into private staging with what was learnt while it streamed. */
export interface ReceivedFile {
  staged: StagedFile;
  driver: ManagedDriverName;
  downloadId: string;
  storageKey: string;
  size: number;
  sha256: string;
  /** Base64 MD5 of the bytes (a download's Content-MD5). */
  md5: string;
  /** Raw SHA-384 digest of the bytes: what the release signature covers. */
  sha384: Buffer;
  isZip: boolean;
  /** The name the client gave the part (only its extension is used). */
  clientFileName: string;
  /** What the plugin or theme header and readme.txt inside the zip say (docs/releases.md). */
  metadata: PackageMetadata;
  /** The plugin or theme header WordPress identifies the zip by, with its version; null for any other zip. */
  header: PackageHeader | null;
}

export interface ReceivedUpload {
  /** Text fields by name (a JSON-typed part arrives parsed). */
  fields: Record<string, unknown>;
  file: ReceivedFile | null;
}

/** Multipart limits besides the file size: small fields, few parts (a hostile form stops early). */
const FIELD_LIMITS = {
  fieldNameSize: 100,
  fieldSize: 128 * 1024,
  fields: 12,
  files: 1,
  parts: 14,
  headerPairs: 20,
};

export const storageKeyFor = (downloadId: string, driver: ManagedDriverName): string =>
  `${downloadId.slice(0, 2)}/${downloadId}.${driver === 'local' || driver === 's3' ? 'zip' : 'tgv'}`;

/** A multipart stream's failure as the client's error (a malformed form is never a 500). */
export function mapStreamError(e: unknown): unknown {
  if (e instanceof ApiError) return e;
  if (e instanceof UploadTooLarge) return new ApiError('upload_too_large');
  const code = (e as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return new ApiError('upload_too_large');
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return new ApiError('invalid_parameters', { data: { params: { form: 'too many parts' } } });
  }
  if (code === 'FST_PROTO_VIOLATION' || code === 'FST_INVALID_JSON_FIELD_ERROR') {
    return new ApiError('invalid_parameters', { data: { params: { form: 'invalid field' } } });
  }
  if (code === 'FST_MP_PREMATURE_CLOSE' || code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') {
    return new ApiError('rest_invalid_param', { data: { params: { form: 'incomplete multipart body' } } });
  }
  if (e instanceof Error && /multipart|boundary|Unexpected end/i.test(e.message)) {
    return new ApiError('rest_invalid_param', { data: { params: { form: 'malformed multipart body' } } });
  }
  if (code?.startsWith('FST_')) {
    return new ApiError('invalid_parameters', { data: { params: { form: 'invalid multipart form' } } });
  }
  return e;
}

/**
 * Reads a multipart form: text fields from `allowed`, and one `file` part streamed straight into
 * the chosen driver's private staging while its SHA-256, MD5, SHA-384, size and zip trailer are
 * computed. The
 * driver is chosen when the file part starts, from the fields seen so far, so `storage_driver`
 * must come before `file` (curl -F keeps the order given). Any failure removes the staged file.
 */
export async function receiveUpload(
  request: FastifyRequest,
  opts: {
    allowed: ReadonlySet<string>;
    limit: number;
    storage: ArtifactStorage;
    /** Chooses the driver when the file part starts; may throw (e.g. vault_not_private). */
    chooseDriver: (fields: Record<string, unknown>) => Promise<ManagedDriverName>;
  },
): Promise<ReceivedUpload> {
  const fields: Record<string, unknown> = {};
  let file: ReceivedFile | null = null;
  try {
    const parts = request.parts({ limits: { ...FIELD_LIMITS, fileSize: opts.limit + 1 } });
    for await (const part of parts as AsyncIterable<Multipart>) {
      const name = part.fieldname;
      if (part.type === 'field') {
        if (!opts.allowed.has(name) || name === 'file') {
          throw new ApiError('invalid_parameters', {
            data: { params: { [name.slice(0, 100)]: 'unknown parameter' } },
          });
        }
        if (Object.hasOwn(fields, name)) {
          throw new ApiError('invalid_parameters', { data: { params: { [name]: 'given twice' } } });
        }
        if (typeof part.value === 'string' && part.value.includes('\0'))
          throw nulRefused(request, 'body', name);
        if (part.valueTruncated || part.fieldnameTruncated) {
          throw new ApiError('rest_invalid_param', { data: { params: { [name]: 'too long' } } });
        }
        if (name === 'storage_driver' && file && part.value !== file.driver) {
          throw new ApiError('invalid_parameters', {
            data: { params: { storage_driver: 'send storage_driver before the file part' } },
          });
        }
        fields[name] = part.value;
        continue;
      }
      if (name !== 'file' || file) {
        throw new ApiError('invalid_parameters', {
          data: { params: { [name.slice(0, 100)]: 'unexpected file' } },
        });
      }
      const driver = await opts.chooseDriver(fields);
      file = await stageFile(part.file, part.filename ?? '', { ...opts, driver });
    }
  } catch (e) {
    if (file) await file.staged.discard();
    throw mapStreamError(e);
  }
  return { fields, file };
}

/**
 * Streams one zip into the driver's private staging while its SHA-256, MD5, SHA-384, size, zip
 * trailer and WordPress headers are computed: an upload's file part, or a zip an import found on
 * disk (docs/migrating.md). A stream cut at the size limit (`truncated`, as a multipart part
 * reports it) or running past it is `upload_too_large`, and nothing stays staged.
 */
export async function stageFile(
  source: Readable & { truncated?: boolean },
  clientFileName: string,
  opts: { limit: number; storage: ArtifactStorage; driver: ManagedDriverName },
): Promise<ReceivedFile> {
  if (!clientFileName.toLowerCase().endsWith('.zip')) throw new ApiError('invalid_file_type');
  const downloadId = uuid();
  const storageKey = storageKeyFor(downloadId, opts.driver);
  const inspector = new Inspector(opts.limit, { integrity: true });
  const staged = await opts.storage.driver(opts.driver).put!(source, storageKey, inspector);
  if (source.truncated) {
    await staged.discard();
    throw new ApiError('upload_too_large');
  }
  // Never fails the upload: an unreadable header is no header (the staged file stays owned).
  const pkg = await readPackage(inspector.headers.captures).catch(() => EMPTY_PACKAGE);
  return {
    staged,
    driver: opts.driver,
    downloadId,
    storageKey,
    size: inspector.size,
    sha256: inspector.sha256,
    md5: inspector.integrity.md5,
    sha384: inspector.integrity.sha384,
    isZip: inspector.isZip(),
    clientFileName,
    metadata: pkg.metadata,
    header: pkg.header,
  };
}
