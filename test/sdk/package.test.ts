import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sdkTypes, TYPES_FILE } from '../../scripts/sdk-types.js';

/**
 * The SDK as a package (docs/sdk-js.md, 'Building and publishing'): its types are the store's
 * current OpenAPI document, and it builds to plain ES modules that Node.js loads without tsx.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SDK = join(ROOT, 'sdk/js');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('sdk/js/src/openapi.d.ts', () => {
  it('is what scripts/sdk-types.ts makes from the current routes (regenerate it after a route change)', async () => {
    const committed = readFileSync(TYPES_FILE, 'utf8');
    const current = await sdkTypes();
    // One boolean, not a diff of 14,000 lines: the fix is to run the script.
    expect(
      committed === current,
      'sdk/js/src/openapi.d.ts is stale: run `node --import tsx scripts/sdk-types.ts` and commit it',
    ).toBe(true);
    for (const route of ["'/v1/licenses/validate'", "'/v1/software/check'", "'/v1/software/signing-keys'"]) {
      expect(current).toContain(`${route}: {`);
    }
  }, 120_000);
});

describe('the package', () => {
  it('declares itself as the brief of docs/sdk-js.md says: ESM, Node 20+, openapi-fetch its only dependency', () => {
    const pkg = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({ name: '@tollgate/client', version: '0.1.0', type: 'module' });
    expect(Object.keys(pkg.dependencies)).toEqual(['openapi-fetch']);
    expect(pkg.scripts.build).toContain('tsc');
  });

  it('builds with tsc, and the build loads and runs in plain Node.js', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-sdk-build-'));
    dirs.push(dir);
    // The built files find openapi-fetch as an installed package would, through node_modules.
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const out = join(dir, 'dist');
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(SDK, 'tsconfig.json'), '--outDir', out],
      { stdio: 'pipe' },
    );
    copyFileSync(TYPES_FILE, join(out, 'openapi.d.ts'));
    const script = `
      import { Tollgate, TollgateError, verifyWebhook, CLIENT_CODES } from ${JSON.stringify(join(out, 'index.js'))};
      const client = new Tollgate({ url: 'https://store.example' });
      let code = null;
      try { verifyWebhook('{}', {}, 'secret'); } catch (e) { code = e instanceof TollgateError ? e.code : 'other'; }
      console.log(JSON.stringify({ api: typeof client.api.GET, code, codes: CLIENT_CODES.length }));
    `;
    const printed = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(JSON.parse(printed)).toEqual({ api: 'function', code: 'webhook_signature_invalid', codes: 18 });
    expect(readFileSync(join(out, 'index.d.ts'), 'utf8')).toContain('./openapi.js');
  }, 120_000);
});
