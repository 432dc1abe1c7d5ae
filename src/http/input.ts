import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.js';

/** Whether a parsed JSON value holds a NUL character in any string, key or value. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(holdsNul);
  for (const key in value) {
    if (key.includes('\0') || holdsNul((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/** The answer to text with a NUL character, wherever it came in. */
export const nulRefused = (location: string) =>
  new ApiError('rest_invalid_param', {
    data: { params: { [location]: 'contains a NUL character' }, location },
  });

/**
 * The edge every request passes before a route sees it.
 *
 * - No text with a NUL character gets in. PostgreSQL cannot store one (it refuses the statement)
 *   and SQLite would keep it, so without this the same input would be a 400 on one database and
 *   a 500 on the other. A NUL can arrive percent-encoded in the path or query (`%00`), or as the
 *   JSON escape `\u0000`; a raw NUL byte is already invalid in an HTTP request line, a header and
 *   JSON text. The JSON body is searched only when its text holds the escape, so ordinary
 *   requests pay one substring search.
 * - A request without a body is validated as an empty object, so missing fields get their own
 *   codes rather than a type error.
 */
export function installInputEdge(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parseJson(request, body as string, (err: Error | null, value?: unknown) => {
      if (err) return done(err);
      if ((body as string).includes('\\u0000') && holdsNul(value)) return done(nulRefused('body'));
      done(null, value);
    });
  });
  // Hooks on every request are written callback-style: an async hook costs a promise per request.
  app.addHook('preValidation', (request, _reply, done) => {
    const at = request.url.indexOf('%00');
    if (at >= 0) {
      const query = request.url.indexOf('?');
      return done(nulRefused(query >= 0 && at > query ? 'query' : 'path'));
    }
    if (request.body === undefined || request.body === null) request.body = {};
    done();
  });
}
