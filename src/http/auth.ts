import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { AccountsService, AuthUser } from '../modules/accounts/accounts.service.js';
import { safeEqual } from '../random.js';
import { ApiError } from './errors.js';

export const SESSION_COOKIE = 'tollgate_session';

declare module 'fastify' {
  interface FastifyRequest {
    user: AuthUser | null;
    /** Raw session id from the cookie when it named a live session (even if this request is anonymous). */
    sessionId: string | null;
    /** The live session's nonce, when the request came with a session cookie. */
    sessionNonce: string | null;
  }
}

const NO_COOKIES: Record<string, string | undefined> = Object.freeze({});

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Resolves the caller once per request: Basic (application password) first, then the session
 * cookie. A cookie authenticates a state-changing request only with a valid X-REST-Nonce
 * (docs/api.md, 'The nonce rule'): no nonce means anonymous, a wrong one is refused.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads the Authorization header as another store's credentials; no Tollgate caller is resolved. */
    foreignCredentials?: boolean;
  }
}

export function installAuth(app: FastifyInstance, accounts: AccountsService): void {
  app.addHook('onRoute', declareAuthentication);
  app.decorateRequest('user', null);
  app.decorateRequest('sessionId', null);
  app.decorateRequest('sessionNonce', null);
  app.addHook('preValidation', (request, _reply, done) => {
    // The cookie plugin's own hook would give every request a fresh object and Map; most calls
    // (the licensing and update API) carry no cookie and no credentials, and skip the promise.
    const header = request.headers.cookie;
    request.cookies = header === undefined ? NO_COOKIES : app.parseCookie(header);
    if (request.headers.authorization === undefined && header === undefined) return done();
    // Another store's API whose Basic credentials are its own REST key, not a Tollgate account
    // (docs/migrating.md, 'License Manager for WooCommerce'): it checks them itself.
    if (request.routeOptions.config.foreignCredentials) return done();
    resolveCaller(request).then(() => done(), done);
  });

  async function resolveCaller(request: FastifyRequest): Promise<void> {
    const authz = request.headers.authorization;
    if (authz?.startsWith('Basic ')) {
      const decoded = Buffer.from(authz.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 1) throw new ApiError('invalid_credentials');
      request.user = await accounts.basicUser(decoded.slice(0, colon), decoded.slice(colon + 1), request.ip);
      return;
    }
    const sessionId = request.cookies?.[SESSION_COOKIE];
    if (!sessionId || !/^[0-9a-f]{64}$/.test(sessionId)) return;
    const session = await accounts.sessionUser(sessionId);
    if (!session) return;
    request.sessionId = sessionId;
    request.sessionNonce = session.nonce;
    if (SAFE_METHODS.has(request.method)) {
      request.user = session.user;
      return;
    }
    const nonce = request.headers['x-rest-nonce'];
    if (nonce === undefined) return;
    if (typeof nonce !== 'string' || !safeEqual(nonce, session.nonce))
      throw new ApiError('rest_cookie_invalid_nonce');
    request.user = session.user;
  }
}

export async function requireUser(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (!request.user) throw new ApiError('rest_not_logged_in');
}

export async function requireAdmin(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (!request.user) throw new ApiError('rest_not_logged_in');
  if (request.user.role !== 'administrator') throw new ApiError('rest_forbidden');
}

const GUARDS: ReadonlySet<unknown> = new Set([requireUser, requireAdmin]);
export const hasGuard = (hooks: unknown): boolean =>
  Array.isArray(hooks) ? hooks.some((h) => GUARDS.has(h)) : GUARDS.has(hooks);

/**
 * Every route that needs a caller checks it in `preValidation`, so that an anonymous request is
 * answered 401 `rest_not_logged_in` before its body is looked at: a caller without the right
 * learns nothing about the shapes the route would need. A guard in a later hook is refused when
 * the route is registered. Guarded routes say so in the OpenAPI document (`security`), which is
 * how the tests find every non-public route.
 */
function declareAuthentication(route: RouteOptions): void {
  if (hasGuard(route.preHandler)) {
    throw new Error(`${route.method} ${route.url}: check the caller in preValidation, before the input`);
  }
  if (!hasGuard(route.preValidation)) return;
  route.schema = { security: [{ basic: [] }, { cookie: [], nonce: [] }], ...route.schema };
}
