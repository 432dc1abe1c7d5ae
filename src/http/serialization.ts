import fastJson from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';

type Schema = Record<string, unknown>;
const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

const isPrimitiveBranch = (s: unknown): s is Schema =>
  typeof s === 'object' &&
  s !== null &&
  (typeof (s as Schema).type === 'string'
    ? PRIMITIVES.has((s as Schema).type as string)
    : 'const' in (s as Schema) && typeof (s as Schema).const !== 'object');

function typeOf(branch: Schema): string {
  if (typeof branch.type === 'string') return branch.type;
  const c = branch.const;
  return c === null ? 'null' : typeof c === 'number' ? 'number' : typeof c;
}

/**
 * fast-json-stringify resolves every `anyOf` by running a validator on the value at serialisation
 * time, which made nullable and literal-union fields cost more than the database query. A union
 * of primitive branches serialises the same as `type: [..]`, so the response schema is flattened
 * before compiling. Validation and the OpenAPI document keep the precise schema.
 */
export function flattenPrimitiveUnions(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(flattenPrimitiveUnions);
  if (typeof schema !== 'object' || schema === null) return schema;
  const s = schema as Schema;
  if (Array.isArray(s.anyOf) && s.anyOf.length > 0 && s.anyOf.every(isPrimitiveBranch)) {
    const { anyOf, ...rest } = s;
    const types = [...new Set((anyOf as Schema[]).map(typeOf))];
    return { ...rest, type: types.length === 1 ? types[0] : types };
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) out[k] = typeof v === 'object' ? flattenPrimitiveUnions(v) : v;
  return out;
}

/**
 * Each response schema is compiled when its route first answers, not when the server starts: a
 * server holds about 130 serialisers, most of them for administration routes an idle store never
 * calls, and each kept its generated source and code (2 MB of source alone) from the start
 * (docs/performance.md, 'What an idle server loads'). The first answer of a route pays the
 * compilation once; every later one calls the compiled function.
 */
export const serializerCompiler: FastifySerializerCompiler<unknown> = ({ schema }) => {
  let serialize: ((data: unknown) => string) | undefined;
  return (data: unknown) => {
    serialize ??= fastJson(flattenPrimitiveUnions(schema) as Parameters<typeof fastJson>[0]);
    return serialize(data);
  };
};
