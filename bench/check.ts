/**
 * bench/check: POST /v1/software/check throughput against a bare Fastify JSON route of the same
 * response size, same run. The issuance limits never fire: rate_limit at its maximum (100 a
 * minute per license), enough licenses that none is checked that often, and every request from a
 * client address of its own (X-Forwarded-For behind TRUST_PROXY=1), as on a real store where every
 * site checks a few times a day. A round with a non-2xx answer is invalid. Run by hand:
 *
 *   npm run build && taskset -c 1 node --import tsx bench/check.ts [--licenses 20000] [--seconds 10] [--rounds 3] [--eligible] [--database postgres]
 *
 * With `--database postgres` a second server runs on a throw-away PostgreSQL server (pinned to the
 * server's core), seeded the same way, and each round loads SQLite's, PostgreSQL's and the bare
 * route in turn: PostgreSQL's figures are given against both, in the same run.
 *
 * With `--processes 2` (and `--database postgres`) a second server process runs on the same
 * PostgreSQL database, and each round also loads the two together, half the connections each,
 * started at once: their sum against the one-process PostgreSQL figure of the same round is the
 * scaling factor from one process to two. Server 1 and PostgreSQL stay on core 0; server 2 goes to
 * `--second-core` (1, the load generator's, by default; 0 to share core 0), printed with the figures.
 *
 * With `--against DIR` another build of Tollgate (a checkout at DIR with its own `npm run build`,
 * e.g. the commit before a change) runs as a third server, seeded the same way through the API, and
 * each round loads ours, that build's and the bare route in turn (the two builds taking turns going
 * first): the regression check of a change as ratios of the same rounds (docs/performance.md, 'How
 * to run the benchmarks').
 *
 * Without --eligible every site is up to date (the common case: no token minted); with it every
 * check is eligible and mints a single-use token.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { makeZip } from '../test/helpers/factories.js';
import {
  againstBare,
  checkServerOptions,
  load,
  processesNote,
  report,
  reportOthers,
  reportProcesses,
  requireValidRounds,
  SERVER_NODE,
  SERVER_OPTIONS,
  signIn,
  startPinned,
  startPostgres,
} from './lib.js';

const { values } = parseArgs({
  options: {
    licenses: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '10' },
    eligible: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
    ...SERVER_OPTIONS,
  },
});
const SECOND_CORE = checkServerOptions(values);
const LICENSES = Number(values.licenses);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const ADMIN = { email: 'bench@example.com', password: 'bench password 123' };
const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-check-'));

async function seed(base: string): Promise<string[]> {
  const { auth, userId, json } = await signIn(base, ADMIN);
  await json('PATCH', '/settings', { rate_limit: 100 });
  const product = await json('POST', '/products', {
    name: 'Bench',
    type: 'simple',
    price: '10.00',
    licensing_enabled: 'yes',
  });
  await json('POST', `/software/products/${product.id}/config`, {
    slug: 'bench-plugin',
    software_enabled: 'yes',
  });
  for (const version of ['1.0.0', '1.1.0']) {
    const form = new FormData();
    form.append('version', version);
    form.append('file', new Blob([makeZip(200_000)]), 'upload.zip');
    const up = await fetch(`${base}/v1/software/products/${product.id}/versions`, {
      method: 'POST',
      headers: auth,
      body: form,
    });
    if (up.status !== 201) throw new Error(`upload: ${up.status}`);
  }
  // Eight at a time: 20,000 licenses and their sites take about a minute instead of four.
  const bodies: string[] = new Array(LICENSES);
  const one = async (i: number) => {
    const lic = await json('POST', '/licenses', { product_id: product.id, user_id: userId });
    const site = { domain: `site${i}.example.com`, installation_id: randomUUID() };
    await json('POST', '/licenses/activate', { license_key: lic.license_key, ...site }, {});
    bodies[i] = JSON.stringify({
      slug: 'bench-plugin',
      version: values.eligible ? '1.0.0' : '1.1.0',
      license_key: lic.license_key,
      site_url: `https://${site.domain}/`,
      installation_id: site.installation_id,
    });
  };
  for (let i = 0; i < LICENSES; i += 8) {
    await Promise.all(Array.from({ length: Math.min(8, LICENSES - i) }, (_, j) => one(i + j)));
  }
  return bodies;
}

/**
 * Every request of the whole run from another client address (16 million before one repeats), so
 * the per-address cap (`max(10, min(500, rate_limit×5))` a minute) never counts an address twice.
 */
let addresses = 0;
const clientAddress = () => {
  const n = addresses++;
  return { 'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` };
};

async function main() {
  const node = [
    ...SERVER_NODE,
    ...(process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=/tmp/tgprof'] : []),
  ];
  const env = {
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '1',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
  };
  const postgres = values.database === 'postgres' ? await startPostgres(0) : null;
  const server = await startPinned(0, [...node, 'dist/main.js', 'serve'], { ...env, DATA_DIR: dataDir });
  let otherServer: Awaited<ReturnType<typeof startPinned>> | null = null;
  let secondServer: Awaited<ReturnType<typeof startPinned>> | null = null;
  try {
    const started = Date.now();
    const bodies = await seed(server.url);
    console.log(`seeded ${LICENSES} licenses in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const size = await probe(server.url, bodies[0]!);
    let otherBodies: string[] = [];
    if (postgres) {
      otherServer = await startPinned(0, [...node, 'dist/main.js', 'serve'], {
        ...env,
        DATA_DIR: mkdtempSync(join(dataDir, 'pg-')),
        DATABASE_URL: postgres.url,
      });
      otherBodies = await seed(otherServer.url);
      await probe(otherServer.url, otherBodies[0]!);
      if (values.processes === '2') {
        // The same database, so the same licenses and sites: it is not seeded again.
        secondServer = await startPinned(SECOND_CORE, [...node, 'dist/main.js', 'serve'], {
          ...env,
          DATA_DIR: mkdtempSync(join(dataDir, 'pg2-')),
          DATABASE_URL: postgres.url,
        });
        await probe(secondServer.url, otherBodies[0]!);
      }
    }
    if (values.against) {
      otherServer = await startPinned(
        0,
        [...node, join(values.against, 'dist/main.js'), 'serve'],
        { ...env, DATA_DIR: mkdtempSync(join(dataDir, 'against-')) },
        values.against,
      );
      otherBodies = await seed(otherServer.url);
      await probe(otherServer.url, otherBodies[0]!);
    }
    const otherUrl = otherServer && `${otherServer.url}/v1/software/check`;
    const secondUrl = secondServer && `${secondServer.url}/v1/software/check`;
    const other = otherServer && { url: otherUrl!, pid: otherServer.child.pid! };
    // The per-license limit is the store's rate_limit at its maximum, 100 a minute: the licenses are
    // sent round-robin, so a license is checked (requests a minute) / LICENSES times a minute, and
    // 20,000 licenses stay below 100 up to 33,000 checks a second, several times what one core
    // answers. A round where a limit fired anyway has non-2xx answers and is left out (lib.ts).
    const runs = await againstBare({
      ours: { url: `${server.url}/v1/software/check`, pid: server.child.pid! },
      others: other
        ? [
            other,
            ...(secondServer
              ? [{ ...other, second: { url: secondUrl!, pid: secondServer.child.pid! } }]
              : []),
          ]
        : [],
      responseSize: size,
      alternate: Boolean(values.against),
      rounds: ROUNDS,
      seconds: SECONDS,
      load: (url, seconds, pid, connections) =>
        url === otherUrl || url === secondUrl
          ? load({
              url,
              bodies: otherBodies,
              seconds,
              pid,
              connections,
              headersFor: clientAddress,
              dbPids: postgres?.pids,
            })
          : load({ url, bodies, seconds, pid, headersFor: clientAddress }),
    });
    console.log(
      `mode:          ${values.eligible ? 'eligible (token minted per check)' : 'up to date (no token)'}`,
    );
    console.log(`response size: ${size} bytes`);
    report('check', runs, values.eligible ? 'target >= 35%' : 'target >= 60%');
    await postgres?.statements();
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

/** One check on `base`: it must answer 200; answers the response's size in bytes. */
async function probe(base: string, body: string): Promise<number> {
  const res = await fetch(`${base}/v1/software/check`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`probe: ${res.status} ${text}`);
  return Buffer.byteLength(text);
}

main().catch((e) => {
  console.error(e);
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
});
