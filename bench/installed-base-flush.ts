/**
 * bench/installed-base-flush: what the installed-base report's flush costs a site it counts for the
 * first time in a day (src/modules/reports/installed-base.ts; docs/performance.md, 'The
 * installed-base report's flush'), against the same rows inserted by hand into a table of the same
 * shape, with one prepared statement in one transaction, same run. At 100,000 licenses most update
 * checks of bench/check are a site's first of the day, so this is part of every such check. Run by
 * hand, on SQLite:
 *
 *   taskset -c 1 node --import tsx bench/installed-base-flush.ts [--sites 20000] [--rounds 5]
 *
 * Each round records `--sites` new sites (the version, platform and PHP of a WordPress site, so
 * every count kind is written) and flushes them; then the baseline inserts the same number of
 * keyed hashes. Prints µs a site for the record calls, the flush and the baseline, and the flush's
 * ratio to the baseline (median of the rounds; the machine is shared: compare ratios).
 */
import { createHmac } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createTestApp } from '../test/helpers/app.js';
import { createProduct } from '../test/helpers/factories.js';
import { median } from './lib.js';

const { values: args } = parseArgs({
  options: { sites: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '5' } },
});
const SITES = Number(args.sites);
const ROUNDS = Number(args.rounds);

const t = await createTestApp();
if (t.app.services.database.dialect !== 'sqlite') throw new Error('installed-base-flush: SQLite only');
const sqlite = t.app.services.database.sqlite!;
const productId = (await createProduct(t)).id;
const installedBase = t.app.services.installedBase;
sqlite.exec(`create table plain_sites (day varchar(10) not null, product_id integer not null,
  site varchar(32) not null, primary key (day, product_id, site))`);
const plain = sqlite.prepare(
  'insert into plain_sites values (?, ?, ?) on conflict do nothing returning site',
);

const us = (from: bigint, to: bigint) => Number(to - from) / SITES / 1000;
const facts = { version: '1.1.0', platform: 'wordpress', platform_version: '6.7.1', php_version: '8.2.1' };
let site = 0;
const flush: number[] = [];
const base: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < SITES; i++) installedBase.record(productId, `site-${site++}`, facts);
  const t1 = process.hrtime.bigint();
  await installedBase.flush();
  const t2 = process.hrtime.bigint();
  sqlite.transaction(() => {
    for (let i = 0; i < SITES; i++) {
      const hash = createHmac('sha256', 'secret').update(`2026-11-29|1|plain-${round}-${i}`).digest('hex');
      plain.all('2026-11-29', productId, hash.slice(0, 32));
    }
  })();
  const t3 = process.hrtime.bigint();
  flush.push(us(t1, t2));
  base.push(us(t2, t3));
  console.log(
    `round ${round}: record ${us(t0, t1).toFixed(2)} µs a site, flush ${us(t1, t2).toFixed(2)}, plain insert ${us(t2, t3).toFixed(2)} (${(us(t1, t2) / us(t2, t3)).toFixed(2)}x)`,
  );
}
console.log(
  `median of ${ROUNDS} rounds: flush ${median(flush).toFixed(2)} µs a site, plain insert ${median(base).toFixed(2)}, ${(median(flush) / median(base)).toFixed(2)}x`,
);
await t.close();
