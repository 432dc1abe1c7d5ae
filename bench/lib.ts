import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

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
export async function startPinned(core: number, argv: string[], env: Record<string, string>): Promise<Proc> {
  const [cmd, ...args] = pinned(core, argv);
  const child = spawn(cmd!, args, {
    cwd: ROOT,
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
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
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
}): Promise<LoadResult> {
  let i = 0;
  const cpuBefore = opts.pid ? cpuSeconds(opts.pid) : 0;
  const result = await autocannon({
    url: opts.url,
    method: 'POST',
    connections: opts.connections ?? 50,
    duration: opts.seconds ?? 10,
    headers: { 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => {
          const n = i++;
          const body = opts.bodies[n % opts.bodies.length]!;
          if (!opts.headersFor) return { ...req, body };
          return { ...req, body, headers: { ...req.headers, ...opts.headersFor(n) } };
        },
      },
    ],
  });
  const cpuUs = opts.pid
    ? ((cpuSeconds(opts.pid) - cpuBefore) * 1e6) / Math.max(1, result.requests.total)
    : undefined;
  return {
    rps: result.requests.average,
    cpuUs,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A server under load: where to send requests, and its pid for the CPU figure. */
export interface Target {
  url: string;
  pid: number;
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
  responseSize: number;
  rounds: number;
  seconds: number;
  load: (url: string, seconds: number, pid?: number) => Promise<LoadResult>;
}): Promise<{ ours: LoadResult[]; bare: LoadResult[] }> {
  const server = await startPinned(0, [process.execPath, '--import', 'tsx', 'bench/bare-server.ts'], {
    BODY_SIZE: String(opts.responseSize),
  });
  const baseline: Target = { url: `${server.url}/bare`, pid: server.child.pid! };
  const ours: LoadResult[] = [];
  const bare: LoadResult[] = [];
  try {
    for (let round = 0; round < opts.rounds; round++) {
      const warmup = round === 0 ? 3 : 1;
      for (const [target, results] of [
        [opts.ours, ours],
        [baseline, bare],
      ] as const) {
        await opts.load(target.url, warmup);
        results.push(await opts.load(target.url, opts.seconds, target.pid));
      }
    }
  } finally {
    await server.stop();
  }
  return { ours, bare };
}

/** Prints every round and the medians: throughput ratio, server CPU per request, p99. */
export function report(name: string, runs: { ours: LoadResult[]; bare: LoadResult[] }, target: string): void {
  const ratios = runs.ours.map((r, i) => (r.rps / runs.bare[i]!.rps) * 100);
  runs.ours.forEach((r, i) => {
    console.log(`round ${i + 1}:`);
    console.log(`  bare Fastify:  ${fmt(runs.bare[i]!)}`);
    console.log(`  ${`${name}:`.padEnd(14)} ${fmt(r)}`);
    console.log(`  ratio:         ${ratios[i]!.toFixed(1)}% of bare`);
  });
  const cpu = (rs: LoadResult[]) => median(rs.map((r) => r.cpuUs ?? 0)).toFixed(0);
  console.log(
    `median of ${ratios.length}: ${median(ratios).toFixed(1)}% of bare (${target}); server CPU ${cpu(runs.ours)} µs vs ${cpu(runs.bare)} µs a request; ${name} p99 ${median(runs.ours.map((r) => r.p99))} ms`,
  );
}

export const fmt = (r: LoadResult) =>
  `${Math.round(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}` +
  (r.cpuUs === undefined ? '' : `, server CPU ${r.cpuUs.toFixed(0)} µs/request`);

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
