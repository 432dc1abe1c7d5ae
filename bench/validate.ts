/**
 * bench/validate: POST /v1/licenses/validate throughput and latency against a bare Fastify JSON
 * route of the same response size, measured in the same run (the ratio is what counts on a shared,
 * noisy machine). Run by hand:
 *
 *   npm run build && taskset -c 1 node --import tsx bench/validate.ts [--licenses 100000] [--seconds 10] [--rounds 3] [--connections 50] [--database postgres]
 *
 * With `--database postgres` the same licenses are also copied into a throw-away PostgreSQL server
 * (pinned to the server's core), a second server runs on it, and each round loads SQLite's, then
 * PostgreSQL's, then the bare route: PostgreSQL's figures are given against both, in the same run.
 *
 * With `--processes 2` (and `--database postgres`) a second server process runs on the same
 * PostgreSQL database, and each round also loads the two together, half the connections each,
 * started at once: their sum against the one-process PostgreSQL figure of the same round is the
 * scaling factor from one process to two. Server 1 and PostgreSQL stay on core 0; server 2 goes to
 * `--second-core` (1, the load generator's, by default; 0 to share core 0), printed with the figures.
 *
 * With `--against DIR` another build of Tollgate (a checkout at DIR with its own `npm run build`) runs
 * as a third server on the same licenses, and each round loads ours, that build's and the bare route
 * in turn (the two builds taking turns going first): the regression check of a change as ratios of
 * the same rounds (docs/performance.md, 'How to run the benchmarks').
 *
 * The server under test and the baseline are both pinned to core 0 and loaded in turn, round by
 * round; this process (the load generator) should run on core 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { openSqlite } from '../src/db/sqlite.js';
import { identityKey } from '../src/modules/identity/identity.js';
import { randomHex, uuid } from '../src/random.js';
import {
  againstBare,
  checkServerOptions,
  copyToPostgres,
  load,
  processesNote,
  report,
  reportOthers,
  reportProcesses,
  requireValidRounds,
  SERVER_NODE,
  SERVER_OPTIONS,
  startPinned,
  startPostgres,
} from './lib.js';

const { values } = parseArgs({
  options: {
    licenses: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    ...SERVER_OPTIONS,
  },
});
const SECOND_CORE = checkServerOptions(values);
const LICENSES = Number(values.licenses);
const ACTIVATIONS_PER_LICENSE = 3;
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const SAMPLE = 5000;

const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
const file = join(dataDir, 'tollgate.sqlite');

/** The licenses and sites of the run, made once so another build can be seeded with the same ones. */
interface Row {
  key: string;
  sites: { domain: string; installationId: string }[];
}

function makeRows(): { rows: Row[]; bodies: string[] } {
  const rows: Row[] = [];
  const bodies: string[] = [];
  const every = Math.max(1, Math.floor(LICENSES / SAMPLE));
  for (let i = 0; i < LICENSES; i++) {
    const row: Row = { key: `BENCH-${randomHex(10).toUpperCase()}-${i}`, sites: [] };
    for (let j = 0; j < ACTIVATIONS_PER_LICENSE; j++) {
      const site = { domain: `site${i}-${j}.example.com`, installationId: uuid() };
      row.sites.push(site);
      if (j === i % ACTIVATIONS_PER_LICENSE && i % every === 0) {
        bodies.push(
          JSON.stringify({
            license_key: row.key,
            domain: `https://${site.domain}/`,
            installation_id: site.installationId,
          }),
        );
      }
    }
    rows.push(row);
  }
  return { rows, bodies };
}

/** Writes the rows into a migrated store's file (ours, or another build's after its own start). */
function insertRows(sqliteFile: string, rows: Row[]): void {
  const db = openSqlite(sqliteFile);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const now = new Date().toISOString();
  db.prepare(
    `insert into users (email, password_hash, role, first_name, last_name, created_at, updated_at)
     values ('bench@example.com', 'x', 'customer', 'Bench', 'User', ?, ?)`,
  ).run(now, now);
  db.prepare(
    `insert into products (name, status, type, price_minor, virtual, activation_limit, created_at, updated_at)
     values ('Bench Plugin', 'publish', 'simple', 4900, 1, 3, ?, ?)`,
  ).run(now, now);
  const insLicense = db.prepare(
    `insert into licenses (license_key, product_id, variation_id, user_id, status, activation_limit, created_at, updated_at)
     values (?, 1, 0, 1, 'active', 3, ?, ?)`,
  );
  // Sites seen just now, as on a store that runs: otherwise each sampled site's first validate
  // writes its last_seen_at (once an hour on a live store), and a short run counts those writes.
  // A build from before last_seen_at has no such column.
  const seenColumn = (db.prepare('pragma table_info(activations)').all() as { name: string }[]).some(
    (c) => c.name === 'last_seen_at',
  );
  const insActivation = db.prepare(
    `insert into activations (license_id, identity_key, domain, domain_normalized, installation_id, ip_address,
       user_agent, status, activated_at, activation_revision, updated_at${seenColumn ? ', last_seen_at' : ''})
     values (?, ?, ?, ?, ?, '127.0.0.1', 'bench', 'active', ?, 1, ?${seenColumn ? ', ?' : ''})`,
  );
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const row = rows[i]!;
      const licenseId = Number(insLicense.run(row.key, now, now).lastInsertRowid);
      for (const site of row.sites) {
        const id = site.installationId;
        const values = [licenseId, identityKey(id, site.domain), site.domain, site.domain, id, now, now];
        insActivation.run(...(seenColumn ? [...values, now] : values));
      }
    }
  });
  for (let i = 0; i < rows.length; i += 10_000) batch(i, Math.min(rows.length, i + 10_000));
  if (process.env.BENCH_ANALYZE) db.exec('analyze');
  db.close();
}

async function seed(): Promise<{ rows: Row[]; bodies: string[] }> {
  const database = openDatabase({ kind: 'sqlite', file, synchronous: 'NORMAL' });
  await migrateToLatest(database.db, database.dialect);
  await database.close();
  const started = Date.now();
  const made = makeRows();
  insertRows(file, made.rows);
  console.log(
    `seeded ${LICENSES} licenses, ${LICENSES * ACTIVATIONS_PER_LICENSE} activations in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return made;
}

/**
 * Another build (a checkout with its own `npm run build`): started once on an empty directory so it
 * migrates its own schema, stopped, given the same rows, and started again.
 */
async function startAgainst(dir: string, nodeArgs: string[], rows: Row[]) {
  const dataDirAgainst = mkdtempSync(join(dataDir, 'against-'));
  const argv = [...nodeArgs, join(dir, 'dist/main.js'), 'serve'];
  const env = { DATA_DIR: dataDirAgainst, LOG_LEVEL: 'warn' };
  await (await startPinned(0, argv, env, dir)).stop();
  insertRows(join(dataDirAgainst, 'tollgate.sqlite'), rows);
  return startPinned(0, argv, env, dir);
}

async function main() {
  const { rows, bodies } = await seed();
  const nodeArgs = [
    ...SERVER_NODE,
    ...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=/tmp/tgprof'] : []),
  ];
  const postgres = values.database === 'postgres' ? await startPostgres(0) : null;
  const server = await startPinned(0, [...nodeArgs, 'dist/main.js', 'serve'], {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  });
  let otherServer: Awaited<ReturnType<typeof startPinned>> | null = null;
  let secondServer: Awaited<ReturnType<typeof startPinned>> | null = null;
  try {
    if (postgres) {
      const database = openDatabase({ kind: 'postgres', url: postgres.url });
      await migrateToLatest(database.db, database.dialect);
      await database.close();
      await copyToPostgres(file, postgres.url, ['users', 'products', 'licenses', 'activations']);
      otherServer = await startPinned(0, [...nodeArgs, 'dist/main.js', 'serve'], {
        DATA_DIR: mkdtempSync(join(dataDir, 'pg-')),
        DATABASE_URL: postgres.url,
        LOG_LEVEL: 'warn',
      });
      if (values.processes === '2') {
        secondServer = await startPinned(SECOND_CORE, [...nodeArgs, 'dist/main.js', 'serve'], {
          DATA_DIR: mkdtempSync(join(dataDir, 'pg2-')),
          DATABASE_URL: postgres.url,
          LOG_LEVEL: 'warn',
        });
      }
    }
    if (values.against) otherServer = await startAgainst(values.against, nodeArgs, rows);
    const responseSize = await probe(server.url, bodies[0]!);
    if (otherServer) await probe(otherServer.url, bodies[0]!);
    if (secondServer) await probe(secondServer.url, bodies[0]!);
    const otherUrl = otherServer && `${otherServer.url}/v1/licenses/validate`;
    const secondUrl = secondServer && `${secondServer.url}/v1/licenses/validate`;
    const other = otherServer && { url: otherUrl!, pid: otherServer.child.pid! };
    const runs = await againstBare({
      ours: { url: `${server.url}/v1/licenses/validate`, pid: server.child.pid! },
      others: other
        ? [
            other,
            ...(secondServer
              ? [{ ...other, second: { url: secondUrl!, pid: secondServer.child.pid! } }]
              : []),
          ]
        : [],
      responseSize,
      alternate: Boolean(values.against),
      rounds: ROUNDS,
      seconds: SECONDS,
      connections: CONNECTIONS,
      load: (url, seconds, pid, connections) =>
        load({
          url,
          bodies,
          seconds,
          pid,
          connections: connections ?? CONNECTIONS,
          dbPids: url === otherUrl || url === secondUrl ? postgres?.pids : undefined,
        }),
    });
    console.log(`licenses:      ${LICENSES}, ${CONNECTIONS} connections`);
    console.log(`response size: ${responseSize} bytes`);
    report('validate', runs, 'target >= 65%');
    if (otherServer && values.against)
      reportOthers('against', runs, runs.others[0]!, 'the other build', 'ours');
    else if (otherServer)
      reportOthers('PostgreSQL', runs, runs.others[0]!, 'target >= 33% of SQLite, p99 <= 3x');
    if (secondServer) reportProcesses(runs, runs.others[0]!, runs.others[1]!, processesNote(SECOND_CORE));
    requireValidRounds(runs, ROUNDS);
  } finally {
    await secondServer?.stop();
    await otherServer?.stop();
    await server.stop();
    postgres?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One validate on `base`: it must be valid; answers the response's size in bytes. */
async function probe(base: string, body: string): Promise<number> {
  const res = await fetch(`${base}/v1/licenses/validate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  if (res.status !== 200 || !JSON.parse(text).valid)
    throw new Error(`validate probe failed: ${res.status} ${text}`);
  return Buffer.byteLength(text);
}

main().catch((e) => {
  console.error(e);
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
});
