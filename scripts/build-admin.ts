// Builds the store owner's console (console) into dist/admin with Vite: `npm run build` runs it
// after the server's build. The build is skipped while dist/admin was made from the same sources
// and the same locked dependencies (a SHA-256 of them, kept in dist/admin/.source-hash), so
// `npm start` does not rebuild an unchanged console; `--force` builds anyway. Every text file of the
// build gets a Brotli (`.br`) and a gzip (`.gz`) copy beside it, which src/pages/admin.ts sends to
// browsers that accept them (docs/performance.md, 'Static assets').
// test/browser/admin.test.ts calls ensureConsoleBuilt() for the same reason.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotli, COMPRESSIBLE, gzip } from '../src/pages/static.js';
import { CONSOLE_LIMITS } from './console-limits.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = join(ROOT, 'console');
export const CONSOLE_DIR = join(ROOT, 'dist', 'admin');
const STAMP = join(CONSOLE_DIR, '.source-hash');

/** Files of the server's source the console's build uses: the statuses' words and the slug rule it bundles, and the compression. */
const SHARED = [
  join(ROOT, 'src', 'pages', 'status-labels.ts'),
  join(ROOT, 'src', 'pages', 'static.ts'),
  join(ROOT, 'src', 'modules', 'catalogue', 'slug.ts'),
];

/**
 * SHA-256 over every file of console (path and bytes), the shared files, package-lock.json, this
 * script and the inputs' limits as the route schemas give them now.
 */
export function consoleSourceHash(): string {
  const hash = createHash('sha256');
  const files = readdirSync(SOURCES, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
  for (const file of [...files, ...SHARED, join(ROOT, 'package-lock.json'), fileURLToPath(import.meta.url)]) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  hash.update(JSON.stringify(CONSOLE_LIMITS));
  return hash.digest('hex');
}

export function consoleIsFresh(): boolean {
  try {
    return readFileSync(STAMP, 'utf8').trim() === consoleSourceHash();
  } catch {
    return false;
  }
}

/** Builds the console unless dist/admin is already the build of the current sources; true when it built. */
export function ensureConsoleBuilt(opts: { force?: boolean; quiet?: boolean } = {}): boolean {
  if (!opts.force && consoleIsFresh()) return false;
  const hash = consoleSourceHash();
  // Vite in its own process: its CLI prints the files and their compressed sizes.
  execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'),
      'build',
      '--config',
      join(SOURCES, 'vite.config.ts'),
    ],
    // Always a production build: under vitest NODE_ENV is `test`, which would make Vite bundle
    // React's development build (twice the size, and slower).
    { cwd: ROOT, stdio: opts.quiet ? 'pipe' : 'inherit', env: { ...process.env, NODE_ENV: 'production' } },
  );
  precompress(CONSOLE_DIR);
  writeFileSync(STAMP, `${hash}\n`);
  return true;
}

/** Writes `<file>.br` and `<file>.gz` beside each text file of `dir`, at the highest levels. */
export function precompress(dir: string) {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && COMPRESSIBLE.test(e.name))
    .map((e) => join(e.parentPath, e.name));
  for (const file of files) {
    const bytes = readFileSync(file);
    writeFileSync(`${file}.br`, brotli(bytes));
    writeFileSync(`${file}.gz`, gzip(bytes));
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const built = ensureConsoleBuilt({ force: process.argv.includes('--force') });
  if (!built) console.log('console: dist/admin is up to date');
}
