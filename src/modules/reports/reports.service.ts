import { type Clock, iso } from '../../clock.js';
import { fromMinor } from '../catalogue/money.js';
import type {
  BillingRow,
  DayCount,
  FailingRow,
  LicenseActionRow,
  ReportsRepository,
} from './reports.repository.js';
import type { Dashboard } from './reports.schemas.js';

const DAY_MS = 86_400_000;
const FAILING_SHOWN = 5;
const DRAFTS_SHOWN = 10;

/** Every day of the range, oldest first, with 0 where the rows have none. */
function fill(days: string[], rows: DayCount[]): { total: number; per_day: DayCount[] } {
  const byDay = new Map(rows.map((r) => [r.day, r.count]));
  const per_day = days.map((day) => ({ day, count: byDay.get(day) ?? 0 }));
  return { total: per_day.reduce((n, d) => n + d.count, 0), per_day };
}

/** The dashboard's figures (docs/api.md, 'Reports'), per UTC day by the server's clock. */
export class ReportsService {
  constructor(
    private readonly repo: ReportsRepository,
    private readonly clock: Clock,
  ) {}

  async dashboard(daysWanted: number): Promise<Dashboard> {
    const today = Math.floor(this.clock.now().getTime() / DAY_MS) * DAY_MS;
    const first = today - (daysWanted - 1) * DAY_MS;
    const days: string[] = [];
    for (let t = first; t <= today; t += DAY_MS) days.push(iso(new Date(t)).slice(0, 10));
    const range = { from: iso(new Date(first)), to: iso(new Date(today + DAY_MS)) };
    const from = days[0]!;
    const to = days[days.length - 1]!;

    const [
      sales,
      licenses,
      activations,
      active,
      [checks, downloads],
      failing,
      pending,
      abandoned,
      drafts,
      draftRows,
      actions,
      lapsed,
      billing,
    ] = await Promise.all([
      this.repo.sales(range),
      this.repo.newLicenses(range),
      this.repo.newActivations(range),
      this.repo.activeActivations(),
      this.repo.counters(['update_check', 'download'], from, to),
      this.repo.failingCount(),
      this.repo.latestFailing('pending', FAILING_SHOWN),
      this.repo.latestFailing('abandoned', FAILING_SHOWN),
      this.repo.draftCount(),
      this.repo.drafts(DRAFTS_SHOWN),
      this.repo.licenseActions(range),
      this.repo.lapsedSubscriptions(range),
      this.repo.billingSubscriptions(),
    ]);

    const currencies = [...new Set(sales.map((s) => s.currency))].sort();
    const latestFailing = [...pending, ...abandoned]
      .sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0))
      .slice(0, FAILING_SHOWN)
      .map(failingView);
    const newActivations = fill(days, activations);

    return {
      days: daysWanted,
      from,
      to,
      sales: currencies.map((currency) => {
        const rows = sales.filter((s) => s.currency === currency);
        const decimals = Math.max(...rows.map((r) => r.decimals));
        const byDay = new Map(rows.map((r) => [r.day, r]));
        const per_day = days.map((day) => {
          const r = byDay.get(day);
          const minor = r?.total ?? 0;
          return { day, orders: r?.orders ?? 0, total_minor: minor, total: fromMinor(minor, decimals) };
        });
        const total_minor = rows.reduce((n, r) => n + r.total, 0);
        return {
          currency,
          decimals,
          orders: rows.reduce((n, r) => n + r.orders, 0),
          total_minor,
          total: fromMinor(total_minor, decimals),
          per_day,
        };
      }),
      new_licenses: fill(days, licenses),
      activations: {
        active: active.active,
        staging: active.staging,
        total: newActivations.total,
        per_day: newActivations.per_day,
      },
      update_checks: fill(days, checks ?? []),
      downloads: fill(days, downloads ?? []),
      failing_webhooks: { count: failing, latest: latestFailing },
      drafts: {
        count: drafts,
        latest: draftRows.map((d) => ({
          release_id: d.id,
          product_id: d.product_id,
          product_name: d.product_name ?? '',
          version: d.version,
          created_at: d.created_at,
        })),
      },
      ...renewalsAndUpgrades(actions, lapsed),
      mrr: monthlyRecurring(billing),
    };
  }
}

const licenseAction = (meta: string): unknown => {
  try {
    const parsed = JSON.parse(meta) as unknown;
    return typeof parsed === 'object' && parsed !== null
      ? (parsed as Record<string, unknown>).license_action
      : null;
  } catch {
    return null;
  }
};

/** Per currency, in the order of the currency codes. */
function perCurrency<T>(
  byCurrency: Map<string, { decimals: number; minor: number; n: number }>,
  name: keyof T,
) {
  return [...byCurrency.keys()].sort().map((currency) => {
    const c = byCurrency.get(currency)!;
    const minor = Math.round(c.minor);
    return {
      currency,
      decimals: c.decimals,
      total_minor: minor,
      total: fromMinor(minor, c.decimals),
      [name]: c.n,
    };
  });
}

function add(
  m: Map<string, { decimals: number; minor: number; n: number }>,
  currency: string,
  decimals: number,
  minor: number,
) {
  const c = m.get(currency) ?? { decimals, minor: 0, n: 0 };
  c.decimals = Math.max(c.decimals, decimals);
  c.minor += minor;
  c.n += 1;
  m.set(currency, c);
}

/**
 * docs/selling.md, 'Reports': a renewal is a paid sale order made to renew a subscription or with
 * an item whose meta says `license_action: 'renewal'` (counted once per order); upgrade revenue
 * sums the items whose meta says `license_action: 'upgrade'`, before tax.
 */
function renewalsAndUpgrades(rows: LicenseActionRow[], lapsed: number) {
  const renewals = new Set<number>();
  const upgrades = new Map<string, { decimals: number; minor: number; n: number }>();
  for (const r of rows) {
    const action = licenseAction(r.meta);
    if (r.created_via === 'renewal' || action === 'renewal') renewals.add(r.order_id);
    if (action === 'upgrade') add(upgrades, r.currency, r.decimals, r.total);
  }
  const n = renewals.size;
  return {
    renewal_rate: {
      renewals: n,
      lapsed,
      rate: n + lapsed === 0 ? null : Math.round((n / (n + lapsed)) * 10_000) / 10_000,
    },
    upgrade_revenue: perCurrency<{ items: number }>(upgrades, 'items') as Dashboard['upgrade_revenue'],
  };
}

/** Months per billing period: a week is 12/52 of a month, a day 12/365. */
const MONTHS: Record<string, number> = { day: 12 / 365, week: 12 / 52, month: 1, year: 12 };

/** What the subscriptions billing now bring in a month, per currency, rounded to the minor unit. */
function monthlyRecurring(rows: BillingRow[]): Dashboard['mrr'] {
  const mrr = new Map<string, { decimals: number; minor: number; n: number }>();
  for (const r of rows) {
    const months = MONTHS[r.billing_period ?? ''];
    if (!months || !r.currency || r.recurring_total === null) continue;
    add(mrr, r.currency, r.decimals ?? 2, r.recurring_total / (months * (r.billing_interval || 1)));
  }
  return perCurrency<{ subscriptions: number }>(mrr, 'subscriptions') as Dashboard['mrr'];
}

function failingView(r: FailingRow): Dashboard['failing_webhooks']['latest'][number] {
  return {
    event_id: r.event_id,
    event: r.event,
    status: r.status === 'abandoned' ? 'abandoned' : 'pending',
    attempts: r.attempts,
    failed_at: r.updated_at,
    response_code: r.response_code,
    error: r.last_error,
  };
}
