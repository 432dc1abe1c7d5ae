import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../http/errors.js';
import type { MediaService } from '../../modules/media/media.service.js';
import { compressedAsset, REVALIDATE, sendAsset } from '../static.js';
import { PLACEHOLDER_SVG, STORE_STYLESHEET, STORE_STYLESHEET_PATH, THEME_PATH, themeCss } from './theme.js';

/** A content-hashed file never changes: a browser or CDN may keep it for a year without asking. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * Images (/media/<hash>-<width>.webp, the placeholder) and the store's stylesheets. Every answer
 * carries X-Content-Type-Options: nosniff (set by the pages' hook, src/pages/pages.ts), so a file is
 * only ever read as the type it is served with.
 */
export async function mediaRoutes(app: FastifyInstance, opts: { media: MediaService }) {
  app.get('/media/placeholder.svg', async (_request, reply) =>
    reply
      .type('image/svg+xml')
      .header('cache-control', 'public, max-age=86400')
      // An SVG is a document: opened on its own it may run nothing and load nothing.
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
      .send(PLACEHOLDER_SVG),
  );

  app.get('/media/:name', async (request, reply) => {
    const file = await opts.media.file((request.params as { name: string }).name);
    if (!file) throw new ApiError('rest_no_route');
    return reply
      .type(file.content_type)
      .header('cache-control', IMMUTABLE)
      .header('content-security-policy', "default-src 'none'; sandbox")
      .send(file.bytes);
  });

  // Compressed, and revalidated (ETag) as its name has no hash (src/pages/static.ts).
  const stylesheet = compressedAsset(STORE_STYLESHEET);
  app.get(STORE_STYLESHEET_PATH, async (request, reply) =>
    sendAsset(request, reply, stylesheet, { type: 'text/css; charset=utf-8', cacheControl: REVALIDATE }),
  );

  // The accent colour is in the file's name, so the answer depends on the URL alone.
  app.get('/store/:file', async (request, reply) => {
    const match = THEME_PATH.exec((request.params as { file: string }).file);
    if (!match) throw new ApiError('rest_no_route');
    return reply.type('text/css; charset=utf-8').header('cache-control', IMMUTABLE).send(themeCss(match[1]!));
  });
}
