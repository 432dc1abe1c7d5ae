import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError } from './errors.js';
import { validationError } from './validation.js';

const FRAMEWORK_ERRORS: Record<string, () => ApiError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('rest_body_too_large'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ApiError('rest_unsupported_media_type'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('rest_invalid_json', { status: 400 }),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ApiError('rest_invalid_json'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ApiError('rest_invalid_json'),
};

/** Maps any thrown error to the REST envelope; the only place a response body is made from an error. */
export function toApiError(err: FastifyError): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err.validation) return validationError(err.validation as never, err.validationContext ?? 'body');
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

export function installErrorHandling(app: FastifyInstance): void {
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
    return reply.status(apiError.status).send(apiError.toBody());
  });
  app.setNotFoundHandler((_request, reply) => {
    const e = new ApiError('rest_no_route');
    return reply.status(404).send(e.toBody());
  });
}
