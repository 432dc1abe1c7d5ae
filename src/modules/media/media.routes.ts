import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { requireAdmin } from '../../http/auth.js';
import { ApiError } from '../../http/errors.js';
import { errors, IdParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { actorOf } from '../audit/audit.model.js';
import { SOFTWARE_IMAGES } from '../catalogue/catalogue.model.js';
import { ProductIdParams, ProductResponse, SoftwareConfigResponse } from '../catalogue/catalogue.schemas.js';
import type { CatalogueService } from '../catalogue/catalogue.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { MAX_IMAGE_BYTES, type MediaService } from './media.service.js';

const tags = ['storefront'];
const LogoResponse = Type.Object({ store_logo: Type.String() });
const description =
  'multipart/form-data with one field, file: a JPEG, PNG, WebP or GIF image of at most 10 MB ' +
  '(docs/storefront.md, "Images").';

/**
 * The one file part of an image upload, read into memory (at most MAX_IMAGE_BYTES: sharp needs
 * the whole picture). Anything but a single `file` part is refused before its bytes are read.
 */
async function receiveImage(request: FastifyRequest): Promise<Buffer> {
  if (!request.isMultipart()) throw new ApiError('rest_unsupported_media_type');
  try {
    const parts = request.parts({
      limits: { fileSize: MAX_IMAGE_BYTES, files: 1, fields: 0, parts: 1, headerPairs: 20 },
    });
    let bytes: Buffer | null = null;
    for await (const part of parts) {
      if (part.type !== 'file' || part.fieldname !== 'file') {
        throw new ApiError('invalid_parameters', {
          data: { params: { [part.fieldname.slice(0, 100)]: 'unknown parameter' } },
        });
      }
      bytes = await part.toBuffer();
    }
    if (!bytes || bytes.length === 0) throw new ApiError('image_required');
    return bytes;
  } catch (e) {
    if (e instanceof ApiError) throw e;
    const code = (e as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw new ApiError('image_too_large');
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') {
      throw new ApiError('invalid_parameters', { data: { params: { form: 'one part only: file' } } });
    }
    // A malformed or cut-off multipart body is the client's error, never a 500.
    throw new ApiError('rest_invalid_param', { data: { params: { form: 'malformed multipart body' } } });
  }
}

/**
 * The administrator's image routes: a product's image, its icon and banner, and the store's logo
 * (docs/storefront.md, docs/catalogue.md).
 * @fastify/multipart is registered in this scope only, so every other route keeps refusing any
 * content type but JSON.
 */
export async function mediaRoutes(
  app: App,
  opts: { media: MediaService; catalogue: CatalogueService; settings: SettingsService },
) {
  const { media, catalogue, settings } = opts;
  await app.register(multipart, { throwFileSizeLimit: true });

  /**
   * Saves an image change, then deletes the files it left unused: that cleanup must not turn the
   * saved change into a failure.
   */
  const saveThenPrune = async <T>(request: FastifyRequest, change: Promise<T>): Promise<T> => {
    const saved = await change;
    await media
      .pruneUnused()
      .catch((err) => request.log.warn({ err }, 'unused image files were not deleted'));
    return saved;
  };

  app.post(
    '/products/:id/image',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: "Upload the product's image (resized to 400 and 1200 px WebP)",
        description,
        consumes: ['multipart/form-data'],
        params: IdParams,
        response: { 200: ProductResponse, ...errors(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request) => {
      await catalogue.requireProduct(request.params.id);
      const hash = await media.store(await receiveImage(request));
      return saveThenPrune(request, catalogue.setImage(request.params.id, hash, actorOf(request)));
    },
  );

  app.delete(
    '/products/:id/image',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: "Remove the product's image",
        params: IdParams,
        response: { 200: ProductResponse, ...errors(400, 401, 403, 404) },
      },
    },
    (request) => saveThenPrune(request, catalogue.setImage(request.params.id, null, actorOf(request))),
  );

  // A product's icon and banner as WordPress shows them (docs/catalogue.md, 'Icons and banners').
  for (const kind of ['icon', 'banner'] as const) {
    const sizes = SOFTWARE_IMAGES[kind].map((s) => `${s.width}×${s.height}`).join(' and ');
    app.post(
      `/software/products/:product_id/${kind}`,
      {
        preValidation: requireAdmin,
        schema: {
          tags,
          summary: `Upload the product's ${kind} WordPress shows (cut to ${sizes} WebP)`,
          description:
            'multipart/form-data with one field, file: a JPEG, PNG, WebP or GIF image of at most 10 MB ' +
            '(docs/catalogue.md, "Icons and banners").',
          consumes: ['multipart/form-data'],
          params: ProductIdParams,
          response: { 200: SoftwareConfigResponse, ...errors(400, 401, 403, 404, 413, 415) },
        },
      },
      async (request) => {
        const product = request.params.product_id;
        await catalogue.getSoftwareConfig(product);
        const hash = await media.storeSoftwareImage(await receiveImage(request), kind);
        return saveThenPrune(request, catalogue.setSoftwareImage(product, kind, hash, actorOf(request)));
      },
    );

    app.delete(
      `/software/products/:product_id/${kind}`,
      {
        preValidation: requireAdmin,
        schema: {
          tags,
          summary: `Remove the product's ${kind}`,
          params: ProductIdParams,
          response: { 200: SoftwareConfigResponse, ...errors(400, 401, 403, 404) },
        },
      },
      (request) =>
        saveThenPrune(
          request,
          catalogue.setSoftwareImage(request.params.product_id, kind, null, actorOf(request)),
        ),
    );
  }

  app.post(
    '/settings/logo',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: "Upload the store's logo (the setting store_logo)",
        description,
        consumes: ['multipart/form-data'],
        response: { 200: LogoResponse, ...errors(400, 401, 403, 413, 415) },
      },
    },
    async (request) => {
      const hash = await media.store(await receiveImage(request));
      const updated = await saveThenPrune(request, settings.update({ store_logo: hash }, actorOf(request)));
      return { store_logo: updated.store_logo };
    },
  );

  app.delete(
    '/settings/logo',
    {
      preValidation: requireAdmin,
      schema: {
        tags,
        summary: "Remove the store's logo",
        response: { 200: LogoResponse, ...errors(401, 403) },
      },
    },
    async (request) => {
      const updated = await saveThenPrune(request, settings.update({ store_logo: '' }, actorOf(request)));
      return { store_logo: updated.store_logo };
    },
  );
}
