import { STATUS_CODES as STATUS_TEXT } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import { lingerIfUnread } from './linger.js';
import { type ValidationCodes, validationError } from './validation.js';

const FRAMEWORK_ERRORS: Record<string, () => ApiError> = {
  FST_ERR_BAD_URL: () => new ApiError('rest_invalid_param', { data: { location: 'path' } }),
  FST_ERR_MAX_PARAM_LENGTH: () => new ApiError('rest_uri_too_long'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('rest_body_too_large'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ApiError('rest_unsupported_media_type'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('rest_invalid_json', { status: 400 }),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ApiError('rest_invalid_json'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ApiError('rest_invalid_json'),
};

/**
 * Maps any thrown error to an ApiError, whose body (the REST envelope, or checkout's shape) the
 * handler sends; the only place a response body is made from an error.
 */
export function toApiError(err: FastifyError, codes?: ValidationCodes): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err.validation) return validationError(err.validation as never, err.validationContext ?? 'body', codes);
  const known = err.code ? FRAMEWORK_ERRORS[err.code] : undefined;
  if (known) return known();
  // secure-json-parse rejects __proto__ / constructor keys and JSON.parse raises SyntaxError.
  if (
    err instanceof SyntaxError ||
    (err.statusCode === 400 && /JSON|prototype|constructor/i.test(err.message))
  ) {
    return new ApiError('rest_invalid_json');
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new ApiError('rest_invalid_param', { status: err.statusCode });
  }
  return null;
}

/**
 * `noteError`, given only when metrics are on (src/metrics.ts), hears the code of every error
 * answer, so the metrics count refusals by code without reading bodies.
 */
export function installErrorHandling(
  app: FastifyInstance,
  noteError?: (request: FastifyRequest, code: string) => void,
): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    let apiError = toApiError(err);
    if (apiError && err.validation) {
      apiError = validationError(
        err.validation as never,
        err.validationContext ?? 'body',
        request.routeOptions.config.validationCodes,
      );
    }
    if (!apiError) {
      request.log.error({ err }, 'unhandled error');
      apiError = new ApiError('internal_error');
    } else if (apiError.status >= 500) {
      request.log.error({ err, code: apiError.code }, 'request failed');
    }
    if (noteError) noteError(request, apiError.code);
    lingerIfUnread(request, reply);
    // A refusal that says when to come back says it in the standard header too (checkout's own
    // bodies never did: docs/checkout.md).
    const retryAfter = apiError.data?.retry_after;
    if (typeof retryAfter === 'number' && apiError.shape === 'rest') {
      reply.header('retry-after', String(retryAfter));
    }
    return reply.status(apiError.status).send(apiError.toBody());
  });
  app.setNotFoundHandler((request, reply) => {
    lingerIfUnread(request, reply);
    const e = new ApiError('rest_no_route');
    return reply.status(404).send(e.toBody());
  });
}

/**
 * Fastify's `frameworkErrors`: errors found while routing (a path that does not decode, a path
 * parameter over the length limit) get the envelope like every other error. Fastify's own bodies
 * would echo the URL.
 */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(err) ?? new ApiError('rest_invalid_param');
  reply.status(apiError.status).send(apiError.toBody());
}

const CLIENT_ERRORS: Record<string, ApiError> = {
  ERR_HTTP_REQUEST_TIMEOUT: new ApiError('rest_request_timeout'),
  HPE_HEADER_OVERFLOW: new ApiError('rest_headers_too_large'),
};

/**
 * Node's `clientError`: a request that is not valid HTTP never reaches Fastify, so this answers
 * it on the socket, in the envelope, and closes. The error is logged by its code only: Node
 * attaches the raw bytes received (`rawPacket`), which hold the request's credentials.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError = (err.code && CLIENT_ERRORS[err.code]) || new ApiError('rest_bad_request');
  this.log.debug({ code: err.code }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify(apiError.toBody());
    socket.write(
      `HTTP/1.1 ${apiError.status} ${STATUS_TEXT[apiError.status] ?? 'Bad Request'}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
