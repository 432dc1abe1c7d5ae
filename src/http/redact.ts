import type { FastifyRequest } from 'fastify';

/** Query parameters whose values are secrets: never written to a log line. */
// `search` too: an administrator searches licenses by key (GET /licenses?search=).
const SECRET_PARAMS =
  /([?&](?:token|key|license_key|activation_token|state|nonce|password|secret|search)=)[^&#]*/gi;

export const redactUrl = (url: string): string => url.replace(SECRET_PARAMS, '$1[REDACTED]');

/**
 * Pino options for the whole service. Request logs carry the path with secret query values
 * masked; headers that hold credentials are removed; bodies are never logged.
 */
export function loggerOptions(level: string) {
  return {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-rest-nonce"]',
        'res.headers["set-cookie"]',
        '*.password',
        '*.license_key',
        '*.token',
        '*.activation_token',
      ],
      censor: '[REDACTED]',
    },
    serializers: {
      req(req: FastifyRequest) {
        return { method: req.method, url: redactUrl(req.url), remoteAddress: req.ip };
      },
    },
  };
}
