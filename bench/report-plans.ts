/**
 * The dashboard report's query plans at a large store's shape (docs/performance.md, 'The
 * dashboard's report'): 1,000,000 licenses, 1,000,000 activations, 100,000 orders over a year,
 * 10,000 webhook events and a year of daily counters for 50 products. Prints EXPLAIN QUERY PLAN
 * (SQLite) or EXPLAIN ANALYZE (PostgreSQL, with DATABASE_URL set) of every statement the report
 * sends, and how long the report takes. Run by hand:
 *
 *     node --import tsx bench/report-plans.ts
 *     DATABASE_URL=postgres://… node --import tsx bench/report-plans.ts
 */
import { CompiledQuery, type KyselyPlugin, sql } from 'kysely';
import { systemClock } from '../src/clock.js';
import { ReportsRepository } from '../src/modules/reports/reports.repository.js';
import { ReportsService } from '../src/modules/reports/reports.service.js';
import { createTestApp } from '../test/helpers/app.js';
import { createProduct } from '../test/helpers/factories.js';

const t = await createTestApp();
const { db, dialect } = t.app.services.database;
const pg = dialect === 'postgres';
const product = await createProduct(t, {}, { via: 'database' });
const user = await db.selectFrom('users').select('id').executeTakeFirstOrThrow();
const P = product.id;
const U = user.id;

// Rows made by the database itself: a series of n, and a timestamp x % days days ago.
const series = (n: number) =>
  pg
    ? `generate_series(1, ${n}) as s(x)`
    : `(with recursive s(x) as (select 1 union all select x + 1 from s where x < ${n}) select x from s) s`;
const ago = (days: string) =>
  pg
    ? `to_char((now() at time zone 'utc') - (${days}) * interval '1 day', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    : `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (${days}) || ' days')`;
const run = (text: string) => sql.raw(text).execute(db);

const started = Date.now();
await run(`insert into licenses (license_key, product_id, variation_id, user_id, status, created_at, updated_at)
  select 'K' || x, ${P}, 0, ${U}, 'active', ${ago('x % 365')}, ${ago('x % 365')} from ${series(1_000_000)}`);
await run(`insert into activations (license_id, identity_key, domain, domain_normalized, installation_id, ip_address,
  user_agent, status, activated_at, updated_at)
  select x, 'I' || x, 'd' || x || '.example', 'd' || x || '.example', 'i', '127.0.0.1', 'ua',
  case when x % 5 = 0 then 'deactivated' else 'active' end, ${ago('x % 365')}, ${ago('x % 365')}
  from ${series(1_000_000)}`);
await run(`insert into orders (order_key, status, created_via, currency, currency_symbol, decimals, base_currency, rate,
  rate_id, prices_include_tax, subtotal, subtotal_tax, discount_total, discount_tax, shipping_total, shipping_tax,
  total_tax, total, payment_method, payment_method_title, billing, shipping, shipping_lines, coupons, customer_note,
  custom_fields, referral_code, ip_address, stock_held, paid_at, created_at, updated_at)
  select 'o' || x,
    case x % 10 when 0 then 'pending' when 1 then 'cancelled' when 2 then 'processing' else 'completed' end,
    'checkout', case when x % 3 = 0 then 'EUR' else 'USD' end, '$', 2, 'USD', '1', 'r', 0, 4900, 0, 0, 0, 0, 0, 0, 4900,
    'test_card', 'Card', '{}', '{}', '[]', '[]', '', '{}', '', '127.0.0.1', '[]',
    case when x % 10 = 0 then null else ${ago('x % 365')} end, ${ago('x % 365')}, ${ago('x % 365')}
  from ${series(100_000)}`);
await run(`insert into webhook_events (event_id, event, payload, status, attempts, last_error, created_at, updated_at)
  select 'e' || x, 'license.revoked', '{}',
    case x % 4 when 0 then 'abandoned' when 1 then 'pending' else 'delivered' end, x % 6, null,
    ${ago('x % 365')}, ${ago('x % 365')} from ${series(10_000)}`);
await run(`insert into daily_counters (kind, day, product_id, count)
  select case when x % 2 = 0 then 'update_check' else 'download' end, substr(${ago('(x / 100) % 365')}, 1, 10),
    (x / 2) % 50 + 1, 10 from ${series(36_500)}`);
// As autovacuum leaves a table after a bulk load: statistics, and on PostgreSQL the visibility map
// that lets a count be answered from the index alone.
await run(pg ? 'vacuum analyze' : 'analyze');
console.log(`${dialect}: seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);

// Every statement the report sends, compiled with its parameters.
const captured: CompiledQuery[] = [];
const capture: KyselyPlugin = {
  transformQuery(args) {
    captured.push(db.getExecutor().compileQuery(args.node, args.queryId));
    return args.node;
  },
  transformResult: async (args) => args.result,
};
const reports = new ReportsService(new ReportsRepository(db.withPlugin(capture)), systemClock);
await reports.dashboard(30);
for (const q of captured) {
  console.log(`\n${q.sql}\n  ${JSON.stringify(q.parameters)}`);
  const plan = await db.executeQuery(
    CompiledQuery.raw(`${pg ? 'explain (analyze, costs off)' : 'explain query plan'} ${q.sql}`, [
      ...q.parameters,
    ]),
  );
  for (const row of plan.rows as Record<string, unknown>[]) {
    console.log(`  ${pg ? row['QUERY PLAN'] : row.detail}`);
  }
}
for (const days of [30, 366]) {
  const t0 = performance.now();
  for (let i = 0; i < 5; i++) await reports.dashboard(days);
  console.log(`\nthe report of ${days} days: ${((performance.now() - t0) / 5).toFixed(1)} ms (mean of 5)`);
}
await t.close();
