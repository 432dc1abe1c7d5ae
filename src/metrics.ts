import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  RouteOptions,
} from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Clock, TestClock } from './clock.js';
import type { Database } from './db/database.js';

/**
 * Metrics in the Prometheus text format (docs/operations.md, 'Metrics'), built only when
 * METRICS_PORT is set: without it no hook, counter or timer exists and every request costs what it
 * did. Each app has its own registry (tests start several apps in one process) and answers on a
 * listener of its own, never on the main port.
 *
 * Per request: one onResponse hook per route, whose label and counters are resolved once when the
 * route is registered, so a request costs a map lookup, a counter increment and a histogram
 * observation. Labels are route patterns, methods, status and error codes only: never a URL, a
 * key, a token or a domain.
 */

/** The operations whose outcomes are counted, by method and route pattern. */
const OPERATIONS: Record<string, Operation> = {
  'POST /v1/licenses/validate': 'validate',
  'GET /v1/software/check': 'update_check',
  'POST /v1/software/check': 'update_check',
  'POST /v1/software/package': 'package',
  'GET /v1/software/download': 'download',
};
type Operation = 'validate' | 'update_check' | 'package' | 'download';

/** Rate-limit refusals (429) by the limiter that refused, from the error code where one is known. */
function limiterOf(code: string | undefined, route: string): string {
  if (code === 'too_many_login_attempts') return 'login';
  if (code === 'too_many_password_requests') return 'password_reset';
  if (code === 'too_many_sign_in_links') return 'sign_in_link';
  if (code === 'rate_limited') return route.startsWith('/v1/checkout') ? 'checkout' : 'software_issuance';
  // The customer's pages answer the services' refusals in HTML, without the error handler.
  if (route === '/account/forgot-password') return 'password_reset';
  if (route === '/account/sign-in-link') return 'sign_in_link';
  if (route === '/account/sign-in' || route.startsWith('/account/profile')) return 'login';
  if (route.startsWith('/v1/software') || route.startsWith('/account/downloads')) return 'software_issuance';
  return 'other';
}

/** The error code an answer carried, set by the error handler (and validate's refusal) for the hook. */
const ERROR_CODE = Symbol('tollgate.errorCode');
type Coded = FastifyRequest & { [ERROR_CODE]?: string };

export interface MetricsDeps {
  database: Pick<Database, 'pg'>;
  clock: Clock;
  testClock: TestClock | null;
  webhooks: { backlog(now: Date): Promise<{ depth: number; oldestDue: string | null }> };
  mail: { backlog(now: Date): Promise<{ depth: number; oldestDue: string | null }> };
  log: FastifyBaseLogger;
}

interface RouteSeries {
  requests: Counter.Internal;
  duration: Histogram.Internal<string>;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'route' | 'method' | 'status'>;
  private readonly duration: Histogram<'route' | 'method' | 'status'>;
  private readonly outcomes: Counter<'operation' | 'result'>;
  private readonly downloadBytes: Counter;
  private readonly refusals: Counter<'limiter'>;
  private server: Server | null = null;
  private listening: Promise<number> | null = null;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly deps: MetricsDeps,
  ) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'tollgate_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status code.',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'tollgate_http_request_duration_seconds',
      help: 'Time from the request to the last byte of the answer, by route pattern, method and status code.',
      labelNames: ['route', 'method', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.outcomes = new Counter({
      name: 'tollgate_outcomes_total',
      help: 'Answers of validate, the update check, package issuance and downloads, by result: success or the error code.',
      labelNames: ['operation', 'result'],
      registers,
    });
    for (const operation of new Set(Object.values(OPERATIONS)))
      this.outcomes.inc({ operation, result: 'success' }, 0);
    this.downloadBytes = new Counter({
      name: 'tollgate_download_bytes_total',
      help: 'Bytes of packages served by downloads that ran to their last byte.',
      registers,
    });
    this.refusals = new Counter({
      name: 'tollgate_rate_limit_refusals_total',
      help: 'Requests refused by a rate limit (429), by limiter.',
      labelNames: ['limiter'],
      registers,
    });
    this.outboxGauges('webhook', (now) => deps.webhooks.backlog(now));
    this.outboxGauges('mail', (now) => deps.mail.backlog(now));
    const pool = deps.database.pg;
    if (pool) {
      new Gauge({
        name: 'tollgate_db_pool_connections',
        help: 'PostgreSQL connections open in this process, busy and idle.',
        registers,
        collect() {
          this.set(pool.totalCount);
        },
      });
      new Gauge({
        name: 'tollgate_db_pool_idle_connections',
        help: 'PostgreSQL connections open and idle in this process.',
        registers,
        collect() {
          this.set(pool.idleCount);
        },
      });
      new Gauge({
        name: 'tollgate_db_pool_waiting',
        help: 'Queries of this process waiting for a PostgreSQL connection.',
        registers,
        collect() {
          this.set(pool.waitingCount);
        },
      });
    }
    // process_* and nodejs_* (memory, CPU, event-loop delay, GC), under their usual names.
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Depth and oldest due age of an outbox, from one statement per scrape shared by both gauges
   * (the registry collects them at the same time).
   */
  private outboxGauges(
    name: 'webhook' | 'mail',
    read: (now: Date) => Promise<{ depth: number; oldestDue: string | null }>,
  ): void {
    const { clock, testClock } = this.deps;
    let pending: Promise<{ depth: number; age: number }> | null = null;
    const backlog = () => {
      pending ??= (async () => {
        await testClock?.sync();
        const now = clock.now();
        const { depth, oldestDue } = await read(now);
        const age = oldestDue === null ? 0 : Math.max(0, (now.getTime() - Date.parse(oldestDue)) / 1000);
        return { depth, age };
      })().finally(() => {
        pending = null;
      });
      return pending;
    };
    new Gauge({
      name: `tollgate_${name}_outbox_depth`,
      help: `${name === 'webhook' ? 'Webhook events' : 'Emails'} waiting to be sent (pending, retries included).`,
      registers: [this.registry],
      async collect() {
        this.set((await backlog()).depth);
      },
    });
    new Gauge({
      name: `tollgate_${name}_outbox_oldest_due_age_seconds`,
      help: `Seconds since the oldest due ${name === 'webhook' ? 'webhook event' : 'email'} fell due (0 when none is due).`,
      registers: [this.registry],
      async collect() {
        this.set((await backlog()).age);
      },
    });
  }

  /**
   * Installs the hooks; called before any route is registered. Each route gets its own onResponse
   * hook with its label and operation resolved now; unmatched requests are counted by one hook
   * that returns at once for every matched one.
   */
  install(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const operation = methods.length === 1 ? OPERATIONS[`${methods[0]} ${route.url}`] : undefined;
      append(route, 'onResponse', this.responseHook(route.url, operation));
      // Validate answers its refusals (403) itself, with the code in `error`.
      if (operation === 'validate') append(route, 'preSerialization', validateCode);
    });
    const unmatched = this.responseHook('unmatched', undefined);
    app.addHook('onResponse', (request, reply, done) => {
      if (request.is404) unmatched(request, reply, done);
      else done();
    });
  }

  /** Notes the code of an error answer for the response hook (called by the error handler). */
  static noteError(request: FastifyRequest, code: string): void {
    (request as Coded)[ERROR_CODE] = code;
  }

  private responseHook(route: string, operation: Operation | undefined) {
    const series = new Map<string, RouteSeries>();
    const outcomes = new Map<string, Counter.Internal>();
    const outcome = (result: string) => {
      let child = outcomes.get(result);
      if (!child) {
        child = this.outcomes.labels(operation!, result);
        outcomes.set(result, child);
      }
      child.inc();
    };
    return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const status = reply.statusCode;
      const key = `${request.method} ${status}`;
      let s = series.get(key);
      if (!s) {
        s = {
          requests: this.requests.labels(route, request.method, String(status)),
          duration: this.duration.labels(route, request.method, String(status)),
        };
        series.set(key, s);
      }
      s.requests.inc();
      s.duration.observe(reply.elapsedTime / 1000);
      if (status >= 400) {
        const code = (request as Coded)[ERROR_CODE];
        if (status === 429) this.refusals.labels(limiterOf(code, route)).inc();
        if (operation) outcome(code ?? String(status));
      } else if (operation) {
        outcome('success');
        if (operation === 'download' && status === 200) {
          // A download's hook runs only once its last byte is written (a cut one never finishes).
          this.downloadBytes.inc(Number(reply.getHeader('content-length')) || 0);
        }
      }
      done();
    };
  }

  /** Opens the metrics listener (idempotent); answers the port it listens on. */
  listen(): Promise<number> {
    this.listening ??= new Promise<number>((resolve, reject) => {
      const server = createServer((req, res) => {
        const path = (req.url ?? '').split('?', 1)[0];
        if (req.method !== 'GET' || path !== '/metrics') {
          res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
          return;
        }
        this.registry.metrics().then(
          (text) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
          (err: unknown) => {
            this.deps.log.error({ err }, 'metrics collection failed');
            res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
          },
        );
      });
      server.once('error', reject);
      server.listen(this.port, this.host, () => {
        server.off('error', reject);
        this.server = server;
        resolve((server.address() as AddressInfo).port);
      });
    });
    return this.listening;
  }

  /** Closes the metrics listener, its idle and busy connections included (a scraper keeps one alive). */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

function validateCode(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: null, p: unknown) => void,
) {
  if (reply.statusCode === 403) {
    const error = (payload as { error?: unknown } | null)?.error;
    if (typeof error === 'string') Metrics.noteError(request, error);
  }
  done(null, payload);
}

function append(route: RouteOptions, hook: 'onResponse' | 'preSerialization', fn: unknown): void {
  const existing = route[hook] as unknown;
  (route as unknown as Record<string, unknown>)[hook] =
    existing === undefined || existing === null
      ? [fn]
      : [...(Array.isArray(existing) ? existing : [existing]), fn];
}
