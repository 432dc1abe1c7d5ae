/**
 * bench/validate: POST /v1/licenses/validate throughput and latency against a bare Fastify JSON
 * route of the same response size, measured in the same run (the ratio is what counts on a shared,
 * noisy machine). Run by hand:
 *
 *   npm run build && taskset -c 1 node --import tsx bench/validate.ts [--licenses 100000] [--seconds 10] [--rounds 3] [--connections 50]
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
import { againstBare, load, report, SERVER_NODE, startPinned } from './lib.js';

const { values } = parseArgs({
  options: {
    licenses: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
  },
});
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
  const server = await startPinned(0, [...nodeArgs, 'dist/main.js', 'serve'], {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  });
  try {
    const probe = await fetch(`${server.url}/v1/licenses/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bodies[0],
    });
    const text = await probe.text();
    if (probe.status !== 200 || !JSON.parse(text).valid)
      throw new Error(`validate probe failed: ${probe.status} ${text}`);
    const responseSize = Buffer.byteLength(text);
    const runs = await againstBare({
      ours: { url: `${server.url}/v1/licenses/validate`, pid: server.child.pid! },
      responseSize,
      rounds: ROUNDS,
      seconds: SECONDS,
      load: (url, seconds, pid) => load({ url, bodies, seconds, pid, connections: CONNECTIONS }),
    });
    console.log(`licenses:      ${LICENSES}, ${CONNECTIONS} connections`);
    console.log(`response size: ${responseSize} bytes`);
    report('validate', runs, 'target >= 50%, p99 < 5 ms');
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
});
