/**
 * The import of another store (docs/migrating.md, 'Importing'): a generated CSV export of
 * --licenses licenses (one product, a customer per two licenses, three sites each) imported with
 * `dist/main.js import csv`, timed, on SQLite or (--database postgres) PostgreSQL: a fresh database
 * on the server of DATABASE_URL when it is set (dropped after), otherwise a server of its own. The baseline of the same run is the dry run of the same files (every row read and checked,
 * nothing written): the ratio is what writing costs on top of reading. The target is the whole
 * import of 100,000 licenses and 300,000 activations in under 5 minutes.
 *
 *   npm run build && taskset -c 1 node --import tsx bench/import.ts [--licenses 100000] [--database postgres]
 *   DATABASE_URL=postgres://user@host:port/postgres node --import tsx bench/import.ts --database postgres
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pgQuery, ROOT, SERVER_NODE, startPostgres } from './lib.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const licenses = Number(arg('licenses', '100000'));
const database = arg('database', 'sqlite');

async function writeCsv(path: string, header: string, rows: (i: number) => string, count: number) {
  const out = createWriteStream(path);
  out.write(`${header}\n`);
  for (let i = 0; i < count; i++) {
    if (!out.write(`${rows(i)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-import-'));
const dataDir = join(dir, 'data');
const csv = join(dir, 'csv');
execFileSync('mkdir', ['-p', csv, dataDir]);
const customers = Math.ceil(licenses / 2);
await writeCsv(
  join(csv, 'customers.csv'),
  'id,email,first_name,last_name',
  (i) => `c${i},buyer${i}@example.com,B,${i}`,
  customers,
);
await writeCsv(
  join(csv, 'products.csv'),
  'id,name,slug,price,activation_limit',
  () => 'p1,Bench Plugin,bench-plugin,49.00,3',
  1,
);
await writeCsv(
  join(csv, 'licenses.csv'),
  'id,key,product_id,variation_id,customer_id,status,expires_at,activation_limit',
  (i) => `l${i},BENCH-${String(i).padStart(10, '0')},p1,,c${Math.floor(i / 2)},active,,`,
  licenses,
);
await writeCsv(
  join(csv, 'activations.csv'),
  'id,license_id,url,staging',
  (i) => `a${i},l${Math.floor(i / 3)},https://site${i}.example.com,0`,
  licenses * 3,
);

/** PostgreSQL: a fresh database on DATABASE_URL's server (a shared one stays up), or a server of our own. */
async function openPostgres(): Promise<{ url: string; stop(): Promise<void> }> {
  const shared = process.env.DATABASE_URL;
  if (!shared) {
    const own = await startPostgres(0);
    return { url: own.url, stop: async () => own.stop() };
  }
  const name = `tollgate_bench_import_${process.pid}`;
  await pgQuery(shared, `CREATE DATABASE ${name}`);
  const url = new URL(shared);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    stop: async () => {
      await pgQuery(shared, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

const pgServer = database === 'postgres' ? await openPostgres() : null;
const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: pgServer?.url ?? '', LOG_LEVEL: 'silent' };
const [bin, ...flags] = SERVER_NODE.slice(1);
void bin;
const timed = (extra: string[]) => {
  const started = process.hrtime.bigint();
  const out = execFileSync(
    'env',
    [
      SERVER_NODE[1]!,
      process.execPath,
      ...flags.slice(1),
      join(ROOT, 'dist/main.js'),
      'import',
      'csv',
      '--dir',
      csv,
      '--json',
      ...extra,
    ],
    { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    seconds,
    report: JSON.parse(out) as {
      ok: boolean;
      problemCount: number;
      counts: Record<string, { created: number }>;
    },
  };
};

try {
  const dry = timed(['--dry-run']);
  const real = timed([]);
  if (!dry.report.ok || !real.report.ok || real.report.problemCount > 0) {
    console.log('INVALID: the import did not reconcile or reported problems', real.report);
    process.exitCode = 1;
  } else {
    const made = real.report.counts;
    console.log(`${database}: ${licenses} licenses, ${licenses * 3} activations, ${customers} customers`);
    console.log(`  dry run (read and check, the baseline): ${dry.seconds.toFixed(1)} s`);
    console.log(
      `  import: ${real.seconds.toFixed(1)} s (${made.licenses!.created} licenses, ${made.activations!.created} activations created); ` +
        `${(real.seconds / dry.seconds).toFixed(1)}x the dry run; ${Math.round((licenses * 4) / real.seconds)} license and activation records/s`,
    );
    const projected = (real.seconds * 100_000) / licenses;
    console.log(
      `  100,000 licenses with 300,000 activations at this rate: ${(projected / 60).toFixed(1)} min (target < 5 min)`,
    );
  }
} finally {
  await pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
}
