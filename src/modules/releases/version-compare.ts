import { BoundedMap } from '../../bounded-map.js';

/**
 * PHP's `version_compare()` (ext/standard/versioning.c), implemented once and exactly: release
 * ordering and "is this newer" decisions must agree with what PHP-based clients compute.
 *
 * 1. Canonicalise: `-`, `_`, `+` become `.`; a `.` is inserted at every digit/non-digit
 *    transition; any other non-alphanumeric character becomes `.`; dots never repeat. The first
 *    character is copied as it is, and a version starting with `#` is not canonicalised at all.
 * 2. Compare element by element: two numbers numerically; two words by their special-form rank
 *    (prefix match, first hit in the list below, unknown = -1); a number against a word ranks the
 *    number as `#` (4).
 * 3. When one side runs out: a remaining number makes that side greater; a remaining word is
 *    compared against a number (`#N#`), so `1.0 > 1.0rc1` but `1.0 < 1.0pl1` and `1.0 < 1.0.0`.
 */

const SPECIAL_FORMS: ReadonlyArray<readonly [string, number]> = [
  ['dev', 0],
  ['alpha', 1],
  ['a', 1],
  ['beta', 2],
  ['b', 2],
  ['RC', 3],
  ['rc', 3],
  ['#', 4],
  ['pl', 5],
  ['p', 5],
];

/** Stands for "a number" when a word meets a number (it ranks as `#`). */
const NUMBER = '#N#';

// C's isdigit/isalnum in the "C" locale: ASCII only.
const isDigit = (c: string) => c >= '0' && c <= '9';
const isAlnum = (c: string) => isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
const isNonDigit = (c: string) => !isDigit(c) && c !== '.';
const isSpecialSeparator = (c: string) => c === '-' || c === '_' || c === '+';

/** php_canonicalize_version, on a byte string (see `bytes`). */
function canonicalizeVersion(version: string): string {
  if (version.length === 0) return '';
  const chars = [...version];
  let out = chars[0]!;
  let lp = chars[0]!;
  for (let i = 1; i < chars.length; i++) {
    const c = chars[i]!;
    const lq = out[out.length - 1];
    if (isSpecialSeparator(c)) {
      if (lq !== '.') out += '.';
    } else if ((isNonDigit(lp) && isDigit(c)) || (isDigit(lp) && isNonDigit(c))) {
      if (lq !== '.') out += '.';
      out += c;
    } else if (!isAlnum(c)) {
      if (lq !== '.') out += '.';
    } else {
      out += c;
    }
    lp = c;
  }
  return out;
}

function specialRank(form: string): number {
  for (const [name, rank] of SPECIAL_FORMS) if (form.startsWith(name)) return rank;
  return -1;
}

const sign = (n: number): -1 | 0 | 1 => (n < 0 ? -1 : n > 0 ? 1 : 0);

const compareSpecialForms = (a: string, b: string): -1 | 0 | 1 => sign(specialRank(a) - specialRank(b));

const LONG_MAX = 9223372036854775807n;

/** strtol(…, 10) on an element that starts with a digit: leading digits, saturating at LONG_MAX. */
function strtol(element: string): bigint {
  const digits = /^\d+/.exec(element)?.[0] ?? '0';
  const value = BigInt(digits);
  return value > LONG_MAX ? LONG_MAX : value;
}

/** PHP strings are bytes: work on the UTF-8 bytes, one JS character per byte. */
const bytes = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');

/** php_version_compare: -1 when `a` is older, 0 when equal, 1 when newer. */
export function versionCompare(a: string, b: string): -1 | 0 | 1 {
  return compareBytes(bytes(a), bytes(b));
}

function compareBytes(a: string, b: string): -1 | 0 | 1 {
  if (a === '' || b === '') {
    if (a === '' && b === '') return 0;
    return a !== '' ? 1 : -1;
  }
  const v1 = a[0] === '#' ? a : canonicalizeVersion(a);
  const v2 = b[0] === '#' ? b : canonicalizeVersion(b);
  // Mirrors the C loop over strchr('.'): p = start of the element, n = index of its dot or -1.
  let p1 = 0;
  let p2 = 0;
  let n1 = 0;
  let n2 = 0;
  let compare: -1 | 0 | 1 = 0;
  while (p1 < v1.length && p2 < v2.length && n1 !== -1 && n2 !== -1) {
    n1 = v1.indexOf('.', p1);
    n2 = v2.indexOf('.', p2);
    const e1 = v1.slice(p1, n1 === -1 ? undefined : n1);
    const e2 = v2.slice(p2, n2 === -1 ? undefined : n2);
    const d1 = isDigit(e1[0] ?? '');
    const d2 = isDigit(e2[0] ?? '');
    if (d1 && d2) {
      const l1 = strtol(e1);
      const l2 = strtol(e2);
      compare = l1 < l2 ? -1 : l1 > l2 ? 1 : 0;
    } else if (!d1 && !d2) {
      compare = compareSpecialForms(e1, e2);
    } else if (d1) {
      compare = compareSpecialForms(NUMBER, e2);
    } else {
      compare = compareSpecialForms(e1, NUMBER);
    }
    if (compare !== 0) break;
    if (n1 !== -1) p1 = n1 + 1;
    if (n2 !== -1) p2 = n2 + 1;
  }
  if (compare === 0) {
    if (n1 !== -1) {
      const rest = v1.slice(p1);
      compare = isDigit(rest[0] ?? '') ? 1 : compareBytes(rest, NUMBER);
    } else if (n2 !== -1) {
      const rest = v2.slice(p2);
      compare = isDigit(rest[0] ?? '') ? -1 : compareBytes(NUMBER, rest);
    }
  }
  return compare;
}

export type VersionOperator =
  | '<'
  | 'lt'
  | '<='
  | 'le'
  | '>'
  | 'gt'
  | '>='
  | 'ge'
  | '=='
  | 'eq'
  | '!='
  | '<>'
  | 'ne';

/** version_compare($a, $b, $operator). */
export function versionSatisfies(a: string, b: string, operator: VersionOperator): boolean {
  const c = versionCompare(a, b);
  switch (operator) {
    case '<':
    case 'lt':
      return c === -1;
    case '<=':
    case 'le':
      return c !== 1;
    case '>':
    case 'gt':
      return c === 1;
    case '>=':
    case 'ge':
      return c !== -1;
    case '==':
    case 'eq':
      return c === 0;
    default:
      return c !== 0;
  }
}

/**
 * Answers of isNewerVersion by pair. Every update check compares the same few release versions
 * with the few versions sites run, and a comparison costs a few µs (bytes, canonical forms,
 * BigInt elements). Bounded, so odd versions sent by clients cannot grow it.
 */
const newer = new BoundedMap<string, boolean>(1000);

/** True when `candidate` is strictly newer than `current` (the update rule). */
export function isNewerVersion(candidate: string, current: string): boolean {
  const pair = `${candidate}\u0000${current}`;
  let answer = newer.get(pair);
  if (answer === undefined) {
    answer = versionCompare(candidate, current) === 1;
    newer.set(pair, answer);
  }
  return answer;
}
