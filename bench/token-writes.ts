/**
 * bench/token-writes: what writing a download token costs SQLite with the index on its hash alone
 * (the schema up to migration 2026113090) and with the index on (locator, hash) of migration
 * 2026113100_token_locators (docs/performance.md, 'Download token locators'). No server: each
 * schema made by the real migrations in a fresh file, WAL and `synchronous=NORMAL` as the server
 * opens it, then the tokens of `--tokens` eligible update checks inserted the way the group commit
 * runs them (one transaction per `--batch` tokens, each with RETURNING id), every token of another
 * of 60,000 activations. The two schemas take turns, `--rounds` times; it prints the process's CPU
 * per token (user + system: SQLite's pager and the kernel's WAL writes), and the locator's share of
 * the hash index's. Run by hand:
 *
 *   taskset -c 1 node --import tsx bench/token-writes.ts [--rounds 3] [--tokens 60000] [--batch 10]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { TOKEN_COLUMNS } from '../src/modules/distribution/tokens.repository.js';
import { randomHex, sha256 } from '../src/random.js';
import { median } from './lib.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    tokens: { type: 'string', default: '60000' },
    batch: { type: 'string', default: '10' },
  },
});
const TOKENS = Number(values.tokens);
const BATCH = Number(values.batch);

/** µs of CPU per token written, on a fresh database migrated up to `upTo` (or to the latest). */
async function run(upTo: string | undefined): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-token-writes-'));
  const database = openDatabase({ kind: 'sqlite', file: join(dir, 'db.sqlite'), synchronous: 'NORMAL' });
  try {
    await migrateToLatest(database.db, 'sqlite', upTo);
    const sqlite = database.sqlite!;
    const located = upTo === undefined;
    // The columns the update check's insert writes (TokensRepository), less the locator before it.
    const columns = TOKEN_COLUMNS.filter((c) => located || c !== 'token_locator');
    const insert = sqlite
      .prepare(
        `insert into download_tokens (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')}) returning id`,
      )
      .raw(true);
    const begin = sqlite.prepare('BEGIN IMMEDIATE');
    const commit = sqlite.prepare('COMMIT');
    const artifact = sha256('artifact');
    const start = Date.now();
    const rows = Array.from({ length: TOKENS }, (_, i) => {
      const token: Record<(typeof TOKEN_COLUMNS)[number], unknown> = {
        token_hash: sha256(randomHex(32)),
        // A new token's locator: its time in milliseconds, about 16 a millisecond at the check's pace.
        token_locator: start + Math.floor(i / 16),
        binding_version: 1,
        policy: 'protected',
        product_id: 1,
        release_id: 1,
        artifact_id: 1,
        artifact_sha256: artifact,
        purpose: 'update',
        license_id: 1 + ((i * 7919) % 20_000),
        activation_id: 1 + ((i * 104_729) % 60_000),
        activation_revision: 1,
        identity_key: sha256(`site-${i}`),
        installation_id: null,
        domain_normalized: `site-${i}.example.com`,
        created_at: '2026-11-29T12:00:00.000Z',
        expires_at: '2026-11-29T12:05:00.000Z',
        used_at: null,
        invalidated_at: null,
        invalidated_reason: null,
      };
      return columns.map((c) => token[c]);
    });
    const before = process.cpuUsage();
    for (let i = 0; i < TOKENS; i += BATCH) {
      begin.run();
      for (let j = i; j < Math.min(i + BATCH, TOKENS); j++) insert.all(rows[j]);
      commit.run();
    }
    const used = process.cpuUsage(before);
    return (used.user + used.system) / TOKENS;
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const hashIndex: number[] = [];
const locator: number[] = [];
for (let r = 1; r <= Number(values.rounds); r++) {
  hashIndex.push(await run('2026113090_subscription_gateway_ended'));
  locator.push(await run(undefined));
  console.log(
    `round ${r}: hash index ${hashIndex.at(-1)!.toFixed(1)} µs a token, locator ${locator.at(-1)!.toFixed(1)} µs`,
  );
}
const [h, l] = [median(hashIndex), median(locator)];
console.log(
  `median: hash index ${h.toFixed(1)} µs a token, locator ${l.toFixed(1)} µs: ${((100 * l) / h).toFixed(1)}% of the hash index's CPU`,
);
