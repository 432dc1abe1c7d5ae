import type { ErrorObject } from 'ajv';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError, type ErrorCode } from './errors.js';

/**
 * Bodies are validated strictly (no type coercion, unknown fields kept so they can be refused);
 * query strings and path parameters arrive as text, so they are coerced to the declared types.
 */
function makeAjv(coerce: boolean) {
  const ajv = new Ajv({
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}
const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * Each schema is compiled when its route first receives a request, as the serialisers are
 * (src/http/serialization.ts): Ajv's generated code for the routes an idle store never calls is
 * not held from the start. Fastify reads `errors` from the function it was given, so the wrapper
 * passes the compiled validator's on.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  let compiled: Validate | undefined;
  const validate: Validate = (data) => {
    compiled ??= (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object) as Validate;
    const ok = compiled(data);
    validate.errors = compiled.errors;
    return ok;
  };
  return validate;
};

/**
 * How a route names its schema violations. Some routes give fields their own codes
 * (a missing license_key is `missing_key`); everything else falls back to the generic codes.
 */
export interface ValidationCodes {
  /** Code for a missing required field, by field name. */
  missing?: Record<string, ErrorCode>;
  /** Code for a field of the wrong type or format, by field name. */
  invalid?: Record<string, ErrorCode>;
  /** Code for an unknown field (default `invalid_parameters`). */
  unknown?: ErrorCode;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    validationCodes?: ValidationCodes;
  }
}

/** Turns the first schema violation into the route's specific 400 error. */
export function validationError(errors: ErrorObject[], part: string, codes: ValidationCodes = {}): ApiError {
  const e = errors[0];
  if (!e) return new ApiError('rest_invalid_param');
  const path = e.instancePath.split('/').filter(Boolean);
  if (e.keyword === 'required') {
    const field = [...path, e.params.missingProperty as string].join('.');
    const code = codes.missing?.[path[0] ?? (e.params.missingProperty as string)] ?? 'rest_missing_param';
    return new ApiError(code, { data: { params: { [field]: 'required' }, location: part } });
  }
  if (e.keyword === 'additionalProperties') {
    const field = [...path, e.params.additionalProperty as string].join('.');
    return new ApiError(codes.unknown ?? 'invalid_parameters', {
      data: { params: { [field]: 'unknown parameter' }, location: part },
    });
  }
  const field = path.join('.') || part;
  const code = (path[0] && codes.invalid?.[path[0]]) || 'rest_invalid_param';
  return new ApiError(code, { data: { params: { [field]: e.message ?? 'invalid' }, location: part } });
}
