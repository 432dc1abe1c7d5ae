import type { FastifyInstance, RouteOptions } from 'fastify';
import { BoundedMap } from '../bounded-map.js';
import type { Clock } from '../clock.js';
import { hasGuard } from './auth.js';
import { ApiError } from './errors.js';

/**
 * Requests a minute that one client address may make, in one server process, to the routes that
 * change something without a caller (docs/api.md, 'Limits'). Far above what a site, a shopper or
 * Stripe sends; what it stops is a flood. The routes' own limits (issuance, sign-in, checkout)
 * count finer, within it.
 */
export const ANONYMOUS_WRITES_PER_MINUTE = 1200;
const WINDOW_MS = 60_000;
/** Addresses remembered at once (about 100 bytes each); the least recently counted go first. */
const ADDRESSES = 50_000;

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Routes left out, each for a reason of its own. The calls of sites in the field (activate,
 * validate, deactivate, the update check and package): a shared host puts thousands of
 * customers' sites behind one address, the specification gives these routes their answers
 * without a per-address refusal, and the update check and package have their issuance limits
 * already. The Stripe webhook: only a request signed with the store's webhook secret changes
 * anything, and Stripe delivers bursts from few addresses.
 */
const EXEMPT = [
  /^\/v1\/licenses\/(activate|validate|deactivate)$/,
  /^\/v1\/software\//,
  /^\/v1\/stripe\/webhook$/,
];

/**
 * Counts each anonymous write (a write method on a route with no `requireUser`/`requireAdmin`
 * guard) by client address in fixed one-minute windows, in memory, before anything else of the
 * request runs; past the limit the answer is 429 `rate_limited` with `retry_after`. In memory
 * rather than in the database: it runs before the validate and update-check hot paths, where a
 * write per request would cost more than what it protects, and a flood is caught per process.
 */
export function installAnonymousWriteLimit(app: FastifyInstance, clock: Clock): void {
  const windows = new BoundedMap<string, { start: number; count: number }>(ADDRESSES);
  const limit = (ip: string): number | null => {
    const now = clock.now().getTime();
    const start = now - (now % WINDOW_MS);
    let w = windows.get(ip);
    if (!w || w.start !== start) {
      w = { start, count: 0 };
      windows.delete(ip);
      windows.set(ip, w);
    }
    w.count += 1;
    return w.count > ANONYMOUS_WRITES_PER_MINUTE ? Math.ceil((start + WINDOW_MS - now) / 1000) : null;
  };
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => WRITE_METHODS.has(m)) || hasGuard(route.preValidation)) return;
    if (EXEMPT.some((re) => re.test(route.url))) return;
    const own = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : [];
    route.onRequest = [
      (request, _reply, done) => {
        const retryAfter = WRITE_METHODS.has(request.method) ? limit(request.ip) : null;
        done(
          retryAfter === null
            ? undefined
            : new ApiError('rate_limited', { data: { retry_after: retryAfter } }),
        );
      },
      ...own,
    ] as RouteOptions['onRequest'];
  });
}
