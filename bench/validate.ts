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
  copyToPostgres,
  load,
  report,
  reportOthers,
  SERVER_NODE,
  startPinned,
  startPostgres,
} from './lib.js';

const { values } = parseArgs({
  options: {
    licenses: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    database: { type: 'string', default: 'sqlite' },
  },
});
if (values.database !== 'sqlite' && values.database !== 'postgres') {
  throw new Error('--database is sqlite or postgres');
}
const LICENSES = Number(values.licenses);
const ACTIVATIONS_PER_LICENSE = 3;
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const SAMPLE = 5000;

const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
const file = join(dataDir, 'tollgate.sqlite');

async function seed(): Promise<string[]> {
  const database = openDatabase({ kind: 'sqlite', file, synchronous: 'NORMAL' });
  await migrateToLatest(database.db, database.dialect);
  await database.close();
  const db = openSqlite(file);
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
  const insActivation = db.prepare(
    `insert into activations (license_id, identity_key, domain, domain_normalized, installation_id, ip_address,
       user_agent, status, activated_at, activation_revision, updated_at)
     values (?, ?, ?, ?, ?, '127.0.0.1', 'bench', 'active', ?, 1, ?)`,
  );
  const bodies: string[] = [];
  const every = Math.max(1, Math.floor(LICENSES / SAMPLE));
  const started = Date.now();
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const key = `BENCH-${randomHex(10).toUpperCase()}-${i}`;
      const licenseId = Number(insLicense.run(key, now, now).lastInsertRowid);
      for (let j = 0; j < ACTIVATIONS_PER_LICENSE; j++) {
        const domain = `site${i}-${j}.example.com`;
        const installationId = uuid();
        insActivation.run(
          licenseId,
          identityKey(installationId, domain),
          domain,
          domain,
          installationId,
          now,
          now,
        );
        if (j === i % ACTIVATIONS_PER_LICENSE && i % every === 0) {
          bodies.push(
            JSON.stringify({
              license_key: key,
              domain: `https://${domain}/`,
              installation_id: installationId,
            }),
          );
        }
      }
    }
  });
  for (let i = 0; i < LICENSES; i += 10_000) batch(i, Math.min(LICENSES, i + 10_000));
  if (process.env.BENCH_ANALYZE) db.exec('analyze');
  db.close();
  console.log(
    `seeded ${LICENSES} licenses, ${LICENSES * ACTIVATIONS_PER_LICENSE} activations in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return bodies;
}

async function main() {
  const bodies = await seed();
  const nodeArgs = [
    ...SERVER_NODE,
    ...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=/tmp/tgprof'] : []),
  ];
  const postgres = values.database === 'postgres' ? await startPostgres(0) : null;
  const server = await startPinned(0, [...nodeArgs, 'dist/main.js', 'serve'], {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  });
  let pgServer: Awaited<ReturnType<typeof startPinned>> | null = null;
  try {
    if (postgres) {
      const database = openDatabase({ kind: 'postgres', url: postgres.url });
      await migrateToLatest(database.db, database.dialect);
      await database.close();
      await copyToPostgres(file, postgres.url, ['users', 'products', 'licenses', 'activations']);
      pgServer = await startPinned(0, [...nodeArgs, 'dist/main.js', 'serve'], {
        DATA_DIR: mkdtempSync(join(dataDir, 'pg-')),
        DATABASE_URL: postgres.url,
        LOG_LEVEL: 'warn',
      });
    }
    const responseSize = await probe(server.url, bodies[0]!);
    if (pgServer) await probe(pgServer.url, bodies[0]!);
    const pgUrl = pgServer && `${pgServer.url}/v1/licenses/validate`;
    const runs = await againstBare({
      ours: { url: `${server.url}/v1/licenses/validate`, pid: server.child.pid! },
      others: pgServer ? [{ url: pgUrl!, pid: pgServer.child.pid! }] : [],
      responseSize,
      rounds: ROUNDS,
      seconds: SECONDS,
      load: (url, seconds, pid) =>
        load({
          url,
          bodies,
          seconds,
          pid,
          connections: CONNECTIONS,
          dbPids: url === pgUrl ? postgres!.pids : undefined,
        }),
    });
    console.log(`licenses:      ${LICENSES}, ${CONNECTIONS} connections`);
    console.log(`response size: ${responseSize} bytes`);
    report('validate', runs, 'target >= 50%, p99 < 5 ms');
    if (pgServer) reportOthers('PostgreSQL', runs, runs.others[0]!, 'target >= 33% of SQLite, p99 <= 3x');
  } finally {
    await pgServer?.stop();
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
