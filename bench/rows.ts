/**
 * bench/rows: what naming a SQLite row's values costs, for `rowBuilder` (src/db/database.ts).
 *
 *   taskset -c 1 node --import tsx bench/rows.ts [--rounds 5]
 *
 * Each way turns raw value arrays into row objects, in alternation within every round, on two
 * shapes: one 18-column row (the license lookup of validate) and 100 rows of 30 columns (an admin
 * listing). It prints nanoseconds a row, and each way's ratio to the generated literal in the same
 * round (the machine is shared: compare ratios, not absolute figures):
 *
 * - `generated`: the function `rowBuilder` generates once per statement, one object literal of a
 *   fixed shape;
 * - `loop`: properties added one by one to `{}` under the statement's column names;
 * - `template`: a copy of a template object with the statement's columns (`{ ...template }`, which
 *   V8 copies with its hidden class), then each value stored under its name;
 * - `entries`: `Object.fromEntries` of name/value pairs;
 * - `better-sqlite3`: the driver's own row objects, read from a statement in its default mode,
 *   against the same statement in raw mode named by `generated` (end to end, SQLite included).
 */

import { parseArgs } from 'node:util';
import { rowBuilder } from '../src/db/database.js';
import { openSqlite } from '../src/db/sqlite.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const ROUNDS = Number(args.rounds);

type Build = (values: unknown[]) => Record<string, unknown>;

const ways: Record<string, (names: string[]) => Build> = {
  generated: rowBuilder,
  loop: (names) => (values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
    return row;
  },
  template: (names) => {
    const template: Record<string, unknown> = {};
    for (const name of names) template[name] = null;
    return (values) => {
      const row = { ...template };
      for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
      return row;
    };
  },
  entries: (names) => (values) => Object.fromEntries(names.map((name, i) => [name, values[i]])),
};

/** Column names and values like a license row's: ids, text, timestamps, nulls. */
function shape(columns: number, rows: number): { names: string[]; rows: unknown[][] } {
  const names = Array.from(
    { length: columns },
    (_, i) => ['id', 'license_key', 'status', 'created_at'][i] ?? `column_${i}`,
  );
  const value = (r: number, c: number) =>
    c % 4 === 0
      ? r * 31 + c
      : c % 4 === 1
        ? `text-${r}-${c}`
        : c % 4 === 2
          ? null
          : '2026-11-24T10:00:00.000Z';
  return { names, rows: Array.from({ length: rows }, (_, r) => names.map((_, c) => value(r, c))) };
}

/** Where built rows are kept for a while, so that no way's objects can be optimised away. */
const kept: unknown[] = new Array(1024).fill(null);
/** Nanoseconds a row: builds every row `reps` times. */
function time(build: Build, rows: unknown[][], reps: number): number {
  const started = process.hrtime.bigint();
  let n = 0;
  for (let k = 0; k < reps; k++) {
    for (let i = 0; i < rows.length; i++) kept[n++ & 1023] = build(rows[i]!);
  }
  return Number(process.hrtime.bigint() - started) / (reps * rows.length);
}

function builders(names: string[]): Record<string, Build> {
  return Object.fromEntries(Object.entries(ways).map(([way, make]) => [way, make(names)]));
}

const cases = [
  { label: 'one row of 18 columns', ...shape(18, 1), reps: 400_000 },
  { label: '100 rows of 30 columns', ...shape(30, 100), reps: 4_000 },
];

for (const c of cases) {
  const built = builders(c.names);
  // Every way gives the same row.
  for (const [way, build] of Object.entries(built)) {
    if (JSON.stringify(build(c.rows[0]!)) !== JSON.stringify(built.generated!(c.rows[0]!)))
      throw new Error(`${way} builds another row`);
  }
  for (const build of Object.values(built)) time(build, c.rows, c.reps / 4); // warm-up
  const results: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((w) => [w, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const ns: Record<string, number> = {};
    for (const [way, build] of Object.entries(built)) ns[way] = time(build, c.rows, c.reps);
    for (const [way, n] of Object.entries(ns)) results[way]!.push(n / ns.generated!);
    console.log(
      `${c.label}, round ${round + 1}: ${Object.entries(ns)
        .map(([way, n]) => `${way} ${n.toFixed(0)} ns`)
        .join(', ')}`,
    );
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `${c.label}, median ratio to generated: ${Object.entries(results)
      .map(([way, r]) => `${way} ${median(r).toFixed(2)}x`)
      .join(', ')}`,
  );
}

// End to end: the driver's own rows against raw arrays named by the generated function.
const db = openSqlite(':memory:');
const columns = shape(18, 1).names;
db.exec(`create table t (${columns.map((n) => `"${n}"`).join(', ')})`);
const insert = db.prepare(`insert into t values (${columns.map(() => '?').join(', ')})`);
for (const row of shape(18, 100).rows) insert.run(row);
const query = 'select * from t where id = ?';
const own = db.prepare(query);
const raw = db.prepare(query).raw(true);
const toRow = rowBuilder(raw.columns().map((c) => c.name));
const reads = {
  'better-sqlite3': () => own.get(31 * 7),
  generated: () => toRow(raw.get(31 * 7) as unknown[]),
};
const e2e: Record<string, number[]> = Object.fromEntries(Object.keys(reads).map((w) => [w, []]));
for (let round = 0; round <= ROUNDS; round++) {
  const ns: Record<string, number> = {};
  for (const [way, read] of Object.entries(reads)) {
    const started = process.hrtime.bigint();
    for (let k = 0; k < 200_000; k++) kept[k & 1023] = read();
    ns[way] = Number(process.hrtime.bigint() - started) / 200_000;
  }
  if (round === 0) continue; // warm-up
  for (const [way, n] of Object.entries(ns)) e2e[way]!.push(n);
}
db.close();
console.log(
  `one 18-column row read by id, end to end: ${Object.entries(e2e)
    .map(([way, ns]) => `${way} ${ns.map((n) => n.toFixed(0)).join('/')} ns`)
    .join(', ')}`,
);
