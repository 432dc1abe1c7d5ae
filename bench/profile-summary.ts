/**
 * bench/profile-summary: where a V8 CPU profile (`--cpu-prof`, as the benchmarks write with
 * BENCH_PROFILE=1) spends its self time, by module and by function. Run by hand:
 *
 *   node --import tsx bench/profile-summary.ts /tmp/tgprof/CPU.….cpuprofile [--top 25] [--within a,b] [--last 45]
 *
 * `--last S` keeps the samples of the profile's last S seconds only: the load, after a seed.
 *
 * `--within` names functions (as `name`, or `name@file` with the file's name, e.g.
 * `record@field.js`) and prints the share of the busy time spent inside any of them, callees
 * included: the cost of a piece of code as a fraction of the whole server's, which the machine's
 * load does not move as it moves throughput (docs/performance.md, 'Regression check of channels,
 * rollouts, the installed-base report and last seen').
 *
 * Self time is the time of the samples whose top frame is the function, from the profile's
 * `timeDeltas`. Percentages are of the non-idle time (idle is the event loop waiting). Work done off
 * the main thread (libuv's pool: scrypt, zlib, file reads; PostgreSQL's own processes) is not in a
 * V8 profile; the benchmarks' CPU per request counts it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The module a frame belongs to: a package, a Node.js module, a file of ours, or V8's own bucket. */
function moduleOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return url;
  const ours = /\/(dist|src)\/(.*)$/.exec(url);
  if (ours) return `tollgate ${ours[2]}`;
  return url.split('/').pop()!;
}

/** The profile file a process wrote into `dir` (its name carries the pid), if any. */
export function findProfile(dir: string, pid: number): string | null {
  try {
    const name = readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && f.includes(`.${pid}.`));
    return name ? join(dir, name) : null;
  } catch {
    return null;
  }
}

/**
 * A profile, keeping only its samples of the last `lastSeconds` (all when null): a benchmark's
 * server spends its first minutes on the seed (the check bench makes its licenses through the API),
 * and its load comes last, so `--last` cuts the profile to the load.
 */
function readProfile(file: string, lastSeconds: number | null): Profile {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  if (lastSeconds === null) return profile;
  const total = profile.timeDeltas.reduce((a, b) => a + b, 0);
  let t = 0;
  let first = profile.samples.length;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (t >= total - lastSeconds * 1e6) {
      first = i;
      break;
    }
  }
  return { ...profile, samples: profile.samples.slice(first), timeDeltas: profile.timeDeltas.slice(first) };
}

/** The top self time of a profile by module and by function, as printable lines. */
export function summariseProfile(file: string, top = 25, lastSeconds: number | null = null): string {
  const profile = readProfile(file, lastSeconds);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const modules = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    busy += us;
    const mod = moduleOf(url, functionName);
    modules.set(mod, (modules.get(mod) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${url ? `${mod}:${lineNumber + 1}` : ''}`.trim();
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  }
  const lines = [
    `busy ${(busy / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s; self time, % of busy:`,
  ];
  const table = (title: string, m: Map<string, number>) => {
    lines.push(title);
    for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      lines.push(`  ${((us / busy) * 100).toFixed(1).padStart(5)}%  ${k}`);
    }
  };
  table('by module:', modules);
  table('by function:', functions);
  return lines.join('\n');
}

/** The share of a profile's busy time whose stack holds one of `names` (`fn` or `fn@file`), callees included. */
export function shareWithin(file: string, names: string[], lastSeconds: number | null = null): string {
  const profile = readProfile(file, lastSeconds);
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const matches = (n: ProfileNode) =>
    names.some((want) => {
      const [fn, fileName] = want.split('@');
      const { functionName, url } = n.callFrame;
      return functionName === fn && (!fileName || url.endsWith(`/${fileName}`));
    });
  // Whether a node's stack (itself or an ancestor) holds a named function, memoised per node.
  const inside = new Map<number, boolean>();
  const isInside = (id: number): boolean => {
    const known = inside.get(id);
    if (known !== undefined) return known;
    const up = parent.get(id);
    const answer = matches(byId.get(id)!) || (up !== undefined && isInside(up));
    inside.set(id, answer);
    return answer;
  };
  let busy = 0;
  let within = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const us = profile.timeDeltas[i] ?? 0;
    busy += us;
    if (isInside(id)) within += us;
  }
  return `inside ${names.join(', ')}: ${((within / busy) * 100).toFixed(2)}% of busy (${(within / 1e3).toFixed(0)} of ${(busy / 1e3).toFixed(0)} ms)`;
}

if (process.argv[1]?.endsWith('profile-summary.ts')) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, within: { type: 'string' }, last: { type: 'string' } },
  });
  const last = values.last === undefined ? null : Number(values.last);
  for (const file of positionals) {
    console.log(`${file}\n${summariseProfile(file, Number(values.top), last)}`);
    if (values.within) console.log(shareWithin(file, values.within.split(','), last));
  }
}
