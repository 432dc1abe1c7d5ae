/**
 * PHP's serialize() format as WordPress stores it in meta and options (`a:2:{i:0;s:3:"abc";…}`).
 * Only the scalar and array types: an object (`O:`, `C:`) is refused, never instantiated, since
 * the value comes from someone else's database. Lengths are in bytes (UTF-8), as PHP counts them.
 */
export type PhpValue = string | number | boolean | null | PhpArray;
export interface PhpArray {
  [key: string]: PhpValue;
}

export class PhpUnserializeError extends Error {}

const MAX_DEPTH = 32;

export function phpUnserialize(text: string): PhpValue {
  const bytes = Buffer.from(text, 'utf8');
  let at = 0;
  const fail = (why: string): never => {
    throw new PhpUnserializeError(`${why} at byte ${at}`);
  };
  const expect = (char: string) => {
    if (bytes[at] !== char.charCodeAt(0)) fail(`expected '${char}'`);
    at++;
  };
  const readUntil = (end: string): string => {
    const stop = bytes.indexOf(end.charCodeAt(0), at);
    if (stop < 0) fail(`missing '${end}'`);
    const s = bytes.toString('latin1', at, stop);
    at = stop + 1;
    return s;
  };
  const readInt = (end: string): number => {
    const s = readUntil(end);
    if (!/^-?\d{1,15}$/.test(s)) fail('bad integer');
    return Number(s);
  };
  const value = (depth: number): PhpValue => {
    if (depth > MAX_DEPTH) fail('too deep');
    const type = String.fromCharCode(bytes[at] ?? 0);
    at++;
    switch (type) {
      case 'N':
        expect(';');
        return null;
      case 'b': {
        expect(':');
        const b = readInt(';');
        if (b !== 0 && b !== 1) fail('bad boolean');
        return b === 1;
      }
      case 'i':
        expect(':');
        return readInt(';');
      case 'd': {
        expect(':');
        const s = readUntil(';');
        const n = Number(s);
        if (s === '' || Number.isNaN(n)) fail('bad float');
        return n;
      }
      case 's': {
        expect(':');
        const length = readInt(':');
        expect('"');
        if (length < 0 || at + length > bytes.length) fail('string past the end');
        const s = bytes.toString('utf8', at, at + length);
        at += length;
        expect('"');
        expect(';');
        return s;
      }
      case 'a': {
        expect(':');
        const count = readInt(':');
        expect('{');
        const out: PhpArray = {};
        for (let i = 0; i < count; i++) {
          const key = value(depth + 1);
          if (typeof key !== 'string' && typeof key !== 'number') fail('bad array key');
          out[String(key)] = value(depth + 1);
        }
        expect('}');
        return out;
      }
      default:
        return fail(`unsupported type '${type}'`);
    }
  };
  const result = value(0);
  if (at !== bytes.length) fail('trailing bytes');
  return result;
}

/** phpUnserialize, or null for anything that is not a well-formed serialized value. */
export function tryPhpUnserialize(text: string | null | undefined): PhpValue {
  if (text === null || text === undefined) return null;
  try {
    return phpUnserialize(text);
  } catch (e) {
    if (e instanceof PhpUnserializeError) return null;
    throw e;
  }
}

export const isPhpArray = (v: PhpValue): v is PhpArray => typeof v === 'object' && v !== null;
