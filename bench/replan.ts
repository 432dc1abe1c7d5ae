/**
 * bench/replan: what SQLite's planning again costs a statement whose equality parameters its
 * planner looks at, for `equalitiesUnplanned` (src/db/database.ts; docs/performance.md,
 * 'Statements planned again on every run'). Run by hand, on each Node.js line (the SQLite each
 * loads differs: scripts/on-node.sh 22 …):
 *
 *   taskset -c 1 node --import tsx bench/replan.ts [--rounds 5]
 *
 * Two sets of statements, each run as written (`= ?`) and as prepareRows prepares it (`= +?`), in
 * alternation within every round, with new values every run as a server binds them:
 *
 * - `join` and `exists`: a lookup by a unique key in a 20,000-row table joined to (or tested
 *   against) a small one, the shape of the download's first read and of the console's lists;
 * - the joined hot statements recorded in test/foundation/__snapshots__/hot-queries.sql (the
 *   download's first read, the release candidates), on an empty database migrated to the latest
 *   schema: no row is found, so what is left is the statement's own cost, planning included.
 *
 * Prints µs a run for each way and their ratio (median of the rounds; the machine is shared:
 * compare ratios, not absolute figures).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { equalitiesUnplanned, openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { openSqlite } from '../src/db/sqlite.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const ROUNDS = Number(args.rounds);
const RUNS = 5_000;

interface Case {
  name: string;
  run(source: string): () => void;
  source: string;
}

const synthetic = openSqlite(':memory:');
synthetic.exec(`create table b (id integer primary key, name text);
  create table a (id integer primary key, key text unique, b_id integer, v text);`);
synthetic.transaction(() => {
  const b = synthetic.prepare('insert into b values (?, ?)');
  for (let i = 1; i <= 100; i++) b.run(i, `b${i}`);
  const a = synthetic.prepare('insert into a values (?, ?, ?, ?)');
  for (let i = 1; i <= 20_000; i++) a.run(i, `k${i}`, 1 + (i % 100), `v${i}`);
})();
let n = 0;
const nextKey = () => `k${1 + ((n++ * 7919) % 20_000)}`;
const onSynthetic = (source: string) => {
  const statement = synthetic.prepare(source).raw(true);
  return () => statement.all(nextKey());
};

const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-replan-'));
const database = openDatabase({ kind: 'sqlite', file: join(dir, 'db.sqlite'), synchronous: 'NORMAL' });
await migrateToLatest(database.db, 'sqlite');
const sqlite = database.sqlite!;
const onApp = (source: string) => {
  const statement = sqlite.prepare(source).raw(true);
  const count = source.split('?').length - 1;
  return () => statement.all(Array.from({ length: count }, () => n++));
};
const recorded = readFileSync(
  new URL('../test/foundation/__snapshots__/hot-queries.sql', import.meta.url),
  'utf8',
)
  .split(';\n')
  .map((s) => s.trim())
  .filter((s) => /\bjoin\b/i.test(s));

const cases: Case[] = [
  {
    name: 'join',
    run: onSynthetic,
    source: 'select a.*, b.name from a join b on b.id = a.b_id where a.key = ?',
  },
  {
    name: 'exists',
    run: onSynthetic,
    source: 'select a.* from a where a.key = ? and exists (select 1 from b where b.id = a.b_id)',
  },
  ...recorded.map((source) => ({
    name: /from "download_tokens"/.test(source)
      ? 'download first read'
      : /from "releases"/.test(source)
        ? 'release candidates'
        : 'hot join',
    run: onApp,
    source,
  })),
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const time = (run: () => void) => {
  const started = process.hrtime.bigint();
  for (let i = 0; i < RUNS; i++) run();
  return Number(process.hrtime.bigint() - started) / RUNS / 1000;
};

const { v: version } = sqlite.prepare('select sqlite_version() v').get() as { v: string };
console.log(`Node.js ${process.version}, SQLite ${version}`);
for (const c of cases) {
  const bare = c.run(c.source);
  const unplanned = c.run(equalitiesUnplanned(c.source));
  const ways: Record<'bare' | 'unplanned', number[]> = { bare: [], unplanned: [] };
  for (let warm = 0; warm < 3; warm++) {
    time(bare);
    time(unplanned);
  }
  for (let round = 0; round < ROUNDS; round++) {
    ways.bare.push(time(bare));
    ways.unplanned.push(time(unplanned));
  }
  const [b, u] = [median(ways.bare), median(ways.unplanned)];
  console.log(
    `${c.name.padEnd(20)} = ?: ${b.toFixed(2)} µs a run   = +?: ${u.toFixed(2)} µs   ratio ${(b / u).toFixed(2)}x`,
  );
}
await database.close();
rmSync(dir, { recursive: true, force: true });
