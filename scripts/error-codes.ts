// Writes docs/errors.md from the error catalogue: `node --import tsx scripts/error-codes.ts`.
// test/foundation/error-catalogue.test.ts fails while the page and the catalogue differ.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { errorCodes } from '../src/http/errors.js';

export function errorsPage(): string {
  const rows = errorCodes()
    .slice()
    .sort((a, b) => a.status - b.status || a.code.localeCompare(b.code))
    .map((e) => `| ${e.status} | \`${e.code}\` | ${e.message.replaceAll('|', '\\|')} |`);
  return [
    '# Error codes',
    '',
    'Every code the API answers with, its HTTP status and its default message, made from the one',
    'error catalogue (`src/http/errors.ts`) by `node --import tsx scripts/error-codes.ts`; a test',
    'keeps this page, the catalogue and the code that throws each error in step. Errors come in the',
    'envelope `{code, message, data: {status, ...}}` described in [api.md](api.md#errors); branch on',
    '`code`, never on the message. When each error happens, and which routes answer it, is told in',
    "the page of the route's module (licensing, distribution, releases, cart, checkout, …).",
    '',
    '| HTTP | code | default message |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL('../docs/errors.md', import.meta.url), errorsPage());
}
