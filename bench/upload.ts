import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { zipParts } from '../test/helpers/zip.js';
import { type Proc, SERVER_NODE, signIn, startPinned } from './lib.js';

/**
 * Release upload throughput, run by hand (`node --import tsx bench/upload.ts`), never by npm test.
 *
 * A 200 MB zip is sent with `curl -F` to our upload route (compiled, as `npm start` runs it;
 * storage_driver local and local_encrypted, one server each) and, in the same run, to
 * bench/upload-bare-server.mjs, a plain Node server that only writes the request body to disk.
 * Rounds are interleaved, RUNS of them (median kept); each server's idle and peak RSS (VmRSS,
 * VmHWM) come from /proc. Targets: local ≤ 1.5× bare, encrypted ≤ 2× bare,
 * peak RSS < 150 MB.
 */

const SIZE_MB = Number(process.env.UPLOAD_MB ?? 200);
const RUNS = Number(process.env.RUNS ?? 5);
/**
 * DURABLE=1: SQLITE_SYNCHRONOUS=FULL, so artifacts are fsynced before their release commits (as on
 * PostgreSQL), and the bare server fsyncs too. Default: SQLite's NORMAL, page-cache durability.
 */
const DURABLE = process.env.DURABLE === '1';
const run = promisify(execFile);

/** A valid zip of stored 1 MiB random entries, written without holding it in memory. */
async function writeZip(path: string, megabytes: number): Promise<void> {
  const out = createWriteStream(path);
  const write = (b: Buffer) => new Promise<void>((r) => (out.write(b) ? r() : out.once('drain', r)));
  function* entries() {
    for (let i = 0; i < megabytes; i++)
      yield { name: `plugin/blob-${i}.bin`, data: randomBytes(1024 * 1024) };
  }
  for (const part of zipParts(entries())) await write(part);
  await new Promise<void>((r) => out.end(r));
}

/** One curl upload; answers seconds. curl runs on core 0, the servers on core 1. */
async function curl(url: string, args: string[]): Promise<number> {
  const { stdout } = await run('taskset', [
    '-c',
    '0',
    'curl',
    '-sS',
    '-o',
    '/dev/null',
    '-H',
    'Expect:',
    '-w',
    '%{http_code} %{time_total}',
    ...args,
    url,
  ]);
  const [code, seconds] = stdout.trim().split(' ');
  if (code !== '201') throw new Error(`upload answered ${code}`);
  return Number(seconds);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Target {
  name: string;
  proc: Proc;
  url: string;
  args: (round: number) => string[];
  times: number[];
  baselineRss: number;
}

const rssMb = (p: Proc, field: 'VmRSS' | 'VmHWM') => {
  const status = readFileSync(`/proc/${p.child.pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) / 1024;
};

/** Our server as `npm start` runs it (compiled, no TypeScript loader), with an admin, a product and a slug. */
async function startOurs(work: string, driver: string): Promise<Target> {
  const admin = { email: 'bench@example.com', password: 'bench password 1' };
  const proc = await startPinned(1, [...SERVER_NODE, 'dist/main.js', 'serve'], {
    DATA_DIR: join(work, `data-${driver}`),
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    DATABASE_URL: '',
    SQLITE_SYNCHRONOUS: DURABLE ? 'FULL' : 'NORMAL',
  });
  const session = await signIn(proc.url, admin);
  const { password } = await session.json('POST', '/users/me/application-passwords', { name: 'bench' });
  const auth = `Basic ${Buffer.from(`${admin.email}:${password}`).toString('base64')}`;
  const product = await session.json('POST', '/products', { name: 'Bench', type: 'simple', price: '1.00' });
  await session.json('POST', `/software/products/${product.id}/config`, { slug: 'bench-plugin' });
  return {
    name: driver,
    proc,
    url: `${proc.url}/v1/software/products/${product.id}/versions`,
    args: (round) => [
      '-H',
      `authorization: ${auth}`,
      '-F',
      `version=1.0.${round}`,
      '-F',
      `storage_driver=${driver}`,
      '-F',
      `file=@${ZIP_PLACEHOLDER};type=application/zip`,
    ],
    times: [],
    baselineRss: rssMb(proc, 'VmRSS'),
  };
}

const ZIP_PLACEHOLDER = '<zip>';

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'tollgate-bench-upload-'));
  const zip = join(work, 'plugin.zip');
  const targets: Target[] = [];
  try {
    console.log('building (npm run build) and writing the test archive...');
    // tsc emits even when some other module has type errors; say so rather than stop.
    await run('npm', ['run', 'build', '--silent']).catch((e: { stdout?: string }) => {
      console.log(`build reported type errors (emitted JS is used):\n${e.stdout ?? ''}`);
    });
    await writeZip(zip, SIZE_MB);
    const bytes = SIZE_MB * 1024 * 1024;

    const bare = await startPinned(1, [process.execPath, 'bench/upload-bare-server.mjs'], {
      BARE_DIR: join(work, 'bare'),
      BARE_FSYNC: DURABLE ? '1' : '0',
    });
    targets.push({
      name: 'bare',
      proc: bare,
      url: `${bare.url}/upload`,
      args: () => ['--data-binary', `@${zip}`],
      times: [],
      baselineRss: rssMb(bare, 'VmRSS'),
    });
    targets.push(await startOurs(work, 'local'));
    targets.push(await startOurs(work, 'local_encrypted'));

    // From here the peak (VmHWM) measures the uploads only: startup and the admin's password
    // hashing (scrypt, tens of MB) are behind us. Linux resets it on writing 5 to clear_refs.
    for (const t of targets) {
      writeFileSync(`/proc/${t.proc.child.pid}/clear_refs`, '5');
      t.baselineRss = rssMb(t.proc, 'VmRSS');
    }
    // Interleaved rounds, so drift in disk or CPU speed hits every target alike.
    for (let round = 0; round < RUNS; round++) {
      for (const t of targets) {
        // Each upload starts with no dirty pages of the previous one still being written back.
        await run('sync');
        t.times.push(
          await curl(
            t.url,
            t.args(round).map((a) => a.replace(ZIP_PLACEHOLDER, zip)),
          ),
        );
      }
    }

    const [b, ...ours] = targets as [Target, ...Target[]];
    const bareS = median(b.times);
    const mbps = (s: number) => (bytes / 1024 / 1024 / s).toFixed(0);
    const rss = (t: Target) => {
      const peak = rssMb(t.proc, 'VmHWM');
      return `RSS idle ${t.baselineRss.toFixed(0)} MB, peak during uploads ${peak.toFixed(0)} MB (+${(peak - t.baselineRss).toFixed(0)})`;
    };
    console.log(
      `upload of ${SIZE_MB} MiB with curl -F, median of ${RUNS} interleaved runs (curl core 0, servers core 1), ` +
        (DURABLE
          ? 'durable: fsync before answering (SQLITE_SYNCHRONOUS=FULL)'
          : 'page-cache durability (SQLite NORMAL)'),
    );
    console.log(`bare node server     ${bareS.toFixed(2)} s, ${mbps(bareS)} MiB/s; ${rss(b)}`);
    const limits: Record<string, number> = { local: 1.5, local_encrypted: 2 };
    let ok = true;
    for (const t of ours) {
      const s = median(t.times);
      const ratio = s / bareS;
      const peak = rssMb(t.proc, 'VmHWM');
      const pass = ratio <= limits[t.name]! && peak < 150;
      ok &&= pass;
      console.log(
        `${t.name.padEnd(20)} ${s.toFixed(2)} s, ${mbps(s)} MiB/s, ${ratio.toFixed(2)}x bare (target <= ${limits[t.name]}x); ` +
          `${rss(t)} (target < 150) ${pass ? 'ok' : 'MISSED'}`,
      );
    }
    console.log(
      `all runs (s): ${targets.map((t) => `${t.name} ${t.times.map((x) => x.toFixed(2)).join(' ')}`).join('; ')}`,
    );
    process.exitCode = ok ? 0 : 1;
  } finally {
    for (const t of targets) await t.proc.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
