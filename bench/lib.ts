import { type ChildProcess, spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

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

export interface LoadResult {
  rps: number;
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
}): Promise<LoadResult> {
  let i = 0;
  const result = await autocannon({
    url: opts.url,
    method: 'POST',
    connections: opts.connections ?? 50,
    duration: opts.seconds ?? 10,
    headers: { 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => {
          const body = opts.bodies[i++ % opts.bodies.length]!;
          return { ...req, body };
        },
      },
    ],
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export const fmt = (r: LoadResult) =>
  `${Math.round(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;
