// Writes docs/errors.md from the error catalogue: `node --import tsx scripts/error-codes.ts`.
// test/foundation/error-catalogue.test.ts fails while the page and the catalogue differ.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { errorCodes } from '../src/http/errors.js';

/**
 * Pairs of codes that look alike and are kept apart on purpose: each is named by the public
 * contract of its own routes (the licensing and OAuth protocols, WordPress's REST conventions the
 * updater code expects), so merging them would break clients that branch on `code`.
 */
const alike = [
  '## Codes that look alike',
  '',
  'Some codes mean nearly the same thing on different routes. They stay distinct because clients',
  'already branch on them (the updater code in your software, WordPress-style REST clients):',
  '',
  '| codes | why both |',
  '|---|---|',
  "| `missing_key` / `missing_license_key` | `missing_key` is the licensing routes' (activate, validate, deactivate); `missing_license_key` is the customer-approval start's (`GET /v1/oauth/authorize`), whose client is a browser redirect. |",
  '| `missing_params` / `missing_identity` / `missing_identifier` | `missing_params`: a required body field of the approval or package request; `missing_identity`: a site identity field of activate and validate; `missing_identifier`: deactivation needs both the domain and the installation id. |',
  "| `rest_invalid_param` / `invalid_parameters` | WordPress's REST convention, which the API follows: `rest_invalid_param` is a known field with a value of the wrong type or form; `invalid_parameters` is a field the route does not take, or a form that cannot be read as the route's fields. |",
  "| `expired` / `token_expired` / `invalid_usage_expiry` | `expired` is a license's effective status; `token_expired` is a download token's; `invalid_usage_expiry` is a license whose usage window ended before its expiry. |",
  "| `rate_limited` / `too_many_login_attempts` / `server_busy` | `rate_limited`: the issuance routes' per-minute limit; `too_many_login_attempts`: sign-in throttling of one account or address, with a lockout; `server_busy`: every password-hashing slot is taken, try again in a second. |",
  '| `unauthorized` / `rest_forbidden` / `rest_not_logged_in` | `unauthorized`: the signed-in customer does not own the license (approval pages); `rest_forbidden`: signed in, but not an administrator; `rest_not_logged_in`: not signed in. |',
  "| `invalid_variation` / `variation_not_found` | `invalid_variation` is the cart's (404 unknown, 400 of another product, as the cart's contract says); `variation_not_found` is the administrator routes' (a license or product naming a variation that does not exist). |",
  "| `not_found` / `license_not_found` / `invalid_license` | `invalid_license` is the licensing protocol's answer to a key it does not know (403, so a key cannot be probed); `license_not_found` is the administrator's license routes'; `not_found` is the customer's own license routes', which do not say whether another customer's license exists. |",
  '',
];

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
    ...alike,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL('../docs/errors.md', import.meta.url), errorsPage());
}
