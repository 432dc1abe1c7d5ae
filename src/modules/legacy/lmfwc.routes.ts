import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../http/errors.js';
import type { LmfwcAction, LmfwcCredentials, LmfwcParams, LmfwcService } from './lmfwc.service.js';

/** Where LMFWC's v2 license routes live on a WordPress site (its `lmfwc/v2` REST namespace). */
export const LMFWC_BASE = '/wp-json/lmfwc/v2/licenses';

/**
 * The REST key of the call: HTTP Basic `consumer_key:consumer_secret`, else WooCommerce's
 * `consumer_key` and `consumer_secret` query parameters (both as WooCommerce accepts them over
 * HTTPS); null when the call carries neither.
 */
function credentialsOf(request: FastifyRequest, query: Record<string, unknown>): LmfwcCredentials | null {
  const authz = request.headers.authorization;
  if (typeof authz === 'string' && /^basic /i.test(authz)) {
    const decoded = Buffer.from(authz.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 1) return { consumer_key: decoded, consumer_secret: '' };
    return { consumer_key: decoded.slice(0, colon), consumer_secret: decoded.slice(colon + 1) };
  }
  const key = query.consumer_key;
  const secret = query.consumer_secret;
  if (key === undefined && secret === undefined) return null;
  return { consumer_key: String(key ?? ''), consumer_secret: String(secret ?? '') };
}

/** `token` and `label` as text; a repeated parameter (an array) is no value LMFWC reads. */
function paramsOf(query: Record<string, unknown>): LmfwcParams {
  const out: LmfwcParams = {};
  for (const name of ['token', 'label', 'consumer_key', 'consumer_secret'] as const) {
    const value = query[name];
    if (value !== undefined && typeof value !== 'string') throw new ApiError('rest_invalid_param');
    if (name === 'token' || name === 'label') out[name] = value as string | undefined;
  }
  return out;
}

/**
 * License Manager for WooCommerce's v2 license routes, at the old store's address (docs/migrating.md,
 * 'License Manager for WooCommerce'): activate, deactivate, validate and retrieve, all GET as LMFWC
 * registers them. Kept out of the OpenAPI document: another store's API, documented on its own page.
 */
export async function lmfwcRoutes(app: FastifyInstance, opts: { lmfwc: LmfwcService }) {
  const route = (url: string, action: LmfwcAction) =>
    app.get<{ Params: { license_key: string } }>(
      url,
      { schema: { hide: true }, config: { foreignCredentials: true } },
      async (request, reply) => {
        const query = (request.query ?? {}) as Record<string, unknown>;
        const params = paramsOf(query);
        await opts.lmfwc.authenticate(action, credentialsOf(request, query));
        const answer = await opts.lmfwc.answer(action, request.params.license_key, params, {
          ip: request.ip,
          user_agent: String(request.headers['user-agent'] ?? '').slice(0, 512),
        });
        return reply.header('cache-control', 'no-store').send(answer);
      },
    );
  route(`${LMFWC_BASE}/activate/:license_key`, 'activate');
  route(`${LMFWC_BASE}/deactivate/:license_key`, 'deactivate');
  route(`${LMFWC_BASE}/validate/:license_key`, 'validate');
  route(`${LMFWC_BASE}/:license_key`, 'retrieve');
}
