import type { FastifyBaseLogger, FastifyRequest, FastifyServerOptions } from 'fastify';
import pino from 'pino';

/** Query parameters whose values are secrets: never written to a log line. */
// `search` too: an administrator searches licenses by key (GET /licenses?search=). Stripe adds
// the PaymentIntent's client secret to the receipt address it returns the customer to. `license`
// and `products[…][license]` are the keys the updaters already in the field send (src/modules/legacy);
// `consumer_key` and `consumer_secret` the WooCommerce REST key their LMFWC calls carry.
const SECRET_PARAMS =
  /([?&](?:token|key|license_key|license|activation_token|state|nonce|password|secret|consumer_key|consumer_secret|search|payment_intent_client_secret|[^&=#]*(?:%5B|\[)license(?:%5D|\]))=)[^&#]*/gi;

/**
 * License Manager for WooCommerce's routes carry the license key in the path
 * (src/modules/legacy/lmfwc.routes.ts): the segment after `licenses/` or its action is masked.
 */
const LMFWC_KEY = /(\/wp-json\/lmfwc\/v2\/licenses\/(?:(?:activate|deactivate|validate)\/)?)[^/?#]+/gi;

/**
 * The EDD package link's signature (src/modules/legacy/package-links.ts): for 24 hours it mints a
 * download of that site's release, as a token would, so it is masked like one.
 */
const PACKAGE_SIGNATURE = /(\/edd-sl\/package\?(?:[^#]*&)?s=)[^&#]*/gi;

export const redactUrl = (url: string): string =>
  url
    .replace(SECRET_PARAMS, '$1[REDACTED]')
    .replace(LMFWC_KEY, '$1[REDACTED]')
    .replace(PACKAGE_SIGNATURE, '$1[REDACTED]');

/** Request and response headers that carry credentials. */
const SECRET_HEADERS = ['.authorization', '.cookie', '["x-rest-nonce"]', '["set-cookie"]'];
/** Body-like fields that carry secrets, wherever a log object holds one. */
const SECRET_FIELDS = [
  'password',
  'license_key',
  'token',
  'activation_token',
  'card_number',
  'smtp_url',
  // The S3 credentials, should an SDK object or the configuration reach a log line.
  'secretAccessKey',
  // The Stripe gateway's keys, and a PaymentIntent's client secret, which confirms its payment.
  'stripe_secret_key',
  'stripe_webhook_secret',
  'client_secret',
];

/**
 * Where secrets can sit in a log object. Headers are masked in any `headers` object one or two
 * levels down, not only in Fastify's `req`: a plugin may log its own options with the request's
 * headers in them (@fastify/multipart does, at `trace`, as `busboyOptions.headers`).
 */
const REDACTED_PATHS = [
  ...SECRET_HEADERS.flatMap((h) => [`*.headers${h}`, `*.*.headers${h}`]),
  ...SECRET_FIELDS.flatMap((f) => [`*.${f}`, `*.*.${f}`]),
];

/**
 * Pino options for the whole service. Request logs carry the path with secret query values
 * masked; headers that hold credentials are removed; bodies are never logged.
 */
export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
    serializers: {
      req(req: FastifyRequest) {
        return { method: req.method, url: redactUrl(req.url), remoteAddress: req.ip };
      },
    },
  };
}

/** Whether `level` lets Fastify's `info` lines (incoming request, request completed) through, by pino's own order. */
export const logsRequests = (level: string): boolean =>
  (pino.levels.values[level] ?? Number.POSITIVE_INFINITY) <= pino.levels.values.info!;

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = Parameters<FastifyBaseLogger['child']>[1];
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Logger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * The logger a request gets. Fastify makes a pino child for every request, and with redaction on
 * that costs about 5 µs, a tenth of a short route, while most requests never write a line at the
 * configured level. This one makes the child (with the same bindings, so lines still carry the
 * request id) the first time a line is written at an enabled level.
 */
class RequestLogger implements FastifyBaseLogger {
  #made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
  ) {}

  private get made(): Logger {
    this.#made ??= this.parent.child(this.bindings) as Logger;
    return this.#made;
  }

  get level(): string {
    return (this.#made ?? this.parent).level;
  }

  set level(level: string) {
    this.made.level = level;
  }

  private write(level: Level, args: unknown[]): void {
    if (!(this.#made ?? this.parent).isLevelEnabled(level)) return;
    (this.made[level] as (...a: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.made.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a route with its own level or serializers gets its child at once. */
export const requestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) =>
  options.level !== undefined || options.serializers !== undefined
    ? logger.child(bindings, options)
    : new RequestLogger(logger as Logger, bindings);
