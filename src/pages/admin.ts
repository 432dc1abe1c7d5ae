import { readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import { type Asset, COMPRESSIBLE, contentTag, IMMUTABLE, REVALIDATE, sendAsset } from './static.js';

/** Where `npm run build` puts the console (console, built by Vite): `dist/admin` from src/ or dist/. */
export const ADMIN_DIR = fileURLToPath(new URL('../../dist/admin/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** One path segment of a built file: no dot files, no `..`, nothing to escape the directory. */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * The console's script may talk to its own origin only; it is never framed and sends its origin
 * only to itself (the license pages' URLs carry ids, not secrets, but nothing else needs them).
 */
const CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
  "form-action 'self'",
].join('; ');

/**
 * The store owner's console (docs/admin.md): a single-page app served at /admin. Every path that
 * is not a file answers index.html (deep links: the app routes in the browser), revalidated on
 * each load (no-cache with an ETag); the hashed files under /admin/assets/ are cached for a year.
 * Text files are sent Brotli- or gzip-compressed from the `.br` and `.gz` files the build wrote
 * beside them (src/pages/static.ts). A missing file is a 404, and a server whose console was never
 * built answers 503 `admin_not_built` rather than failing.
 */
export async function adminConsole(app: FastifyInstance, opts: { dir?: string }) {
  const dir = opts.dir ?? ADMIN_DIR;
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'same-origin');
    done(null, payload);
  });

  // Each file read once with its compressed copies, and read again when it changes on disk (a
  // rebuilt console under a running server).
  const loaded = new Map<string, { mtimeMs: number; size: number; asset: Asset }>();
  async function load(path: string): Promise<Asset | null> {
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) return null;
    const cached = loaded.get(path);
    if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.asset;
    const identity = await readFile(path);
    const copy = (suffix: string) =>
      COMPRESSIBLE.test(path) ? readFile(path + suffix).catch(() => undefined) : undefined;
    const asset: Asset = {
      identity,
      br: await copy('.br'),
      gzip: await copy('.gz'),
      tag: contentTag(identity),
    };
    loaded.set(path, { mtimeMs: info.mtimeMs, size: info.size, asset });
    return asset;
  }

  async function sendIndex(request: FastifyRequest, reply: FastifyReply) {
    const page = await load(join(dir, 'index.html'));
    if (!page) throw new ApiError('admin_not_built');
    reply.header('content-security-policy', CSP);
    return sendAsset(request, reply, page, { type: 'text/html; charset=utf-8', cacheControl: REVALIDATE });
  }

  async function sendFile(request: FastifyRequest, reply: FastifyReply, segments: string[]) {
    // The build's compressed copies are sent only as the encoding of their file, never by name.
    const last = segments.at(-1) ?? '';
    if (!segments.every((s) => SEGMENT.test(s)) || /\.(br|gz)$/.test(last))
      throw new ApiError('rest_no_route');
    const path = join(dir, ...segments);
    const asset = await load(path);
    if (!asset) {
      // A file of a console that was never built is not "missing": the whole console is.
      if (!(await stat(join(dir, 'index.html')).catch(() => null))) throw new ApiError('admin_not_built');
      throw new ApiError('rest_no_route');
    }
    // Vite names every file under assets/ by its content hash: it never changes under its name.
    const immutable = segments[0] === 'assets' && segments.length === 2;
    return sendAsset(request, reply, asset, {
      type: TYPES[extname(path)] ?? 'application/octet-stream',
      cacheControl: immutable ? IMMUTABLE : REVALIDATE,
    });
  }

  app.get('/admin', async (request, reply) => sendIndex(request, reply));
  app.get('/admin/*', async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    const segments = rest.split('/').filter(Boolean);
    // A path whose last part has an extension (or is a dot file), or anything under assets/,
    // asks for a file; any other path is one of the app's screens.
    const last = segments.at(-1) ?? '';
    if (segments.length === 1 && last === 'index.html') return sendIndex(request, reply);
    if (segments[0] === 'assets' || extname(last) !== '' || last.startsWith('.')) {
      return sendFile(request, reply, segments);
    }
    return sendIndex(request, reply);
  });
}
