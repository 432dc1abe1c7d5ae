import { ApiError, type ErrorCode } from '../../http/errors.js';

/**
 * A checkout refusal: an error of the one catalogue, answered in checkout's own body
 * `{error, error_code, ...data}` (docs/checkout.md, 'Failure bodies and HTTP statuses'), with the
 * status and text checkout's docs give where they differ from the catalogue's.
 */
export const refusal = (
  code: ErrorCode,
  opts: { message?: string; status?: number; data?: Record<string, unknown> } = {},
): ApiError => new ApiError(code, { ...opts, shape: 'checkout' });
