/**
 * bench/checkout: POST /v1/checkout/submit throughput against a bare Fastify JSON route of the same
 * response size, same run. Run by hand:
 *
 *   npm run build && taskset -c 1 node --import tsx bench/checkout.ts [--seconds 5] [--rounds 3] [--connections 10] [--database postgres] [--no-registration]
 *
 * Every request is a guest's order of one virtual product with unlimited stock (`stock_quantity`
 * null, so no stock pool is updated), billing fields, the `test_card` gateway, a billing email and
 * a client address (X-Forwarded-For behind TRUST_PROXY=1) of its own, and `checkout_rate_limit` at
 * its maximum: no attempt counter reaches the limit. Submit takes its own `items`, so no cart is
 * prepared: without a cookie each submit opens a guest cart session and deletes it (steps 1 and
 * 11 of docs/checkout.md, 'Submit'). Each submit creates a `pending` order; no payment is taken and
 * no license issued there (that is `pay-order`, not measured here). With auto-registration on (the
 * default setting) each new email creates a customer account with a random password, hashed with
 * scrypt, and a session; `--no-registration` turns the setting off to measure the submit without it.
 *
 * With `--database postgres` a second server runs on a throw-away PostgreSQL server (pinned to the
 * server's core), seeded the same way, and each round loads SQLite's, PostgreSQL's and the bare
 * route in turn. With BENCH_PG_STATS=1 it also prints pg_stat_statements for the whole run and the
 * statements of one submit (50 submits one after another, less the background statements of an
 * idle interval as long). With BENCH_PROFILE=1 the servers write V8 CPU profiles to /tmp/tgprof and
 * their top self time is printed by module and function (bench/profile-summary.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  againstBare,
  load,
  pgQuery,
  report,
  reportOthers,
  requireValidRounds,
  SERVER_NODE,
  signIn,
  startPinned,
  startPostgres,
} from './lib.js';
import { findProfile, summariseProfile } from './profile-summary.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
    database: { type: 'string', default: 'sqlite' },
    'no-registration': { type: 'boolean', default: false },
  },
});
if (values.database !== 'sqlite' && values.database !== 'postgres') {
  throw new Error('--database is sqlite or postgres');
}
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const ADMIN = { email: 'bench@example.com', password: 'bench password 123' };
const PROFILE_DIR = '/tmp/tgprof';
const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-checkout-'));

/** The store's settings and its one product; answers the product's id. */
async function seed(base: string): Promise<number> {
  const { json } = await signIn(base, ADMIN);
  await json('PATCH', '/settings', {
    checkout_rate_limit: 1000,
    auto_registration: !values['no-registration'],
  });
  const product = await json('POST', '/products', {
    name: 'Bench',
    type: 'simple',
    price: '10.00',
    virtual: true,
    stock_quantity: null,
    licensing_enabled: 'yes',
  });
  return Number(product.id);
}

/** A serial for the whole run: every submit, on any server, with an email and address of its own. */
let serial = 0;

function submitBody(productId: number): string {
  const n = serial++;
  return JSON.stringify({
    items: [{ product_id: productId, qty: 1 }],
    billing: {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: `buyer-${process.pid}-${n}@example.com`,
      phone: '+44 20 7946 0000',
      address_1: '1 Analytical Row',
      city: 'London',
      state: '',
      postcode: 'N1 1AA',
      country: 'GB',
    },
    payment_method: 'test_card',
  });
}

const clientAddress = () => {
  const n = serial;
  return { 'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` };
};

/** One submit on `base`: it must place the order; answers the response's size in bytes. */
async function submitOnce(base: string, productId: number): Promise<number> {
  const headers = { 'content-type': 'application/json', ...clientAddress() };
  const res = await fetch(`${base}/v1/checkout/submit`, {
    method: 'POST',
    headers,
    body: submitBody(productId),
  });
  const text = await res.text();
  if (res.status !== 200 || !JSON.parse(text).ok) throw new Error(`submit: ${res.status} ${text}`);
  return Buffer.byteLength(text);
}

/**
 * The statements one submit sends to PostgreSQL (pg_stat_statements, so BENCH_PG_STATS=1): `n`
 * submits one after another, less what the servers' background polls (settings, outbox, renewals)
 * sent in an idle interval as long.
 */
async function countStatements(url: string, base: string, productId: number, n = 50): Promise<void> {
  const calls = async () =>
    (
      await pgQuery(
        url,
        `select calls::int, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) as query from pg_stat_statements
          where query not like '%pg_stat_statements%'`,
      )
    ).rows as { calls: number; query: string }[];
  const reset = () => pgQuery(url, 'select pg_stat_statements_reset()');
  await reset();
  const started = Date.now();
  for (let i = 0; i < n; i++) await submitOnce(base, productId);
  const elapsed = Date.now() - started;
  const busy = await calls();
  await reset();
  await new Promise((r) => setTimeout(r, elapsed));
  const idle = new Map((await calls()).map((r) => [r.query, r.calls]));
  const rows = busy
    .map((r) => ({ per_submit: (r.calls - (idle.get(r.query) ?? 0)) / n, query: r.query }))
    .filter((r) => r.per_submit > 0.01)
    .sort((a, b) => b.per_submit - a.per_submit);
  console.log(
    `statements of one submit on PostgreSQL (${n} submits in ${elapsed} ms, idle polls subtracted):`,
  );
  console.table(rows.map((r) => ({ ...r, per_submit: Number(r.per_submit.toFixed(2)) })));
  console.log(`total: ${rows.reduce((s, r) => s + r.per_submit, 0).toFixed(1)} statements a submit`);
}

async function main() {
  const node = [
    ...SERVER_NODE,
    ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []),
  ];
  const env = {
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '1',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
  };
  const postgres = values.database === 'postgres' ? await startPostgres(0) : null;
  const server = await startPinned(0, [...node, 'dist/main.js', 'serve'], { ...env, DATA_DIR: dataDir });
  let pgServer: Awaited<ReturnType<typeof startPinned>> | null = null;
  const profiled: [string, number][] = [['SQLite server', server.child.pid!]];
  try {
    const productId = await seed(server.url);
    const size = await submitOnce(server.url, productId);
    let pgProductId = 0;
    if (postgres) {
      pgServer = await startPinned(0, [...node, 'dist/main.js', 'serve'], {
        ...env,
        DATA_DIR: mkdtempSync(join(dataDir, 'pg-')),
        DATABASE_URL: postgres.url,
      });
      profiled.push(['PostgreSQL server', pgServer.child.pid!]);
      pgProductId = await seed(pgServer.url);
      await submitOnce(pgServer.url, pgProductId);
    }
    const pgUrl = pgServer && `${pgServer.url}/v1/checkout/submit`;
    const runs = await againstBare({
      ours: { url: `${server.url}/v1/checkout/submit`, pid: server.child.pid! },
      others: pgServer ? [{ url: pgUrl!, pid: pgServer.child.pid! }] : [],
      responseSize: size,
      rounds: ROUNDS,
      seconds: SECONDS,
      connections: CONNECTIONS,
      load: (url, seconds, pid, connections) => {
        const id = url === pgUrl ? pgProductId : productId;
        return load({
          url,
          bodies: [],
          bodyFor: () => submitBody(id),
          headersFor: clientAddress,
          seconds,
          pid,
          connections: connections ?? CONNECTIONS,
          dbPids: url === pgUrl ? postgres?.pids : undefined,
        });
      },
    });
    console.log(
      `submit: a guest's order of one virtual product, ${CONNECTIONS} connections, auto-registration ${values['no-registration'] ? 'off' : 'on (a customer account and session per order)'}`,
    );
    console.log(`response size: ${size} bytes`);
    report('submit', runs, 'no target yet');
    if (pgServer) {
      reportOthers('PostgreSQL', runs, runs.others[0]!, 'no target yet');
      await postgres!.statements();
      if (process.env.BENCH_PG_STATS) await countStatements(postgres!.url, pgServer.url, pgProductId);
    }
    requireValidRounds(runs, ROUNDS);
  } finally {
    await pgServer?.stop();
    await server.stop();
    postgres?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (process.env.BENCH_PROFILE) {
    for (const [name, pid] of profiled) {
      const file = findProfile(PROFILE_DIR, pid);
      console.log(`\n${name} (pid ${pid}), ${file ?? 'no profile written'}`);
      if (file) console.log(summariseProfile(file));
    }
  }
}

main().catch((e) => {
  console.error(e);
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
});
