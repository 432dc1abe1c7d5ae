import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

/**
 * The field of a parsed JSON body (or query or path object) that holds a NUL character in its
 * name or anywhere in its value: the top-level name, '' for a bare string, null for none.
 */
export function nulField(value: unknown): string | null {
  if (typeof value === 'string') return value.includes('\0') ? '' : null;
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) return value.some((v) => nulField(v) !== null) ? '' : null;
  for (const key in value) {
    if (key.includes('\0') || nulField((value as Record<string, unknown>)[key]) !== null) return key;
  }
  return null;
}

/**
 * The answer to text with a NUL character: the code the route gives a malformed value of that
 * field (a NUL in `domain` is `invalid_identity` where the route says so), else
 * `rest_invalid_param`.
 */
export function nulRefused(request: FastifyRequest | null, location: string, field: string): ApiError {
  const code =
    (field && request?.routeOptions.config.validationCodes?.invalid?.[field]) || 'rest_invalid_param';
  const name = field || location;
  return new ApiError(code, { data: { params: { [name]: 'contains a NUL character' }, location } });
}

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
      const field = (body as string).includes('\\u0000') ? nulField(value) : null;
      if (field !== null) return done(nulRefused(request, 'body', field));
      done(null, value);
    });
  });
  // Hooks on every request are written callback-style: an async hook costs a promise per request.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.url.includes('%00')) {
      const inQuery = nulField(request.query);
      if (inQuery !== null) return done(nulRefused(request, 'query', inQuery));
      return done(nulRefused(request, 'path', nulField(request.params) ?? ''));
    }
    if (request.body === undefined || request.body === null) request.body = {};
    done();
  });
}

/**
 * `application/x-www-form-urlencoded`, for the routes of a plugin that take forms (the pages, the
 * updaters already in the field): text fields, the first value of a name wins, a NUL character is
 * refused like anywhere else. Registered per plugin, so the JSON API never takes a form.
 */
export function installFormParser(app: FastifyInstance, bodyLimit = 16 * 1024): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit },
    (_request, body, done) => {
      const out: Record<string, string> = {};
      for (const [k, v] of new URLSearchParams(body as string)) {
        if (k.includes('\0') || v.includes('\0')) return done(nulRefused(null, 'body', k), undefined);
        if (!Object.hasOwn(out, k)) out[k] = v;
      }
      done(null, out);
    },
  );
}
