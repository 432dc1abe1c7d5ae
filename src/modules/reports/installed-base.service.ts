import type { Clock } from '../../clock.js';
import { ApiError } from '../../http/errors.js';
import { versionCompare } from '../releases/version-compare.js';
import type { InstalledBase } from './installed-base.js';
import { INSTALLED_BASE_RETENTION_DAYS } from './installed-base.js';
import type { InstalledBaseCountRow, InstalledBaseRepository } from './installed-base.repository.js';
import type { InstalledBaseQuery, InstalledBaseReport } from './installed-base.schemas.js';

const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 30;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Midnight UTC of a `YYYY-MM-DD` that names a real day, else null. */
function parseDay(value: string): number | null {
  if (!DAY.test(value)) return null;
  const t = Date.parse(`${value}T00:00:00.000Z`);
  return Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== value ? null : t;
}

const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);
const newestFirst = (a: { version: string }, b: { version: string }) => versionCompare(b.version, a.version);
const percent = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part * 1000) / whole) / 10);

/** The installed-base report of one product (docs/api.md, 'Reports'; docs/admin.md, 'In the field'). */
export class InstalledBaseService {
  constructor(
    private readonly repo: InstalledBaseRepository,
    private readonly installedBase: InstalledBase,
    private readonly clock: Clock,
    private readonly products: { requireProduct(id: number): Promise<unknown> },
  ) {}

  async report(productId: number, query: InstalledBaseQuery): Promise<InstalledBaseReport> {
    const { from, to } = this.range(query);
    await this.products.requireProduct(productId);
    // This process's sites so far are in the answer; other processes' within their next flush.
    await this.installedBase.flush();
    const rows = await this.repo.counts(productId, dayOf(from), dayOf(to));
    const byDay = new Map<string, InstalledBaseCountRow[]>();
    for (const r of rows) {
      const list = byDay.get(r.day);
      if (list) list.push(r);
      else byDay.set(r.day, [r]);
    }
    const days: InstalledBaseReport['days'] = [];
    let asOf: string | null = null;
    for (let t = from; t <= to; t += DAY_MS) {
      const day = dayOf(t);
      const versions = (byDay.get(day) ?? [])
        .filter((r) => r.kind === 'version')
        .map((r) => ({ version: r.version, sites: r.sites }))
        .sort(newestFirst);
      const sites = versions.reduce((n, v) => n + v.sites, 0);
      if (sites > 0) asOf = day;
      days.push({ day, sites, versions });
    }
    const last = asOf === null ? [] : (byDay.get(asOf) ?? []);
    const sites = asOf === null ? 0 : days.find((d) => d.day === asOf)!.sites;
    return {
      product_id: productId,
      from: dayOf(from),
      to: dayOf(to),
      days,
      as_of: asOf,
      sites,
      platforms: last
        .filter((r) => r.kind === 'platform')
        .map((r) => ({
          platform: r.name,
          version: r.version,
          sites: r.sites,
          share: percent(r.sites, sites),
        }))
        .sort((a, b) => (a.platform < b.platform ? -1 : a.platform > b.platform ? 1 : newestFirst(a, b))),
      php: last
        .filter((r) => r.kind === 'php')
        .map((r) => ({ version: r.version, sites: r.sites, share: percent(r.sites, sites) }))
        .sort(newestFirst),
    };
  }

  /** The days asked for: at most the days kept, `from` not after `to`; else 400 `invalid_field_range`. */
  private range(query: InstalledBaseQuery): { from: number; to: number } {
    const today = Math.floor(this.clock.now().getTime() / DAY_MS) * DAY_MS;
    const to = query.to === undefined ? today : parseDay(query.to);
    if (to === null) throw new ApiError('invalid_field_range', { data: { params: { to: 'YYYY-MM-DD' } } });
    const from =
      query.from === undefined ? to - ((query.days ?? DEFAULT_DAYS) - 1) * DAY_MS : parseDay(query.from);
    if (from === null)
      throw new ApiError('invalid_field_range', { data: { params: { from: 'YYYY-MM-DD' } } });
    if (from > to || (to - from) / DAY_MS >= INSTALLED_BASE_RETENTION_DAYS)
      throw new ApiError('invalid_field_range', {
        data: { params: { from: `at most ${INSTALLED_BASE_RETENTION_DAYS} days, not after to` } },
      });
    return { from, to };
  }
}
