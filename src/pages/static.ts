import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Static text assets (the console's files, the store's script and stylesheets) sent compressed
 * (docs/performance.md, 'Static assets'). Each asset is compressed once, with Brotli and gzip at
 * their highest levels: the console's files when it is built (scripts/build-admin.ts writes
 * `<file>.br` and `<file>.gz` beside each), the store's, which are strings in the source, when the
 * server loads them. A request gets the encoding its Accept-Encoding prefers among br, gzip and
 * identity (br first on a tie), with Vary: Accept-Encoding so that no cache hands one to a client
 * that cannot read it.
 */

export type Encoding = 'br' | 'gzip' | 'identity';

/** The cache policy of a file whose name holds its content hash: it never changes under that name. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Anything else is kept but asked about each time: a 304 while its ETag still matches. */
export const REVALIDATE = 'no-cache';

/** Files worth compressing: text. Images and fonts are compressed formats already. */
export const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|map)$/;

export interface Asset {
  identity: Buffer;
  br?: Buffer;
  gzip?: Buffer;
  /** A strong ETag of the identity bytes; each encoding's tag adds its own suffix. */
  tag: string;
}

export const brotli = (bytes: Buffer) =>
  brotliCompressSync(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    },
  });
export const gzip = (bytes: Buffer) => gzipSync(bytes, { level: constants.Z_BEST_COMPRESSION });

export const contentTag = (bytes: Buffer) =>
  createHash('sha256').update(bytes).digest('base64url').slice(0, 22);

/** An asset from its bytes, compressed here (for the store's assets, which are source strings). */
export function compressedAsset(text: string | Buffer): Asset {
  const identity = Buffer.isBuffer(text) ? text : Buffer.from(text);
  return { identity, br: brotli(identity), gzip: gzip(identity), tag: contentTag(identity) };
}

/**
 * The encoding to send: the acceptable one (q > 0) with the highest q, br before gzip before
 * identity on a tie. `*` stands for any encoding not named; identity is acceptable unless refused
 * by name or by `*;q=0`.
 */
export function negotiate(header: string | undefined, available: { br: boolean; gzip: boolean }): Encoding {
  const q = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) weight = Number(m[1]);
    }
    q.set(name === 'x-gzip' ? 'gzip' : name, Number.isFinite(weight) ? weight : 0);
  }
  const weight = (name: Encoding) => q.get(name) ?? q.get('*') ?? (name === 'identity' ? 1 : 0);
  let best: Encoding = 'identity';
  let bestQ = 0;
  for (const name of ['br', 'gzip', 'identity'] as const) {
    if (name !== 'identity' && !available[name]) continue;
    const w = weight(name);
    if (w > bestQ) [best, bestQ] = [name, w];
  }
  // Nothing acceptable: identity all the same (a 406 would break more clients than it helps).
  return best;
}

/** True when If-None-Match names this asset in any of its encodings (or is `*`). */
function notModified(request: FastifyRequest, asset: Asset): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag.replace(/^"|"$/g, '').replace(/-(br|gz)$/, '') === asset.tag;
  });
}

/**
 * Sends an asset in the negotiated encoding, with its Content-Length, ETag and cache policy; a
 * matching If-None-Match is answered 304 with no body. HEAD gets the same headers (Fastify's HEAD
 * route sets Content-Length from the body it drops). Ranges are not served (Accept-Ranges: none):
 * a Range header is ignored and the whole asset is sent with 200, as HTTP allows.
 */
export function sendAsset(
  request: FastifyRequest,
  reply: FastifyReply,
  asset: Asset,
  opts: { type: string; cacheControl: string },
) {
  const encoding = negotiate(request.headers['accept-encoding'], { br: !!asset.br, gzip: !!asset.gzip });
  const body = encoding === 'br' ? asset.br! : encoding === 'gzip' ? asset.gzip! : asset.identity;
  const suffix = encoding === 'br' ? '-br' : encoding === 'gzip' ? '-gz' : '';
  reply
    .type(opts.type)
    .header('vary', 'Accept-Encoding')
    .header('cache-control', opts.cacheControl)
    .header('etag', `"${asset.tag}${suffix}"`)
    .header('accept-ranges', 'none');
  if (notModified(request, asset)) return reply.code(304).send();
  if (encoding !== 'identity') reply.header('content-encoding', encoding);
  return reply.header('content-length', body.length).send(body);
}
