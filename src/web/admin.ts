import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../http/errors.js';

/** Where `npm run build` puts the console (web/admin, built by Vite): `dist/admin` from src/ or dist/. */
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
 * is not a file answers index.html (deep links: the app routes in the browser), never cached; the
 * hashed files under /admin/assets/ are cached for a year. A missing file is a 404, and a server
 * whose console was never built answers 503 `admin_not_built` rather than failing.
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

  async function sendIndex(reply: FastifyReply) {
    let page: Buffer;
    try {
      page = await readFile(join(dir, 'index.html'));
    } catch {
      throw new ApiError('admin_not_built');
    }
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CSP)
      .send(page);
  }

  async function sendFile(reply: FastifyReply, segments: string[]) {
    if (!segments.every((s) => SEGMENT.test(s))) throw new ApiError('rest_no_route');
    const path = join(dir, ...segments);
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) {
      // A file of a console that was never built is not "missing": the whole console is.
      if (!(await stat(join(dir, 'index.html')).catch(() => null))) throw new ApiError('admin_not_built');
      throw new ApiError('rest_no_route');
    }
    // Vite names every file under assets/ by its content hash: it never changes under its name.
    const immutable = segments[0] === 'assets' && segments.length === 2;
    return reply
      .type(TYPES[extname(path)] ?? 'application/octet-stream')
      .header('content-length', info.size)
      .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .send(createReadStream(path));
  }

  app.get('/admin', async (_request, reply) => sendIndex(reply));
  app.get('/admin/*', async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    const segments = rest.split('/').filter(Boolean);
    // A path whose last part has an extension (or is a dot file), or anything under assets/,
    // asks for a file; any other path is one of the app's screens.
    const last = segments.at(-1) ?? '';
    if (segments.length === 1 && last === 'index.html') return sendIndex(reply);
    if (segments[0] === 'assets' || extname(last) !== '' || last.startsWith('.')) {
      return sendFile(reply, segments);
    }
    return sendIndex(reply);
  });
}
