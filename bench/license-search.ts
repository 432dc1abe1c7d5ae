/**
 * bench/license-search: the administrator's license list and search (`GET /v1/licenses`) at a
 * million licenses, server time per request, against a bare Fastify route measured in the same
 * run (the ratio is what counts on a shared, noisy machine). Run by hand:
 *
 *   npm run build && taskset -c 1 node --import tsx bench/license-search.ts [--licenses 1000000] [--requests 200] [--database postgres]
 *
 * The store has `--licenses` licenses of one product, one customer for every five licenses and one
 * site (activation) on every license. Each kind of request is sent `--requests` times, one at a
 * time, each with another term (a key's last six characters, a customer's whole email, the start
 * of an email, a site's domain, an installation id; the first page sorted by expiry, the first page
 * of one customer's licenses), and the bare route as many times in between: a request's time is
 * the time to its last byte on a keep-alive connection, so it is the server's time plus a loopback
 * round trip that the bare route pays as well. With `--database postgres` the same rows are copied
 * into a throw-away PostgreSQL server and the same requests go to a second server on it.
 *
 * Servers are pinned to core 0; this process should run on core 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { openSqlite } from '../src/db/sqlite.js';
import { generateLicenseKey } from '../src/modules/licensing/license-key.js';
import { uuid } from '../src/random.js';
import { copyToPostgres, median, SERVER_NODE, signIn, startPinned, startPostgres } from './lib.js';

const { values } = parseArgs({
  options: {
    licenses: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '200' },
    database: { type: 'string', default: 'sqlite' },
  },
});
if (values.database !== 'sqlite' && values.database !== 'postgres') {
  throw new Error('--database is sqlite or postgres');
}
const LICENSES = Number(values.licenses);
const REQUESTS = Number(values.requests);
const LICENSES_PER_CUSTOMER = 5;
const ADMIN = { email: 'owner@example.com', password: 'owner-password-1' };

const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-search-'));
const file = join(dataDir, 'tollgate.sqlite');

interface Sample {
  keys: string[];
  emails: string[];
  domains: string[];
  installations: string[];
  customers: number[];
}

async function seed(): Promise<Sample> {
  const database = openDatabase({ kind: 'sqlite', file, synchronous: 'NORMAL' });
  await migrateToLatest(database.db, database.dialect);
  await database.close();
  const db = openSqlite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const now = new Date().toISOString();
  db.prepare(
    `insert into products (name, status, type, price_minor, virtual, activation_limit, created_at, updated_at)
     values ('Bench Plugin', 'publish', 'simple', 4900, 1, 3, ?, ?)`,
  ).run(now, now);
  const insUser = db.prepare(
    `insert into users (email, password_hash, role, first_name, last_name, created_at, updated_at)
     values (?, 'x', 'customer', 'Bench', ?, ?, ?)`,
  );
  const insLicense = db.prepare(
    `insert into licenses (license_key, product_id, variation_id, user_id, status, activation_limit,
       usage_expires_at, created_at, updated_at)
     values (?, 1, 0, ?, 'active', 3, ?, ?, ?)`,
  );
  const insActivation = db.prepare(
    `insert into activations (license_id, identity_key, domain, domain_normalized, installation_id, ip_address,
       user_agent, status, activated_at, activation_revision, updated_at)
     values (?, ?, ?, ?, ?, '127.0.0.1', 'bench', 'active', ?, 1, ?)`,
  );
  const sample: Sample = { keys: [], emails: [], domains: [], installations: [], customers: [] };
  const every = Math.max(1, Math.floor(LICENSES / REQUESTS));
  const started = Date.now();
  let userId = 0;
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      if (i % LICENSES_PER_CUSTOMER === 0) {
        userId = Number(
          insUser.run(`customer${i}@mail${i % 97}.example.com`, `N${i}`, now, now).lastInsertRowid,
        );
      }
      const key = generateLicenseKey();
      // Expiry spread over ten years, so the sort by expiry has a real order to walk.
      const expires = new Date(Date.UTC(2027, 0, 1) + (i % 3650) * 86_400_000).toISOString();
      const licenseId = Number(insLicense.run(key, userId, expires, now, now).lastInsertRowid);
      const domain = `site${i}.example.org`;
      const installationId = uuid();
      insActivation.run(licenseId, 'x'.repeat(64), domain, domain, installationId, now, now);
      if (i % every === Math.floor(every / 2)) {
        sample.keys.push(key);
        sample.emails.push(
          `customer${i - (i % LICENSES_PER_CUSTOMER)}@mail${(i - (i % LICENSES_PER_CUSTOMER)) % 97}.example.com`,
        );
        sample.domains.push(domain);
        sample.installations.push(installationId);
        sample.customers.push(userId);
      }
    }
  });
  for (let i = 0; i < LICENSES; i += 10_000) batch(i, Math.min(LICENSES, i + 10_000));
  db.close();
  console.log(
    `seeded ${LICENSES} licenses and activations, ${userId} customers in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return sample;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** Milliseconds to the last byte of one GET (or the bare route's POST); fails on anything but 200. */
function timed(url: string, headers: Record<string, string>, method: 'GET' | 'POST' = 'GET') {
  return new Promise<{ ms: number; total: number }>((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode !== 200)
          return reject(new Error(`${url}: ${res.statusCode} ${text.slice(0, 200)}`));
        resolve({ ms, total: Number(res.headers['x-wp-total'] ?? JSON.parse(text).total ?? 0) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(method === 'POST' ? '{}' : undefined);
  });
}

interface Kind {
  name: string;
  path: (i: number) => string;
  /** How many licenses each request must find at least (1 for a key). */
  expect: number;
}

async function measure(base: string, bareUrl: string, auth: Record<string, string>, sample: Sample) {
  const q = encodeURIComponent;
  const kinds: Kind[] = [
    { name: 'first page, newest first', path: () => '/v1/licenses', expect: LICENSES },
    {
      name: 'first page by expiry',
      path: () => '/v1/licenses?sort=usage_expires_at&order=asc',
      expect: LICENSES,
    },
    { name: "a customer's licenses", path: (i) => `/v1/licenses?user_id=${sample.customers[i]}`, expect: 1 },
    {
      name: 'key, last 6 characters',
      path: (i) => `/v1/licenses?search=${q(sample.keys[i]!.slice(-6))}`,
      expect: 1,
    },
    { name: 'key, whole', path: (i) => `/v1/licenses?search=${q(sample.keys[i]!)}`, expect: 1 },
    { name: 'email, whole', path: (i) => `/v1/licenses?search=${q(sample.emails[i]!)}`, expect: 1 },
    {
      name: 'email, its start',
      path: (i) => `/v1/licenses?search=${q(sample.emails[i]!.split('@')[0]!)}`,
      expect: 1,
    },
    { name: 'domain', path: (i) => `/v1/licenses?search=${q(sample.domains[i]!)}`, expect: 1 },
    { name: 'installation id', path: (i) => `/v1/licenses?search=${q(sample.installations[i]!)}`, expect: 1 },
  ];
  const n = sample.keys.length;
  const results: { name: string; ours: number[]; bare: number[] }[] = [];
  for (const kind of kinds) {
    // Warm-up: the first few requests of a kind compile its statements.
    for (let i = 0; i < Math.min(10, n); i++) await timed(base + kind.path(i), auth);
    const ours: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < n; i++) {
      const r = await timed(base + kind.path(i), auth);
      if (r.total < kind.expect) throw new Error(`${kind.name}: ${kind.path(i)} found ${r.total}`);
      ours.push(r.ms);
      bare.push((await timed(bareUrl, { 'content-type': 'application/json' }, 'POST')).ms);
    }
    results.push({ name: kind.name, ours, bare });
  }
  return results;
}

function print(label: string, results: Awaited<ReturnType<typeof measure>>) {
  console.log(`\n${label}: ${REQUESTS} requests of each kind, one at a time (median, p95 and max, ms)`);
  const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!;
  for (const r of results) {
    const m = median(r.ours);
    const b = median(r.bare);
    console.log(
      `  ${r.name.padEnd(26)} ${m.toFixed(2).padStart(7)} ${p95(r.ours).toFixed(2).padStart(7)} ${Math.max(
        ...r.ours,
      )
        .toFixed(2)
        .padStart(7)}   bare ${b.toFixed(2)} ms, ${(m / b).toFixed(1)}x bare`,
    );
  }
}

async function main() {
  const sample = await seed();
  const postgres = values.database === 'postgres' ? await startPostgres(0) : null;
  const env = { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, LOG_LEVEL: 'warn' };
  const server = await startPinned(0, [...SERVER_NODE, 'dist/main.js', 'serve'], {
    DATA_DIR: dataDir,
    ...env,
  });
  const bareServer = await startPinned(0, [process.execPath, '--import', 'tsx', 'bench/bare-server.ts'], {
    BODY_SIZE: '2000',
  });
  let pgServer: Awaited<ReturnType<typeof startPinned>> | null = null;
  try {
    const bareUrl = `${bareServer.url}/bare`;
    const admin = await signIn(server.url, ADMIN);
    print('SQLite', await measure(server.url, bareUrl, admin.auth, sample));
    if (postgres) {
      const database = openDatabase({ kind: 'postgres', url: postgres.url });
      await migrateToLatest(database.db, database.dialect);
      await database.close();
      const started = Date.now();
      await copyToPostgres(file, postgres.url, ['users', 'products', 'licenses', 'activations']);
      console.log(`\ncopied to PostgreSQL in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      pgServer = await startPinned(0, [...SERVER_NODE, 'dist/main.js', 'serve'], {
        DATA_DIR: mkdtempSync(join(dataDir, 'pg-')),
        DATABASE_URL: postgres.url,
        ...env,
      });
      const pgAdmin = await signIn(pgServer.url, ADMIN);
      print('PostgreSQL', await measure(pgServer.url, bareUrl, pgAdmin.auth, sample));
    }
  } finally {
    agent.destroy();
    await pgServer?.stop();
    await bareServer.stop();
    await server.stop();
    postgres?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
});
