import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { on, type Tx } from '../../db/transaction.js';

/** A time range of stored ISO timestamps, `from` included, `to` excluded (text compares as time). */
export interface Range {
  from: string;
  to: string;
}

export interface SalesRow {
  day: string;
  currency: string;
  decimals: number;
  orders: number;
  total: number;
}

export interface DayCount {
  day: string;
  count: number;
}

export interface CounterRow {
  kind: string;
  day: string;
  product_id: number;
  count: number;
}

export interface LicenseActionRow {
  order_id: number;
  created_via: string;
  currency: string;
  decimals: number;
  meta: string;
  total: number;
}

export interface BillingRow {
  currency: string | null;
  recurring_total: number | null;
  billing_period: string | null;
  billing_interval: number | null;
  /** The parent order's decimals; null for a subscription made without an order. */
  decimals: number | null;
}

export interface FailingRow {
  event_id: string;
  event: string;
  status: string;
  attempts: number;
  updated_at: string;
  last_error: string | null;
  response_code: number | null;
}

export interface DraftRow {
  id: number;
  product_id: number;
  product_name: string | null;
  version: string;
  created_at: string;
}

/** Statuses of an order that has been paid and not taken back (docs/api.md, 'Reports'). */
export const SALE_STATUSES = ['processing', 'completed'] as const;

/**
 * The dashboard's queries. Each reads through one index of the 2026112440 migration (or an older
 * one): the plans are in docs/performance.md, 'The dashboard's report'. Days are the first ten
 * characters of the stored ISO timestamp, which is UTC.
 */
export class ReportsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async sales(range: Range, tx?: Tx): Promise<SalesRow[]> {
    const day = sql<string>`substr(paid_at, 1, 10)`;
    const rows = await on(this.db, tx)
      .selectFrom('orders')
      .select((eb) => [
        day.as('day'),
        'currency',
        eb.fn.max('decimals').as('decimals'),
        eb.fn.countAll().as('orders'),
        eb.fn.sum('total').as('total'),
      ])
      .where('paid_at', '>=', range.from)
      .where('paid_at', '<', range.to)
      .where('status', 'in', [...SALE_STATUSES])
      // Test orders took no money (docs/payments.md, 'Test mode and live mode').
      .where('test', '=', 0)
      .groupBy([day, 'currency'])
      .execute();
    return rows.map((r) => ({
      day: r.day,
      currency: r.currency,
      decimals: Number(r.decimals),
      orders: Number(r.orders),
      total: Number(r.total),
    }));
  }

  /**
   * The sale orders paid in the range that renew or upgrade: renewal orders, and the items of any
   * sale whose `meta` names a `license_action` (read by the service, as JSON text reads alike in
   * both databases only outside SQL).
   */
  async licenseActions(range: Range, tx?: Tx): Promise<LicenseActionRow[]> {
    const rows = await on(this.db, tx)
      .selectFrom('orders as o')
      .innerJoin('order_items as oi', 'oi.order_id', 'o.id')
      .select(['o.id as order_id', 'o.created_via', 'o.currency', 'o.decimals', 'oi.meta', 'oi.total'])
      .where('o.paid_at', '>=', range.from)
      .where('o.paid_at', '<', range.to)
      .where('o.status', 'in', [...SALE_STATUSES])
      .where('o.test', '=', 0)
      .where((eb) => eb.or([eb('o.created_via', '=', 'renewal'), eb('oi.meta', 'like', '%license_action%')]))
      .execute();
    return rows.map((r) => ({ ...r, decimals: Number(r.decimals), total: Number(r.total) }));
  }

  /** Subscriptions that ended (expired or cancelled) in the range, test orders' left out. */
  async lapsedSubscriptions(range: Range, tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .selectFrom('subscriptions as s')
      .leftJoin('orders as po', 'po.id', 's.parent_order_id')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('s.status', 'in', ['expired', 'cancelled'])
      .where('s.updated_at', '>=', range.from)
      .where('s.updated_at', '<', range.to)
      .where((eb) => eb.or([eb('po.test', 'is', null), eb('po.test', '=', 0)]))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** The subscriptions that bill now (`active`, `pending-cancel`), with their schedule and charge. */
  async billingSubscriptions(tx?: Tx): Promise<BillingRow[]> {
    const rows = await on(this.db, tx)
      .selectFrom('subscriptions as s')
      .leftJoin('orders as po', 'po.id', 's.parent_order_id')
      .select(['s.currency', 's.recurring_total', 's.billing_period', 's.billing_interval', 'po.decimals'])
      .where('s.status', 'in', ['active', 'pending-cancel'])
      .where((eb) => eb.or([eb('po.test', 'is', null), eb('po.test', '=', 0)]))
      .execute();
    return rows.map((r) => ({
      currency: r.currency,
      recurring_total: r.recurring_total === null ? null : Number(r.recurring_total),
      billing_period: r.billing_period,
      billing_interval: r.billing_interval === null ? null : Number(r.billing_interval),
      decimals: r.decimals === null ? null : Number(r.decimals),
    }));
  }

  async newLicenses(range: Range, tx?: Tx): Promise<DayCount[]> {
    const day = sql<string>`substr(created_at, 1, 10)`;
    const rows = await on(this.db, tx)
      .selectFrom('licenses')
      .select((eb) => [day.as('day'), eb.fn.countAll().as('count')])
      .where('created_at', '>=', range.from)
      .where('created_at', '<', range.to)
      .where('test', '=', 0)
      .groupBy(day)
      .execute();
    return rows.map((r) => ({ day: r.day, count: Number(r.count) }));
  }

  async newActivations(range: Range, tx?: Tx): Promise<DayCount[]> {
    const day = sql<string>`substr(activated_at, 1, 10)`;
    const rows = await on(this.db, tx)
      .selectFrom('activations')
      .select((eb) => [day.as('day'), eb.fn.countAll().as('count')])
      .where('activated_at', '>=', range.from)
      .where('activated_at', '<', range.to)
      .groupBy(day)
      .execute();
    return rows.map((r) => ({ day: r.day, count: Number(r.count) }));
  }

  /** Active activations now, all of them and the staging ones (docs/licensing.md, '2.3'). */
  async activeActivations(tx?: Tx): Promise<{ active: number; staging: number }> {
    const rows = await on(this.db, tx)
      .selectFrom('activations')
      .select((eb) => ['environment', eb.fn.countAll().as('n')])
      // A literal, as the partial indexes on active activations say it (src/db/database.ts, equalitiesUnplanned).
      .where('status', '=', sql.lit('active'))
      .groupBy('environment')
      .execute();
    let active = 0;
    let staging = 0;
    for (const r of rows) {
      active += Number(r.n);
      if (r.environment === 'staging') staging += Number(r.n);
    }
    return { active, staging };
  }

  /** Counted days `first`..`last` (inclusive, `YYYY-MM-DD`) per kind, all products added up. */
  async counters(kinds: string[], first: string, last: string, tx?: Tx): Promise<DayCount[][]> {
    const rows = await on(this.db, tx)
      .selectFrom('daily_counters')
      .select((eb) => ['kind', 'day', eb.fn.sum('count').as('count')])
      .where('kind', 'in', kinds)
      .where('day', '>=', first)
      .where('day', '<=', last)
      .groupBy(['kind', 'day'])
      .execute();
    return kinds.map((k) =>
      rows.filter((r) => r.kind === k).map((r) => ({ day: r.day, count: Number(r.count) })),
    );
  }

  /** Adds counts to the stored ones: several processes' flushes add up (counters.ts). */
  async addCounters(rows: CounterRow[], tx?: Tx): Promise<void> {
    if (rows.length === 0) return;
    await on(this.db, tx)
      .insertInto('daily_counters')
      .values(rows)
      .onConflict((oc) =>
        oc
          .columns(['kind', 'day', 'product_id'])
          .doUpdateSet((eb) => ({ count: eb('daily_counters.count', '+', eb.ref('excluded.count')) })),
      )
      .execute();
  }

  /**
   * Events whose last attempt failed: abandoned, or pending after at least one attempt. A
   * delivered, skipped (delivery off) or not yet attempted event is not failing.
   */
  async failingCount(tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .selectFrom('webhook_events')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', 'in', ['pending', 'abandoned'])
      .where('attempts', '>', 0)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The latest failing events of one status, newest first, with their last attempt's HTTP status. */
  latestFailing(status: 'pending' | 'abandoned', limit: number, tx?: Tx): Promise<FailingRow[]> {
    return on(this.db, tx)
      .selectFrom('webhook_events as e')
      .leftJoin('webhook_attempts as a', (j) =>
        j.onRef('a.event_id', '=', 'e.event_id').onRef('a.attempt', '=', 'e.attempts'),
      )
      .select([
        'e.event_id',
        'e.event',
        'e.status',
        'e.attempts',
        'e.updated_at',
        'e.last_error',
        'a.response_code',
      ])
      .where('e.status', '=', status)
      .where('e.attempts', '>', 0)
      .orderBy('e.updated_at', 'desc')
      .limit(limit)
      .execute();
  }

  async draftCount(tx?: Tx): Promise<number> {
    const row = await on(this.db, tx)
      .selectFrom('releases')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'draft')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The newest drafts (ids grow with time), with their product's name. */
  drafts(limit: number, tx?: Tx): Promise<DraftRow[]> {
    return on(this.db, tx)
      .selectFrom('releases as r')
      .leftJoin('products as p', 'p.id', 'r.product_id')
      .select(['r.id', 'r.product_id', 'p.name as product_name', 'r.version', 'r.created_at'])
      .where('r.status', '=', 'draft')
      .orderBy('r.id', 'desc')
      .limit(limit)
      .execute();
  }
}
