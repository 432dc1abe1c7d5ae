import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, SDK, wordpressPrerequisites } from './helpers.js';

/**
 * The WordPress SDK on every PHP line it supports (docs/sdk-wordpress.md, 'Tests'): PHP 7.4 to
 * 8.4 compiled to WebAssembly (@php-wasm/node), a few seconds a line. Each line parses, compiles
 * and loads every SDK file without a warning or a deprecation, has every internal function the
 * SDK calls, and runs the SDK's logic that needs no database (test/wordpress/php-lines.php).
 * WordPress itself runs on Debian's PHP in updater.test.ts: php-wasm has no MySQL socket.
 */

/**
 * The part of @php-wasm's API used here. Its published declarations re-export without file
 * extensions, which this project's NodeNext resolution does not follow.
 */
interface WasmPhp {
  mkdir(path: string): void;
  writeFile(path: string, data: Uint8Array): void;
  run(request: { code: string }): Promise<{ text: string; errors: string }>;
  exit(): void;
}
async function wasmPhp(line: string): Promise<WasmPhp> {
  const { loadNodeRuntime } = (await import('@php-wasm/node')) as unknown as {
    loadNodeRuntime(version: string, options: { emscriptenOptions: { processId: number } }): Promise<number>;
  };
  const { PHP } = (await import('@php-wasm/universal')) as unknown as {
    PHP: new (runtime: number) => WasmPhp;
  };
  return new PHP(await loadNodeRuntime(line, { emscriptenOptions: { processId: 1 } }));
}

const LINES = ['7.4', '8.0', '8.1', '8.2', '8.3', '8.4'] as const;
const SODIUM_COMPAT = '/usr/share/wordpress/wp-includes/sodium_compat';

const missing = wordpressPrerequisites();
const skip = process.env.SKIP_WORDPRESS_TESTS === '1' || (missing !== null && !process.env.CI);

/** Every file under `dir`, as [path relative to dir, bytes], symbolic links followed. */
function tree(dir: string): [string, Buffer][] {
  const out: [string, Buffer][] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push([relative(dir, path), readFileSync(path)]);
    }
  };
  walk(dir);
  return out;
}

/**
 * The internal PHP functions the SDK calls, read with PHP's tokenizer on the host's PHP, less
 * those the SDK guards with function_exists() (idn_to_ascii, sodium_*…).
 */
function internalFunctionsCalled(): string[] {
  const code = String.raw`
$internal = array_flip(get_defined_functions()['internal']);
$called = []; $guarded = [];
foreach (array_slice($argv, 1) as $file) {
    $src = file_get_contents($file);
    preg_match_all("/function_exists\\('([a-z0-9_]+)'\\)/i", $src, $m);
    foreach ($m[1] as $g) $guarded[strtolower($g)] = true;
    $t = token_get_all($src);
    foreach ($t as $i => $tok) {
        if (!is_array($tok) || $tok[0] !== T_STRING) continue;
        $j = $i + 1; while (isset($t[$j]) && is_array($t[$j]) && $t[$j][0] === T_WHITESPACE) $j++;
        $k = $i - 1; while ($k >= 0 && is_array($t[$k]) && $t[$k][0] === T_WHITESPACE) $k--;
        if (($t[$j] ?? null) !== '(') continue;
        if ($k >= 0 && is_array($t[$k]) && in_array($t[$k][0], [T_OBJECT_OPERATOR, T_DOUBLE_COLON, T_FUNCTION, T_NEW], true)) continue;
        $name = strtolower($tok[1]);
        if (isset($internal[$name])) $called[$name] = true;
    }
}
echo json_encode(array_values(array_diff(array_keys($called), array_keys($guarded))));
`;
  const files = tree(SDK)
    .filter(([p]) => p.endsWith('.php'))
    .map(([p]) => join(SDK, p));
  return JSON.parse(execFileSync('php', ['-r', code, ...files], { encoding: 'utf8' })) as string[];
}

describe.skipIf(skip)('the WordPress SDK on PHP 7.4 to 8.4 (php-wasm)', () => {
  const functions = skip ? [] : internalFunctionsCalled();

  it('reads the internal functions the SDK calls', () => {
    expect(functions).toEqual(expect.arrayContaining(['hash_equals', 'json_decode', 'base64_decode']));
  });

  for (const line of LINES) {
    it(`PHP ${line}: every file parses and loads cleanly, and the SDK's own logic holds`, async () => {
      const php = await wasmPhp(line);
      try {
        const put = (base: string, files: [string, Buffer][]) => {
          for (const [path, data] of files) {
            const full = `${base}/${path}`;
            php.mkdir(full.slice(0, full.lastIndexOf('/')));
            php.writeFile(full, data);
          }
        };
        put('/sdk', tree(SDK));
        put('/sodium_compat', tree(SODIUM_COMPAT));
        put('/test', [['php-lines.php', readFileSync(join(ROOT, 'test/wordpress/php-lines.php'))]]);
        const argv = ['php-lines.php', '/sdk', '/sodium_compat', JSON.stringify(functions)];
        const response = await php.run({
          code: `<?php $argv = json_decode(${JSON.stringify(JSON.stringify(argv))}, true); require '/test/php-lines.php';`,
        });
        const out = response.text.trim().split('\n').pop() ?? '';
        let result: { version: string; problems: string[]; checks: Record<string, unknown> };
        try {
          result = JSON.parse(out);
        } catch {
          throw new Error(`PHP ${line} printed no answer:\n${response.text}\n${response.errors}`);
        }
        expect(result.version.startsWith(`${line}.`)).toBe(true);
        expect(result.problems).toEqual([]);
        expect(result.checks).toEqual({
          receipt_valid: true,
          receipt_tampered: false,
          receipt_other_site: false,
          receipt_other_domain: false,
          receipt_unknown_key: false,
          receipt_ran_out: false,
          receipt_from_future: false,
          receipt_usage_over: false,
          message_store: 'From the store.',
          message_fallback: true,
          message_with_version_store: 'Version 1.1.0 is available. Renew.',
          message_with_version_own: true,
          busy_1: 'The store is busy. The updater will ask again in 1 minute.',
          busy_3: 'The store is busy. The updater will ask again in 3 minutes.',
          renewable: [true, false],
          code_rest: 'expired',
          code_validate: 'revoked',
          outage: [true, true, false],
          versions: [true, false, true, true],
        });
      } finally {
        php.exit();
      }
    }, 60_000);
  }
});
