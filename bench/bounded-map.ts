/**
 * bench/bounded-map: what the in-memory issuance counters cost an update check once their map is
 * full (every check counts its license and its client address; a new address each time evicts the
 * oldest bucket), with BoundedMap as it is and with the way it found its oldest entry before, a
 * fresh `keys().next()` that walks every deleted slot from the start of the Map. No server. Run by
 * hand:
 *
 *   taskset -c 1 node --import tsx bench/bounded-map.ts [--rounds 3] [--size 20000]
 */
import { parseArgs } from 'node:util';
import { BoundedMap } from '../src/bounded-map.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, size: { type: 'string', default: '20000' } },
});
const SIZE = Number(values.size);
const CHECKS = 100_000;

/** BoundedMap before: the oldest entry found by a fresh iterator each time. */
class FreshIterator<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }
  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}

/** µs per check: two counts as the issuance counters made them in a map (read, delete, set as the newest). */
function perCheck(map: Map<string, { count: number }>): number {
  const add = (bucket: string) => {
    const kept = map.get(bucket);
    map.delete(bucket);
    map.set(bucket, kept ?? { count: 0 });
  };
  for (let i = 0; i < 2 * SIZE; i++) add(`warm:${i}`);
  const started = process.hrtime.bigint();
  for (let i = 0; i < CHECKS; i++) {
    add(`dist:license:${i % SIZE}`);
    add(`dist:ipcap:${i}`);
  }
  return Number(process.hrtime.bigint() - started) / 1e3 / CHECKS;
}

for (let round = 1; round <= Number(values.rounds); round++) {
  const before = perCheck(new FreshIterator(SIZE));
  const now = perCheck(new BoundedMap(SIZE));
  console.log(
    `round ${round}: a fresh iterator ${before.toFixed(2)} µs, the kept iterator ${now.toFixed(2)} µs a check (${SIZE} buckets)`,
  );
}
