import { type Clock, iso } from '../../clock.js';
import { fromMinor } from '../catalogue/money.js';
import type { DayCount, FailingRow, ReportsRepository } from './reports.repository.js';
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
    };
  }
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
