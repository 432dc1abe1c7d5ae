import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TYPES_FILE } from '../../scripts/sdk-types.js';

const CONSOLE = fileURLToPath(new URL('../../console/src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/**
 * The console's API types are the SDK's generated file (docs/development.md, "The console's API
 * client"): test/sdk/package.test.ts keeps that file current with the routes, so the console's
 * tsc (in `npm run check`) fails when a route's answer loses a field a screen reads. That holds
 * only while the console imports that one file and reaches the API through the typed client alone.
 */
describe("the console's API client", () => {
  const files = sources(CONSOLE);
  const api = join(CONSOLE, 'api.ts');

  it('types the API with the SDK’s generated file, imported and not copied', () => {
    const imported = /import type \{ paths \} from '([^']+)';/.exec(readFileSync(api, 'utf8'));
    expect(imported).not.toBeNull();
    expect(join(CONSOLE, `${imported![1]}.d.ts`)).toBe(TYPES_FILE);
    expect(files.filter((f) => /openapi/i.test(relative(CONSOLE, f)))).toEqual([]);
    expect(existsSync(join(CONSOLE, 'types.ts'))).toBe(false);
  });

  it('reaches the API only through the typed client of api.ts', () => {
    const untyped = files
      .filter((f) => f !== api && /\bfetch\(|XMLHttpRequest/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(CONSOLE, f));
    expect(untyped).toEqual([]);
  });
});
