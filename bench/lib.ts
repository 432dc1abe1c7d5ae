import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { openSqlite } from '../src/db/sqlite.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * How `npm start` runs the server (package.json): a 4 MB young generation keeps about 25 MB of
 * RSS that V8's default would reserve, at no measurable cost in throughput; `--expose-gc` lets
 * src/memory.ts ask for young-generation collections while packages move; a fixed glibc mmap
 * threshold makes freed large buffers go back to the system, and a 512 KiB trim threshold stops
 * the heap top from being returned and re-faulted on every request (docs/performance.md, 'Memory').
 * Servers run on the benchmark's own Node.js, so a benchmark started with another one measures it.
 */
export const SERVER_NODE = [
  'env',
  'GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=524288',
  process.execPath,
  '--max-semi-space-size=4',
  '--expose-gc',
];

/** taskset pins a process to one core so the load generator and the server do not share one. */
function pinned(core: number, argv: string[]): string[] {
  return cpus().length > 1 ? ['taskset', '-c', String(core), ...argv] : argv;
}

export interface Proc {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a server command pinned to `core` and waits for its `listening on <url>` line. */
export async function startPinned(
  core: number,
  argv: string[],
  env: Record<string, string>,
  cwd: string = ROOT,
): Promise<Proc> {
  const [cmd, ...args] = pinned(core, argv);
  const child = spawn(cmd!, args, {
    cwd,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line:\n${out}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (c) => reject(new Error(`exited ${c}:\n${out}`)));
  });
  return {
    url,
    child,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

/** CPU seconds (user + system) a process has used: robust against other load on a shared machine. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A process's CPU seconds, or 0 once it is gone (a database backend that exited mid-round). */
function cpuSecondsOrZero(pid: number): number {
  try {
    return cpuSeconds(pid);
  } catch {
    return 0;
  }
}

/** A process and its children (PostgreSQL's postmaster and its backends), from /proc. */
export function processTree(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      parentOf.set(Number(entry), ppid);
    } catch {
      // the process has exited
    }
  }
  return [root, ...[...parentOf].filter(([, ppid]) => ppid === root).map(([pid]) => pid)];
}

/** Resident set size of a process, in MB. */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** Samples a process's RSS every 20 ms until stopped; answers the peak in MB. */
export function watchRss(pid: number): { stop(): number } {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMb(pid));
    } catch {
      // the process has exited
    }
  }, 20);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

export interface LoadResult {
  rps: number;
  /** Server CPU time per request, in microseconds (when a pid was given). */
  cpuUs?: number;
  /** The database server's CPU time per request (PostgreSQL: all its processes), in microseconds. */
  dbCpuUs?: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Requests answered in the timed part: what two loads run together are weighed by. */
  requests: number;
}

/**
 * Every 2xx answer's latency in milliseconds, as the load generator timed it. autocannon's own
 * histogram keeps whole milliseconds, so a p99 of 2.9 ms read as 2 and a ratio of two such p99s
 * could be off by half; these are kept to the microsecond.
 */
class Latencies {
  private values = new Float64Array(1 << 20);
  private n = 0;

  add(ms: number): void {
    if (this.n === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.n++] = ms;
  }

  /** The nearest-rank percentile, to the microsecond. */
  percentile(p: number): number {
    if (this.n === 0) return 0;
    const sorted = this.values.subarray(0, this.n).sort();
    const rank = Math.min(this.n - 1, Math.max(0, Math.ceil((p / 100) * this.n) - 1));
    return Math.round(sorted[rank]! * 1000) / 1000;
  }
}

/** Runs autocannon against one URL; `bodies` are sent round-robin. */
export async function load(opts: {
  url: string;
  bodies: string[];
  connections?: number;
  seconds?: number;
  expectStatus?: number;
  /** The server's pid: its CPU time per request is reported too. */
  pid?: number;
  /** Extra headers for the n-th request. */
  headersFor?: (n: number) => Record<string, string>;
  /** The database server's processes (PostgreSQL), for its CPU time per request. */
  dbPids?: () => number[];
  /** The n-th request's body, where every request needs its own (one order per billing email). */
  bodyFor?: (n: number) => string;
}): Promise<LoadResult> {
  let i = 0;
  const cpuBefore = opts.pid ? cpuSeconds(opts.pid) : 0;
  const dbCpu = () => (opts.dbPids?.() ?? []).reduce((sum, p) => sum + cpuSecondsOrZero(p), 0);
  const dbBefore = dbCpu();
  const times = new Latencies();
  const instance = autocannon({
    url: opts.url,
    method: 'POST',
    connections: opts.connections ?? 50,
    duration: opts.seconds ?? 10,
    headers: { 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => {
          const n = i++;
          const body = opts.bodyFor ? opts.bodyFor(n) : opts.bodies[n % opts.bodies.length]!;
          if (!opts.headersFor) return { ...req, body };
          return { ...req, body, headers: { ...req.headers, ...opts.headersFor(n) } };
        },
      },
    ],
    // Without a callback autocannon answers its tracker: an emitter that is also the result's promise.
  }) as unknown as Promise<autocannon.Result> & EventEmitter;
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) times.add(ms);
  });
  const result = await instance;
  const cpuUs = opts.pid
    ? ((cpuSeconds(opts.pid) - cpuBefore) * 1e6) / Math.max(1, result.requests.total)
    : undefined;
  const dbCpuUs = opts.dbPids ? ((dbCpu() - dbBefore) * 1e6) / Math.max(1, result.requests.total) : undefined;
  return {
    rps: result.requests.average,
    cpuUs,
    dbCpuUs,
    p50: times.percentile(50),
    p99: times.percentile(99),
    non2xx: result.non2xx,
    errors: result.errors,
    requests: result.requests.total,
  };
}

/**
 * Two loads run together against two server processes on one database, as one result: requests a
 * second added, the worse p50 and p99, server CPU per request from both servers' CPU over both
 * loads' requests. Both loads watched the same database processes over the same seconds, so the
 * database's CPU is the mean of their two totals (adding them would count it twice).
 */
export function combine(a: LoadResult, b: LoadResult): LoadResult {
  const requests = a.requests + b.requests;
  const per = (x?: number, y?: number) =>
    x === undefined || y === undefined
      ? undefined
      : (x * a.requests + y * b.requests) / Math.max(1, requests);
  return {
    rps: a.rps + b.rps,
    cpuUs: per(a.cpuUs, b.cpuUs),
    dbCpuUs:
      a.dbCpuUs === undefined || b.dbCpuUs === undefined
        ? undefined
        : (a.dbCpuUs * a.requests + b.dbCpuUs * b.requests) / 2 / Math.max(1, requests),
    p50: Math.max(a.p50, b.p50),
    p99: Math.max(a.p99, b.p99),
    non2xx: a.non2xx + b.non2xx,
    errors: a.errors + b.errors,
    requests,
  };
}

/** The middle value; of an even count (`--against` wants one), the mean of the two middle ones. */
export const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** A server under load: where to send requests, and its pid for the CPU figure. */
export interface Target {
  url: string;
  pid: number;
  /**
   * A second server process on the same database (`--processes 2`): the load is split between the
   * two, half the connections each, started together, and the results combined (`combine`).
   */
  second?: Target;
}

/**
 * Starts the baseline (a bare Fastify route answering `responseSize` bytes, pinned to the same core
 * as ours) and loads our route and it in turn, `rounds` times, each after a warm-up (3 s before the
 * first round, 1 s before the others). Both servers run the whole time; the idle one costs
 * nothing. On a shared machine the neighbours' load changes from minute to minute: a ratio taken
 * round by round, its two halves seconds apart, moves far less than one taken from runs minutes
 * apart, and the median of the rounds is the figure to quote.
 */
export async function againstBare(opts: {
  ours: Target;
  /** More servers loaded in turn in each round, after ours (e.g. the same route on PostgreSQL). */
  others?: Target[];
  responseSize: number;
  rounds: number;
  seconds: number;
  /** The connections of one load; a target with a second process gets half of them on each. */
  connections?: number;
  /**
   * Loads the others before ours in every second round. The server loaded second in a round comes
   * out a few percent ahead whichever it is (docs/performance.md, 'Regression check of channels,
   * rollouts, the installed-base report and last seen'), so comparing two builds (`--against`) alternates
   * and the medians carry both orders alike.
   */
  alternate?: boolean;
  load: (url: string, seconds: number, pid?: number, connections?: number) => Promise<LoadResult>;
}): Promise<{ ours: LoadResult[]; bare: LoadResult[]; others: LoadResult[][] }> {
  const server = await startPinned(0, [process.execPath, '--import', 'tsx', 'bench/bare-server.ts'], {
    BODY_SIZE: String(opts.responseSize),
  });
  const baseline: Target = { url: `${server.url}/bare`, pid: server.child.pid! };
  const ours: LoadResult[] = [];
  const bare: LoadResult[] = [];
  const others = (opts.others ?? []).map(() => [] as LoadResult[]);
  try {
    for (let round = 0; round < opts.rounds; round++) {
      const warmup = round === 0 ? 3 : 1;
      const first = [opts.ours, ours] as const;
      const rest = (opts.others ?? []).map((t, i) => [t, others[i]!] as const);
      const order = opts.alternate && round % 2 === 1 ? [...rest, first] : [first, ...rest];
      for (const [target, results] of [...order, [baseline, bare] as const]) {
        await loadTarget(opts.load, target, warmup, false, opts.connections ?? 50);
        results.push(await loadTarget(opts.load, target, opts.seconds, true, opts.connections ?? 50));
      }
    }
  } finally {
    await server.stop();
  }
  return { ours, bare, others };
}

/** Loads a target: one server, or a server and its second process with half the connections each. */
async function loadTarget(
  load: (url: string, seconds: number, pid?: number, connections?: number) => Promise<LoadResult>,
  target: Target,
  seconds: number,
  timed: boolean,
  connections: number,
): Promise<LoadResult> {
  if (!target.second) return load(target.url, seconds, timed ? target.pid : undefined);
  const half = Math.ceil(connections / 2);
  const [a, b] = await Promise.all([
    load(target.url, seconds, timed ? target.pid : undefined, half),
    load(target.second.url, seconds, timed ? target.second.pid : undefined, connections - half),
  ]);
  return combine(a, b);
}

/** The rounds of a run: each target's result, index by index (`againstBare`). */
export interface Runs {
  ours: LoadResult[];
  bare: LoadResult[];
  others?: LoadResult[][];
}

/** A load is valid when every request was answered 2xx and none failed. */
export const validLoad = (r: LoadResult) => r.non2xx === 0 && r.errors === 0;

/**
 * The rounds that count: every load of the round (ours, the bare route and each other server) had
 * only 2xx answers and no error. A round with one refused request measured something else (a
 * refusal costs a fraction of an answer), so it is printed with its counts and left out of every
 * median.
 */
export function validRounds(runs: Runs): number[] {
  return runs.ours
    .map((_, i) => i)
    .filter((i) => [runs.ours, runs.bare, ...(runs.others ?? [])].every((rs) => validLoad(rs[i]!)));
}

const pick = <T>(xs: T[], rounds: number[]) => rounds.map((i) => xs[i]!);

/**
 * Prints every round (invalid ones marked, with their non-2xx and error counts) and the medians of
 * the valid rounds: throughput ratio, server CPU per request, p99 and p99 against the bare route's
 * of the same round.
 */
export function report(name: string, runs: Runs, target: string): void {
  const valid = validRounds(runs);
  const ratios = runs.ours.map((r, i) => (r.rps / runs.bare[i]!.rps) * 100);
  const p99s = runs.ours.map((r, i) => r.p99 / Math.max(0.001, runs.bare[i]!.p99));
  runs.ours.forEach((r, i) => {
    const invalid = [runs.ours, runs.bare, ...(runs.others ?? [])]
      .map((rs) => rs[i]!)
      .filter((x) => !validLoad(x));
    console.log(
      `round ${i + 1}:${invalid.length ? ` INVALID (non-2xx ${invalid.reduce((s, x) => s + x.non2xx, 0)}, errors ${invalid.reduce((s, x) => s + x.errors, 0)}; left out)` : ''}`,
    );
    console.log(`  bare Fastify:  ${fmt(runs.bare[i]!)}`);
    console.log(`  ${`${name}:`.padEnd(14)} ${fmt(r)}`);
    console.log(`  ratio:         ${ratios[i]!.toFixed(1)}% of bare, p99 ${p99s[i]!.toFixed(1)}x bare's`);
  });
  if (valid.length === 0) {
    console.log(`no valid round of ${runs.ours.length}: no median`);
    return;
  }
  const cpu = (rs: LoadResult[]) => median(pick(rs, valid).map((r) => r.cpuUs ?? 0)).toFixed(0);
  console.log(
    `median of ${valid.length} valid rounds (of ${runs.ours.length}): ${median(pick(ratios, valid)).toFixed(1)}% of bare (${target}); server CPU ${cpu(runs.ours)} µs vs ${cpu(runs.bare)} µs a request; ${name} p99 ${median(pick(runs.ours, valid).map((r) => r.p99)).toFixed(2)} ms, ${median(pick(p99s, valid)).toFixed(1)}x bare's (target <= 2x)`,
  );
}

/**
 * Ends a run that asked for `asked` rounds: fewer valid ones than that make the benchmark exit
 * non-zero (after everything was printed and stopped), so a script or a reader cannot take a
 * median of too few rounds, or of refusals, for the figure.
 */
export function requireValidRounds(runs: Runs, asked: number): void {
  const valid = validRounds(runs).length;
  if (valid < asked) {
    console.log(
      `FAILED: ${valid} valid rounds of ${asked} asked (a round with a non-2xx answer or an error is invalid)`,
    );
    process.exitCode = 1;
  }
}

/**
 * Prints another server's rounds (the same route on PostgreSQL, or another build) against the bare
 * route and against ours of the same rounds: throughput ratios, p99 ratio, CPU of the server and
 * database. Medians of the valid rounds only (`validRounds`).
 */
export function reportOthers(
  name: string,
  runs: Runs,
  other: LoadResult[],
  target: string,
  oursName = 'SQLite',
): void {
  const valid = validRounds(runs);
  const toBare = other.map((r, i) => (r.rps / runs.bare[i]!.rps) * 100);
  const toOurs = other.map((r, i) => (r.rps / runs.ours[i]!.rps) * 100);
  const p99 = other.map((r, i) => r.p99 / Math.max(0.001, runs.ours[i]!.p99));
  const p99Bare = other.map((r, i) => r.p99 / Math.max(0.001, runs.bare[i]!.p99));
  other.forEach((r, i) => {
    console.log(`${name} round ${i + 1}${valid.includes(i) ? '' : ' (INVALID, left out)'}: ${fmt(r)}`);
    console.log(
      `  ${toBare[i]!.toFixed(1)}% of bare, ${toOurs[i]!.toFixed(1)}% of ${oursName}, p99 ${p99[i]!.toFixed(1)}x ${oursName}'s, ${p99Bare[i]!.toFixed(1)}x bare's`,
    );
  });
  if (valid.length === 0) return;
  const cpu = median(pick(other, valid).map((r) => r.cpuUs ?? 0)).toFixed(0);
  const db = median(pick(other, valid).map((r) => r.dbCpuUs ?? 0)).toFixed(0);
  console.log(
    `${name} median of ${valid.length} valid rounds: ${median(pick(toBare, valid)).toFixed(1)}% of bare, ${median(pick(toOurs, valid)).toFixed(1)}% of ${oursName} (${target}); p99 ${median(pick(p99, valid)).toFixed(1)}x ${oursName}'s, ${median(pick(p99Bare, valid)).toFixed(1)}x bare's; server CPU ${cpu} µs + database CPU ${db} µs a request`,
  );
  if (oursName === 'ours') {
    // The regression check's own figure, the other way round: ours as a share of the other build.
    const oursOf = pick(
      other.map((r, i) => (runs.ours[i]!.rps / r.rps) * 100),
      valid,
    );
    const ourCpu = median(pick(runs.ours, valid).map((r) => r.cpuUs ?? 0)).toFixed(0);
    console.log(
      `ours, of the other build: median ${median(oursOf).toFixed(1)}% (rounds ${Math.min(...oursOf).toFixed(1)}–${Math.max(...oursOf).toFixed(1)}%); server CPU ${ourCpu} vs ${cpu} µs a request`,
    );
  }
}

/**
 * The cores of `--processes 2` on this 2-core machine. The first server and PostgreSQL stay on core
 * 0 as in the one-process figure; the second server goes to `secondCore`: core 1 (the default) is
 * the load generator's, so the two servers get more CPU than one only as far as the load generator
 * leaves core 1 idle; core 0 gives both servers and PostgreSQL the one core, so the factor then shows
 * only what a second process costs or saves on the same CPU (batching, event-loop waits), not scaling.
 */
export function processesNote(secondCore: number): string {
  return secondCore === 0
    ? 'two processes: server 1, server 2 and PostgreSQL share core 0, the load generator core 1 (no more CPU than one process: the factor is the cost or gain of splitting, not scaling)'
    : 'two processes: server 1 and PostgreSQL on core 0, server 2 on core 1 with the load generator (the second server gets only what the load generator leaves of core 1: the factor is bounded by that, not by the server)';
}

/**
 * Prints the two-process rounds (`--processes 2`) against the one-process PostgreSQL figure of the
 * same round and against the bare route: the scaling factor from one process to two, p99 against
 * one process's, and the CPU per request of both servers and of PostgreSQL. Valid rounds only.
 */
export function reportProcesses(runs: Runs, one: LoadResult[], two: LoadResult[], note: string): void {
  const valid = validRounds(runs);
  const factor = two.map((r, i) => r.rps / one[i]!.rps);
  const toBare = two.map((r, i) => (r.rps / runs.bare[i]!.rps) * 100);
  const p99 = two.map((r, i) => r.p99 / Math.max(0.001, one[i]!.p99));
  console.log(note);
  two.forEach((r, i) => {
    console.log(
      `PostgreSQL, 2 processes round ${i + 1}${valid.includes(i) ? '' : ' (INVALID, left out)'}: ${fmt(r)}`,
    );
    console.log(
      `  ${toBare[i]!.toFixed(1)}% of bare, ${factor[i]!.toFixed(2)}x one process, p99 ${p99[i]!.toFixed(1)}x one process's`,
    );
  });
  if (valid.length === 0) return;
  const cpu = median(pick(two, valid).map((r) => r.cpuUs ?? 0)).toFixed(0);
  const db = median(pick(two, valid).map((r) => r.dbCpuUs ?? 0)).toFixed(0);
  console.log(
    `PostgreSQL, 2 processes median of ${valid.length} valid rounds: ${median(pick(toBare, valid)).toFixed(1)}% of bare, scaling factor ${median(pick(factor, valid)).toFixed(2)}x one process; p99 ${median(pick(p99, valid)).toFixed(1)}x one process's; server CPU ${cpu} µs (both servers) + database CPU ${db} µs a request`,
  );
}

export const fmt = (r: LoadResult) =>
  `${Math.round(r.rps)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, non-2xx ${r.non2xx}, errors ${r.errors}` +
  (r.cpuUs === undefined ? '' : `, server CPU ${r.cpuUs.toFixed(0)} µs/request`) +
  (r.dbCpuUs === undefined ? '' : `, database CPU ${r.dbCpuUs.toFixed(0)} µs/request`);

export interface Admin {
  /** Session cookie and nonce, for requests made by hand (multipart uploads). */
  auth: Record<string, string>;
  userId: number;
  /** A JSON request as the administrator (or with `headers`); throws on any status >= 300. */
  json(
    method: string,
    path: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<Record<string, string & number>>;
}

/** Signs in to a bench server as its administrator. */
export async function signIn(base: string, admin: { email: string; password: string }): Promise<Admin> {
  const login = await fetch(`${base}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(admin),
  });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const { nonce, user } = (await login.json()) as { nonce: string; user: { id: number } };
  const auth = { cookie, 'x-rest-nonce': nonce };
  return {
    auth,
    userId: user.id,
    async json(method, path, body, headers = auth) {
      const res = await fetch(`${base}/v1${path}`, {
        method,
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, string & number>;
    },
  };
}

/**
 * A throw-away PostgreSQL server for a benchmark (scripts/pg-server.sh, as the tests use), pinned
 * to `core`: the server under test shares that core with it, as it shares it with SQLite's work on
 * the embedded database, so both modes get the same CPU.
 */
export async function startPostgres(core: number): Promise<{
  url: string;
  pids(): number[];
  stop(): void;
  statements(): Promise<void>;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-pg-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const script = join(ROOT, 'scripts/pg-server.sh');
  const stats = Boolean(process.env.BENCH_PG_STATS);
  const url = execFileSync(...pinnedCommand(core, [script, 'start', join(dir, 'pg'), String(port)]), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      ...(stats
        ? {
            PG_OPTIONS:
              '-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on',
          }
        : {}),
    },
  }).trim();
  const postmaster = Number(readFileSync(join(dir, 'pg/data/postmaster.pid'), 'utf8').split('\n')[0]);
  if (stats) await pgQuery(url, 'create extension pg_stat_statements');
  return {
    url,
    pids: () => processTree(postmaster),
    // With BENCH_PG_STATS=1: what each statement cost PostgreSQL over the whole run (pg_stat_statements).
    statements: async () => {
      if (!stats) return;
      const { rows } = await pgQuery(
        url,
        `select calls, round(total_exec_time::numeric, 1) as exec_ms, round(total_plan_time::numeric, 1) as plan_ms,
                plans, rows, shared_blks_hit as hit, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) as query
           from pg_stat_statements order by total_exec_time + total_plan_time desc limit 15`,
      );
      console.table(rows);
    },
    stop: () => {
      execFileSync(script, ['stop', join(dir, 'pg')], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function pgQuery(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

function pinnedCommand(core: number, argv: string[]): [string, string[]] {
  const [cmd, ...args] = pinned(core, argv);
  return [cmd!, args];
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Copies the rows of `tables` from a seeded SQLite file into a migrated PostgreSQL database, so that
 * both modes serve the same licenses. Each statement carries 10,000 rows as one array per column
 * (`insert … select * from unnest(…)`): a million rows take seconds, where rows of placeholders
 * took minutes.
 */
export async function copyToPostgres(sqliteFile: string, url: string, tables: string[]): Promise<void> {
  const source = openSqlite(sqliteFile);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const table of tables) {
      const types = new Map(
        (
          await client.query<{ column_name: string; udt_name: string }>(
            'select column_name, udt_name from information_schema.columns where table_name = $1',
            [table],
          )
        ).rows.map((r) => [r.column_name, r.udt_name]),
      );
      const statement = source.prepare(`select * from ${table}`);
      const columns = statement.columns().map((c) => c.name);
      const arrays = columns.map((c, i) => `$${i + 1}::${types.get(c)}[]`);
      const insert = `insert into ${table} (${columns.join(', ')}) select * from unnest(${arrays.join(', ')})`;
      let batch: unknown[][] = columns.map(() => []);
      let rows = 0;
      const flush = async () => {
        if (rows === 0) return;
        await client.query(insert, batch);
        batch = columns.map(() => []);
        rows = 0;
      };
      for (const row of statement.raw().iterate() as Iterable<unknown[]>) {
        for (let i = 0; i < row.length; i++) batch[i]!.push(row[i]);
        if (++rows === 10_000) await flush();
      }
      await flush();
      // Rows came with their ids: the sequence goes past them, as it would have counted them.
      await client.query(
        `select setval(pg_get_serial_sequence('${table}', 'id'), (select max(id) from ${table}))`,
      );
    }
    // As autovacuum would have by then: statistics, and the visibility map that lets a count read
    // an index alone.
    await client.query('vacuum analyze');
  } finally {
    await client.end();
    source.close();
  }
}

/**
 * The options bench/check and bench/validate share: which database, how many server processes
 * (and the second one's core), and another build to compare in the same rounds.
 */
export const SERVER_OPTIONS = {
  database: { type: 'string', default: 'sqlite' },
  processes: { type: 'string', default: '1' },
  'second-core': { type: 'string', default: '1' },
  against: { type: 'string' },
} as const;

/** Refuses a combination of SERVER_OPTIONS the benchmarks cannot run; answers the second core. */
export function checkServerOptions(values: {
  database: string;
  processes: string;
  'second-core': string;
  against?: string;
}): number {
  if (values.database !== 'sqlite' && values.database !== 'postgres') {
    throw new Error('--database is sqlite or postgres');
  }
  if (values.processes !== '1' && (values.processes !== '2' || values.database !== 'postgres')) {
    throw new Error('--processes is 1, or 2 with --database postgres');
  }
  if (values.against && values.database === 'postgres') throw new Error('--against runs on SQLite only');
  return Number(values['second-core']);
}
