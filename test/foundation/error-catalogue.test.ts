import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorsPage } from '../../scripts/error-codes.js';
import { errorCodes } from '../../src/http/errors.js';

const ROOT = new URL('../..', import.meta.url).pathname;

function files(dir: string, ending: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(ending))
    .map((e) => join(e.parentPath, e.name));
}

const source = files('src', '.ts')
  .filter((f) => !f.endsWith(join('http', 'errors.ts')))
  .map((f) => readFileSync(f, 'utf8'))
  .join('\n');
const docs = files('docs', '.md').map((f) => [f, readFileSync(f, 'utf8')] as const);

describe('the one error catalogue', () => {
  it('docs/errors.md is the catalogue as it is (regenerate: node --import tsx scripts/error-codes.ts)', () => {
    expect(readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8')).toBe(errorsPage());
  });

  it('every code of the catalogue is answered somewhere in the source', () => {
    const unused = errorCodes()
      .map((e) => e.code)
      .filter((code) => !source.includes(`'${code}'`));
    expect(unused).toEqual([]);
  });

  it('every code a docs table gives with its HTTP status exists in the catalogue', () => {
    const known = new Set<string>(errorCodes().map((e) => e.code));
    const unknown: string[] = [];
    let rows = 0;
    for (const [file, text] of docs) {
      for (const m of text.matchAll(/^\|[^|\n]*\b[1-5]\d\d\b[^|\n]*\|\s*`([a-z][a-z0-9_]+)`/gm)) {
        rows++;
        if (!known.has(m[1]!)) unknown.push(`${file.slice(ROOT.length)}: ${m[1]}`);
      }
    }
    // errors.md alone has a row for each code; the module pages add theirs.
    expect(rows).toBeGreaterThan(errorCodes().length + 50);
    expect(unknown).toEqual([]);
  });
});
