// Writes the WordPress SDK's translation template, sdk/wordpress/languages/tollgate-updater.pot,
// from the SDK's own calls to WordPress's translation functions:
// `node --import tsx scripts/wordpress-pot.ts`. test/wordpress/translations.test.ts fails while
// the template and the code differ.
//
// The PHP is read by PHP's own tokenizer (`token_get_all`, run by `php -r`), so strings, comments
// and calls are told apart as PHP sees them. A translation call whose text or domain is not a
// plain single-quoted string, or whose domain is not the SDK's, is an error: such a string could
// not be translated.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SDK = join(ROOT, 'sdk/wordpress');
export const DOMAIN = 'tollgate-updater';
export const POT = join(SDK, 'languages', `${DOMAIN}.pot`);

export interface PotEntry {
  context: string | null;
  msgid: string;
  plural: string | null;
  comments: string[];
  references: string[];
}

/** Argument positions of WordPress's translation functions: text, plural, context, domain. */
const FUNCTIONS: Record<string, { text: number; plural?: number; context?: number; domain: number }> = {
  __: { text: 0, domain: 1 },
  _e: { text: 0, domain: 1 },
  esc_html__: { text: 0, domain: 1 },
  esc_html_e: { text: 0, domain: 1 },
  esc_attr__: { text: 0, domain: 1 },
  esc_attr_e: { text: 0, domain: 1 },
  _x: { text: 0, context: 1, domain: 2 },
  _ex: { text: 0, context: 1, domain: 2 },
  esc_html_x: { text: 0, context: 1, domain: 2 },
  esc_attr_x: { text: 0, context: 1, domain: 2 },
  _n: { text: 0, plural: 1, domain: 3 },
  _nx: { text: 0, plural: 1, context: 3, domain: 4 },
};

/**
 * Every translation call of one PHP file: its function, line, arguments (a string's value when the
 * argument is one single-quoted literal, else null) and the `translators:` comment just before it.
 */
const EXTRACTOR = String.raw`
$names = json_decode($argv[1], true);
$out = [];
foreach (array_slice($argv, 2) as $file) {
    $tokens = token_get_all(file_get_contents($file));
    $comment = null;
    $n = count($tokens);
    for ($i = 0; $i < $n; $i++) {
        $t = $tokens[$i];
        if (is_array($t) && ($t[0] === T_COMMENT || $t[0] === T_DOC_COMMENT)) {
            if (stripos($t[1], 'translators:') !== false) {
                $text = trim(preg_replace('#^\s*(/\*+|//|\*/?)\s?|\s*\*+/\s*$#m', '', $t[1]));
                $comment = ['text' => preg_replace('/\s+/', ' ', $text), 'line' => $t[2] + substr_count($t[1], "\n")];
            }
            continue;
        }
        if (!is_array($t) || $t[0] !== T_STRING || !in_array($t[1], $names, true)) {
            continue;
        }
        $prev = $i - 1;
        while ($prev >= 0 && is_array($tokens[$prev]) && $tokens[$prev][0] === T_WHITESPACE) $prev--;
        if ($prev >= 0 && is_array($tokens[$prev]) && in_array($tokens[$prev][0], [T_OBJECT_OPERATOR, T_DOUBLE_COLON, T_FUNCTION], true)) {
            continue;
        }
        $j = $i + 1;
        while ($j < $n && is_array($tokens[$j]) && $tokens[$j][0] === T_WHITESPACE) $j++;
        if ($j >= $n || $tokens[$j] !== '(') {
            continue;
        }
        $args = [];
        $current = [];
        $depth = 0;
        for ($j++; $j < $n; $j++) {
            $u = $tokens[$j];
            if ($u === '(' || $u === '[' || $u === '{') $depth++;
            if ($u === ')' || $u === ']' || $u === '}') {
                if ($depth === 0) break;
                $depth--;
            }
            if ($u === ',' && $depth === 0) {
                $args[] = $current;
                $current = [];
                continue;
            }
            if (is_array($u) && in_array($u[0], [T_WHITESPACE, T_COMMENT], true)) continue;
            $current[] = $u;
        }
        if ($current) $args[] = $current;
        $values = [];
        foreach ($args as $arg) {
            $literal = count($arg) === 1 && is_array($arg[0]) && $arg[0][0] === T_CONSTANT_ENCAPSED_STRING && $arg[0][1][0] === "'";
            $values[] = $literal ? str_replace(["\\\\", "\\'"], ["\\", "'"], substr($arg[0][1], 1, -1)) : null;
        }
        $near = $comment !== null && $t[2] - $comment['line'] <= 2 && $t[2] >= $comment['line'];
        $out[] = ['file' => $file, 'line' => $t[2], 'function' => $t[1], 'args' => $values, 'comment' => $near ? $comment['text'] : null];
        if ($near) $comment = null;
    }
}
echo json_encode($out);
`;

interface Call {
  file: string;
  line: number;
  function: string;
  args: (string | null)[];
  comment: string | null;
}

function phpFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...phpFiles(path));
    else if (e.name.endsWith('.php')) out.push(path);
  }
  return out;
}

/** The template's entries, in the order the strings first appear (files sorted by path). */
export function potEntries(): PotEntry[] {
  const files = phpFiles(SDK);
  const calls = JSON.parse(
    execFileSync('php', ['-r', EXTRACTOR, JSON.stringify(Object.keys(FUNCTIONS)), ...files], {
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    }),
  ) as Call[];
  const entries = new Map<string, PotEntry>();
  const problems: string[] = [];
  for (const call of calls) {
    const where = `${call.file.slice(SDK.length + 1)}:${call.line}`;
    const spec = FUNCTIONS[call.function]!;
    const text = call.args[spec.text];
    const domain = call.args[spec.domain];
    const plural = spec.plural === undefined ? null : call.args[spec.plural];
    const context = spec.context === undefined ? null : call.args[spec.context];
    if (
      typeof text !== 'string' ||
      domain !== DOMAIN ||
      (spec.plural !== undefined && typeof plural !== 'string')
    ) {
      problems.push(`${where}: ${call.function}() needs literal text and the '${DOMAIN}' domain`);
      continue;
    }
    const key = `${context ?? ''}\u0004${text}`;
    let entry = entries.get(key);
    if (!entry) {
      entry = { context: context ?? null, msgid: text, plural: plural ?? null, comments: [], references: [] };
      entries.set(key, entry);
    }
    entry.references.push(where);
    if (call.comment && !entry.comments.includes(call.comment)) entry.comments.push(call.comment);
    if (/%[0-9]*\$?[sd]/.test(text) && entry.comments.length === 0) {
      problems.push(`${where}: a string with placeholders needs a "translators:" comment`);
    }
  }
  if (problems.length) throw new Error(`untranslatable strings in the SDK:\n${problems.join('\n')}`);
  return [...entries.values()];
}

/** A PO string: quoted, escaped, split after each newline. */
function po(text: string): string {
  const escaped = text.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\t', '\\t');
  const lines = escaped.split('\n');
  if (lines.length === 1) return `"${escaped}"`;
  return [
    '""',
    ...lines.map((l, i) => (i < lines.length - 1 ? `"${l}\\n"` : l ? `"${l}"` : '')).filter(Boolean),
  ].join('\n');
}

export function potFile(entries: PotEntry[] = potEntries()): string {
  const version = (JSON.parse(readFileSync(join(SDK, 'composer.json'), 'utf8')) as { version: string })
    .version;
  const header = [
    '# Translation template of the Tollgate updater for WordPress (tollgate/wordpress-updater).',
    "# Made by scripts/wordpress-pot.ts from the SDK's calls; do not edit by hand.",
    'msgid ""',
    'msgstr ""',
    `"Project-Id-Version: tollgate-updater ${version}\\n"`,
    '"MIME-Version: 1.0\\n"',
    '"Content-Type: text/plain; charset=UTF-8\\n"',
    '"Content-Transfer-Encoding: 8bit\\n"',
    '"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n"',
    `"X-Domain: ${DOMAIN}\\n"`,
    '',
  ];
  const body = entries.map((e) =>
    [
      ...e.comments.map((c) => `#. ${c}`),
      ...e.references.map((r) => `#: ${r}`),
      ...(/%[0-9]*\$?[sd]/.test(e.msgid) ? ['#, php-format'] : []),
      ...(e.context !== null ? [`msgctxt ${po(e.context)}`] : []),
      `msgid ${po(e.msgid)}`,
      ...(e.plural !== null
        ? [`msgid_plural ${po(e.plural)}`, 'msgstr[0] ""', 'msgstr[1] ""']
        : ['msgstr ""']),
      '',
    ].join('\n'),
  );
  return `${header.join('\n')}\n${body.join('\n')}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(POT, potFile());
  console.log(`wrote ${POT.slice(ROOT.length)}`);
}
