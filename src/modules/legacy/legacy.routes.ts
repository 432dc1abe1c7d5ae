import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../http/errors.js';
import { installFormParser } from '../../http/input.js';
import type { EddParams, LegacyService } from './legacy.service.js';

/** A form of the updaters in the field is a few short fields; EDD's own limit is far above. */
const BODY_LIMIT = 16 * 1024;

/** Text fields only (first value of a name wins); anything else is no field of theirs. */
function paramsOf(source: unknown): EddParams {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return {};
  const out: EddParams = {};
  for (const [k, v] of Object.entries(source)) if (typeof v === 'string') out[k] = v;
  return out;
}

/**
 * Answers one `edd_action` call, from a POST's form or a GET's query (docs/migrating.md, 'Sites
 * already in the field'). EDD answers 200 with `success: false` for a license it refuses, and so
 * does this; a call that is not one of EDD's actions is 400 `invalid_parameters`.
 */
export function eddHandler(legacy: LegacyService) {
  return async (request: FastifyRequest, reply: FastifyReply, source: unknown) => {
    const params = paramsOf(source);
    const action = params.edd_action ?? '';
    const answer = await legacy.answer(action, params, {
      ip: request.ip,
      user_agent: String(request.headers['user-agent'] ?? '').slice(0, 512),
    });
    if (answer === null)
      throw new ApiError('invalid_parameters', { data: { params: { edd_action: 'unknown' } } });
    // The updaters cache what they are told for hours themselves; no proxy should keep it.
    return reply.header('cache-control', 'no-store').send(answer);
  };
}

/**
 * `POST /` with `edd_action`: what `EDD_SL_Plugin_Updater` and EDD's sample license screens send
 * (a form). `GET /?edd_action=…` is answered by the store's home page route, which hands such a
 * request to the same handler (src/pages/store/catalogue.ts). Kept out of the OpenAPI document:
 * it is another store's API, documented on its own page.
 */
export async function legacyRoutes(app: FastifyInstance, opts: { legacy: LegacyService }) {
  const handle = eddHandler(opts.legacy);
  installFormParser(app, BODY_LIMIT);
  app.post('/', { bodyLimit: BODY_LIMIT, schema: { hide: true } }, async (request, reply) => {
    const body = paramsOf(request.body);
    if (body.edd_action === undefined) throw new ApiError('rest_no_route');
    return handle(request, reply, body);
  });
  // The package get_version answers (docs/migrating.md, 'The package link'): a signed link that
  // re-checks everything when the site downloads it and redirects to a fresh single-use download
  // token; WordPress's HTTP client follows the redirect.
  app.get('/edd-sl/package', { schema: { hide: true } }, async (request, reply) => {
    const location = await opts.legacy.package(request.query as Record<string, unknown>, request.ip);
    return reply.header('cache-control', 'no-store').redirect(location, 302);
  });
}
